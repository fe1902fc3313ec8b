package snapshot

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/kubelist"
)

var (
	crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: kindCRD}
	// Both webhook configuration kinds, listed in this order.
	webhookGVKs = []schema.GroupVersionKind{
		{Group: "admissionregistration.k8s.io", Version: "v1", Kind: kindValidatingWebhook},
		{Group: "admissionregistration.k8s.io", Version: "v1", Kind: kindMutatingWebhook},
	}
)

// FromCluster reads a cluster through c; host names it in the report. Only
// an error that makes the whole snapshot meaningless (the CRDs cannot be
// read) is returned; anything else unreadable is recorded.
func FromCluster(ctx context.Context, c client.Reader, host string, pageSize int64) (*Snapshot, error) {
	s := newSnapshot("cluster "+host, true)
	for _, kind := range karpenter.Kinds {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(crdGVK)
		err := c.Get(ctx, client.ObjectKey{Name: kind.CRDName()}, crd)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading CustomResourceDefinition %s: %w", kind.CRDName(), err)
		}
		s.add(Object{Content: crd.Object})
		version, ok := ReadableVersion(crd.Object)
		if !ok {
			s.Unreadable = append(s.Unreadable, Unreadable{What: kind.Kind + "s", Err: fmt.Errorf("CRD %s serves neither %s nor %s", kind.CRDName(), karpenter.V1, karpenter.V1Beta1)})
			continue
		}
		err = kubelist.Pages(ctx, c, kind.GroupVersionKind(version), pageSize, func(p kubelist.Page) error {
			for _, item := range p.Items {
				s.add(Object{Content: item.Object})
			}
			return nil
		})
		if err != nil {
			s.Unreadable = append(s.Unreadable, Unreadable{What: fmt.Sprintf("%ss at %s/%s", kind.Kind, kind.Group, version), Err: err})
		}
	}
	for _, name := range otherKindCRDNames() {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(crdGVK)
		switch err := c.Get(ctx, client.ObjectKey{Name: name}, crd); {
		case apierrors.IsNotFound(err):
		case err != nil:
			s.Unreadable = append(s.Unreadable, Unreadable{What: "CustomResourceDefinition " + name, Err: err})
		default:
			s.add(Object{Content: crd.Object})
		}
	}
	// Without the Deployment preflight still has the CRDs to tell the
	// release by: not an Unreadable, which would block the upgrade.
	s.Controllers, s.ControllersErr = readControllers(ctx, c)
	for _, gvk := range webhookGVKs {
		err := kubelist.Pages(ctx, c, gvk, pageSize, func(p kubelist.Page) error {
			for _, item := range p.Items {
				s.add(Object{Content: item.Object})
			}
			return nil
		})
		if err != nil {
			s.Unreadable = append(s.Unreadable, Unreadable{What: gvk.Kind + "s", Err: err})
		}
	}
	for _, svc := range s.referencedServices() {
		s.Services[svc.Key()] = lookUpService(ctx, c, svc)
	}
	return s, nil
}

// ReadableVersion is the version to read a CRD's objects at: v1 when the
// CRD serves it, else v1beta1.
func ReadableVersion(crd map[string]any) (string, bool) {
	served := map[string]bool{}
	versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		if ok, _ := m["served"].(bool); ok {
			served[name] = true
		}
	}
	for _, v := range []string{karpenter.V1, karpenter.V1Beta1} {
		if served[v] {
			return v, true
		}
	}
	return "", false
}

// referencedServices lists, sorted, the Services named by the CRDs'
// conversion stanzas and the webhook configurations.
func (s *Snapshot) referencedServices() []Service {
	seen := map[string]Service{}
	add := func(ref map[string]any) {
		ns, _ := ref["namespace"].(string)
		name, _ := ref["name"].(string)
		if name != "" {
			svc := Service{Namespace: ns, Name: name}
			seen[svc.Key()] = svc
		}
	}
	for _, crd := range s.CRDs {
		if ref, found, _ := unstructured.NestedMap(crd.Content, "spec", "conversion", "webhook", "clientConfig", "service"); found {
			add(ref)
		}
	}
	for _, w := range s.Webhooks {
		hooks, _, _ := unstructured.NestedSlice(w.Content, "webhooks")
		for _, h := range hooks {
			m, _ := h.(map[string]any)
			if ref, found, _ := unstructured.NestedMap(m, "clientConfig", "service"); found {
				add(ref)
			}
		}
	}
	out := make([]Service, 0, len(seen))
	for _, svc := range seen {
		out = append(out, svc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// lookUpService finds whether a Service exists and how many of its
// endpoints are ready. Known stays false when it cannot be read.
func lookUpService(ctx context.Context, c client.Reader, svc Service) Service {
	var s corev1.Service
	err := c.Get(ctx, client.ObjectKey{Namespace: svc.Namespace, Name: svc.Name}, &s)
	switch {
	case apierrors.IsNotFound(err):
		svc.Known = true
		return svc
	case err != nil:
		return svc
	}
	svc.Exists = true
	var slices discoveryv1.EndpointSliceList
	if err := c.List(ctx, &slices, client.InNamespace(svc.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: svc.Name}); err != nil {
		return svc
	}
	svc.Known = true
	for _, slice := range slices.Items {
		for _, e := range slice.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				svc.ReadyEndpoints++
			}
		}
	}
	return svc
}
