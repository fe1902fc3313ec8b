package controlplane

import (
	"bytes"
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/internal/manifest"
)

// ParseCRDs decodes every CustomResourceDefinition in a YAML stream and fails
// on any other kind, so that a wrong file is noticed at once.
func ParseCRDs(name string, data []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	err := manifest.ParseStream(name, bytes.NewReader(data), func(d *manifest.Document) error {
		for _, obj := range d.Objects {
			if obj.Kind() != "CustomResourceDefinition" {
				return fmt.Errorf("%s: not a CustomResourceDefinition", obj.Ref())
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Content, crd); err != nil {
				return fmt.Errorf("%s: %w", obj.Ref(), err)
			}
			crds = append(crds, crd)
		}
		return nil
	})
	return crds, err
}

// LoadCRDSets reads and decodes the CRDs of the given pinned sets, in order.
func LoadCRDSets(ctx context.Context, sets ...crdsource.Set) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var all []*apiextensionsv1.CustomResourceDefinition
	for _, set := range sets {
		files, err := crdsource.Files(ctx, set)
		if err != nil {
			return nil, fmt.Errorf("CRD set %s: %w", set, err)
		}
		for _, f := range files {
			crds, err := ParseCRDs(f.Name, f.Data)
			if err != nil {
				return nil, fmt.Errorf("CRD set %s: %w", set, err)
			}
			all = append(all, crds...)
		}
	}
	return all, nil
}
