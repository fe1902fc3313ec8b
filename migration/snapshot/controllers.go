package snapshot

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// Controller is a Karpenter Deployment, with the release it runs.
type Controller struct {
	Namespace, Name string
	// Version is the release it runs ("v1.15.1"), "" when neither its
	// labels nor its image say.
	Version string
	// From says where Version was read: a label or the image.
	From string
	// Where is file:line for a Deployment read from files.
	Where string
}

// Key is "namespace/name".
func (c Controller) Key() string { return c.Namespace + "/" + c.Name }

// controllerOf reads a Deployment that Karpenter's Helm chart installed
// (karpenter.ChartNameLabel), or reports false for any other.
func controllerOf(o Object) (Controller, bool) {
	if o.Kind() != "Deployment" || o.APIVersion() != "apps/v1" {
		return Controller{}, false
	}
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Content, &d); err != nil {
		return Controller{}, false
	}
	if d.Labels[karpenter.ChartNameLabel] != karpenter.ChartName {
		return Controller{}, false
	}
	c := Controller{Namespace: d.Namespace, Name: d.Name, Where: o.Where()}
	if v, err := release.ParseVersion(d.Labels[karpenter.ChartVersionLabel]); err == nil && v.Patch >= 0 {
		c.Version, c.From = v.String(), "label "+karpenter.ChartVersionLabel
		return c, true
	}
	for _, container := range d.Spec.Template.Spec.Containers {
		if v, ok := imageVersion(container.Image); ok {
			c.Version, c.From = v, "image "+container.Image
			break
		}
	}
	return c, true
}

// imageVersion reads the release from an image's tag:
// ".../karpenter/controller:1.15.1@sha256:..." is v1.15.1.
func imageVersion(image string) (string, bool) {
	image, _, _ = strings.Cut(image, "@")
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return "", false
	}
	v, err := release.ParseVersion(image[i+1:])
	if err != nil || v.Patch < 0 {
		return "", false
	}
	return v.String(), true
}

// readControllers lists the Deployments Karpenter's chart installed, in
// every namespace.
func readControllers(ctx context.Context, c client.Reader) ([]Controller, error) {
	var list unstructured.UnstructuredList
	list.SetAPIVersion("apps/v1")
	list.SetKind("DeploymentList")
	if err := c.List(ctx, &list, client.MatchingLabels{karpenter.ChartNameLabel: karpenter.ChartName}); err != nil {
		return nil, fmt.Errorf("listing Deployments labelled %s=%s: %w", karpenter.ChartNameLabel, karpenter.ChartName, err)
	}
	var out []Controller
	for _, item := range list.Items {
		if ctrl, ok := controllerOf(Object{Content: item.Object}); ok {
			out = append(out, ctrl)
		}
	}
	return out, nil
}

// otherKindCRDNames are the CRDs of kinds some known release serves beyond
// karpenter.Kinds (NodeOverlay, CapacityBuffer, ...): which of them a
// cluster has tells its release apart, and an upgrade may need them first.
func otherKindCRDNames() []string {
	seen := map[string]bool{}
	for _, k := range karpenter.Kinds {
		seen[k.CRDName()] = true
	}
	var names []string
	for _, r := range release.Known() {
		for _, k := range r.Facts.Schema.Kinds {
			if name := k.Plural + "." + k.Group; !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	return names
}
