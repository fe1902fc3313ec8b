package clusterread

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/kubelist"
	"github.com/karpgate/karpgate/lint"
)

// Result is what was read.
type Result struct {
	// Documents are the objects, kind by kind in karpgate's order, then by
	// name.
	Documents []lint.Document
	// Kinds are the kinds read, at the version read ("NodePool
	// (karpenter.sh/v1)").
	Kinds []string
}

// Objects reads every Karpenter object of the cluster c reaches.
func Objects(ctx context.Context, c client.Reader, mapper meta.RESTMapper, pageSize int64) (Result, error) {
	var r Result
	for _, k := range karpenter.Kinds {
		m, err := mapper.RESTMapping(schema.GroupKind{Group: k.Group, Kind: k.Kind})
		switch {
		case meta.IsNoMatchError(err):
			continue
		case err != nil:
			return r, fmt.Errorf("looking up %s: %w", k.Kind, err)
		}
		r.Kinds = append(r.Kinds, fmt.Sprintf("%s (%s)", k.Kind, m.GroupVersionKind.GroupVersion()))
		err = kubelist.Pages(ctx, c, m.GroupVersionKind, pageSize, func(p kubelist.Page) error {
			for i := range p.Items {
				d, err := Document(&p.Items[i])
				if err != nil {
					return err
				}
				r.Documents = append(r.Documents, d)
			}
			return nil
		})
		if err != nil {
			return r, err
		}
	}
	if len(r.Kinds) == 0 {
		return r, fmt.Errorf("the cluster serves none of Karpenter's kinds (%s); is Karpenter installed?", kindNames())
	}
	return r, nil
}

// Document renders one object as kubectl's YAML output does, named as
// kubectl names it.
func Document(u *unstructured.Unstructured) (lint.Document, error) {
	u = u.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	data, err := yaml.Marshal(u.Object)
	if err != nil {
		return lint.Document{}, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
	return lint.Document{Name: strings.ToLower(u.GetKind()) + "." + gv.Group + "/" + u.GetName(), Data: data}, nil
}

func kindNames() string {
	names := make([]string, len(karpenter.Kinds))
	for i, k := range karpenter.Kinds {
		names[i] = k.Kind
	}
	return strings.Join(names, ", ")
}
