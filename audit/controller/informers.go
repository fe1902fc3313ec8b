package controller

import (
	"fmt"
	"strings"

	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/karpgate/karpgate/audit/report"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// audited is one kind the audit watches, at the version the API server
// prefers.
type audited struct {
	kind     string
	mapping  *meta.RESTMapping
	informer cache.SharedIndexInformer
}

// servedKinds are the Karpenter kinds the cluster serves: those karpgate
// knows, whatever release of Karpenter is installed.
func servedKinds(mapper meta.RESTMapper) ([]audited, error) {
	var out []audited
	for _, k := range karpenter.Kinds {
		m, err := mapper.RESTMapping(schema.GroupKind{Group: k.Group, Kind: k.Kind})
		switch {
		case meta.IsNoMatchError(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("looking up %s: %w", k.Kind, err)
		}
		out = append(out, audited{kind: k.Kind, mapping: m})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the cluster serves none of Karpenter's kinds: install Karpenter's CRDs, or turn the audit off (--audit=false)")
	}
	return out, nil
}

// reportsServed reports whether the openreports.io CRDs are installed.
func reportsServed(mapper meta.RESTMapper) (*meta.RESTMapping, bool, error) {
	m, err := mapper.RESTMapping(schema.GroupKind{Group: orv1.GroupName, Kind: "ClusterReport"}, orv1.SchemeGroupVersion.Version)
	switch {
	case meta.IsNoMatchError(err):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return m, true, nil
}

// informerObjects reads the stored objects from the informers.
type informerObjects []audited

func (o informerObjects) Get(k string) (*Stored, bool) {
	kind, name, _ := strings.Cut(k, "/")
	for _, a := range o {
		if a.kind != kind {
			continue
		}
		obj, exists, err := a.informer.GetStore().GetByKey(name)
		if err != nil || !exists {
			return nil, false
		}
		s, ok := obj.(*Stored)
		return s, ok
	}
	return nil, false
}

func (o informerObjects) Keys() []string {
	var out []string
	for _, a := range o {
		for _, name := range a.informer.GetStore().ListKeys() {
			out = append(out, key(a.kind, name))
		}
	}
	return out
}

// informerReports reads the stored reports from their informer.
type informerReports struct{ informer cache.SharedIndexInformer }

func (r informerReports) Get(name string) (*StoredReport, bool) {
	obj, exists, err := r.informer.GetStore().GetByKey(name)
	if err != nil || !exists {
		return nil, false
	}
	rep, ok := obj.(*StoredReport)
	return rep, ok
}

func (r informerReports) Names() []string { return r.informer.GetStore().ListKeys() }

func (r informerReports) OfObject(k string) []*StoredReport {
	objs, err := r.informer.GetIndexer().ByIndex(byObjectIndex, k)
	if err != nil {
		return nil
	}
	out := make([]*StoredReport, 0, len(objs))
	for _, obj := range objs {
		if rep, ok := obj.(*StoredReport); ok {
			out = append(out, rep)
		}
	}
	return out
}

// byObjectIndex indexes reports by the key of the object they report on.
const byObjectIndex = "object"

func indexByObject(obj any) ([]string, error) {
	if r, ok := obj.(*StoredReport); ok && r.Scope != nil {
		return []string{key(r.Scope.Kind, r.Scope.Name)}, nil
	}
	return nil, nil
}

// StoredReport is a report as the audit's cache keeps it: its identity and
// scope, and its digest (see report.Digest).
type StoredReport struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Scope  *corev1.ObjectReference
	Digest report.Digest
}

// DeepCopyObject shares the digest, which is never written after
// DigestReport.
func (r *StoredReport) DeepCopyObject() runtime.Object {
	c := *r
	c.ObjectMeta = *r.ObjectMeta.DeepCopy()
	return &c
}

// DigestReport is the reports informer's transform.
func DigestReport(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	r := &orv1.ClusterReport{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, r); err != nil {
		return nil, err
	}
	return digested(r), nil
}

func digested(r *orv1.ClusterReport) *StoredReport {
	return &StoredReport{
		TypeMeta:   r.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: r.Name, UID: r.UID, ResourceVersion: r.ResourceVersion},
		Scope:      r.Scope,
		Digest:     report.DigestOf(r),
	}
}

// onlyKarpgateReports lists and watches only the reports karpgate writes.
func onlyKarpgateReports(o *metav1.ListOptions) {
	o.LabelSelector = labels.SelectorFromSet(report.Selector).String()
}
