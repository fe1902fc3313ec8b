package crdschema

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karpgate/karpgate/internal/manifest"
)

const crdAPIVersion = "apiextensions.k8s.io/v1"

// ParseCRDs decodes the CustomResourceDefinitions in a YAML or JSON stream
// (several documents, List kinds such as `kubectl get crd -o yaml` writes).
// Other kinds are skipped, so `helm template` output can be read whole; a
// CRD of an older API, or one that does not decode, is an error naming it.
func ParseCRDs(name string, data []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	err := manifest.ParseStream(name, bytes.NewReader(data), func(d *manifest.Document) error {
		for _, obj := range d.Objects {
			if obj.Kind() != "CustomResourceDefinition" {
				continue
			}
			if obj.APIVersion() != crdAPIVersion {
				return fmt.Errorf("%s: apiVersion %q: only %s CRDs are served since Kubernetes 1.22", obj.Ref(), obj.APIVersion(), crdAPIVersion)
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Content, crd); err != nil {
				return fmt.Errorf("%s: %w", obj.Ref(), err)
			}
			crds = append(crds, crd)
		}
		return nil
	})
	if err != nil {
		if bytes.Contains(data, []byte("{{")) {
			return nil, fmt.Errorf("%w\n%s looks like a Helm template: render it first, e.g. `helm template karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --version <version> > crds.yaml`, or point --crds at the karpenter chart's crds/ folder", err, manifest.DisplayName(name))
		}
		return nil, err
	}
	return crds, nil
}

// LoadFiles reads the CRDs in files and folders (recursively: .yaml, .yml
// and .json) into a Set named after them.
func LoadFiles(paths []string) (*Set, error) {
	sources, err := manifest.ExpandInputs(paths)
	if err != nil {
		return nil, err
	}
	var all []*apiextensionsv1.CustomResourceDefinition
	for _, source := range sources {
		if source == manifest.StdinName {
			return nil, errors.New("--crds: standard input holds the manifests to lint; give CRD files or folders")
		}
		data, err := os.ReadFile(source)
		if err != nil {
			return nil, err
		}
		crds, err := ParseCRDs(source, data)
		if err != nil {
			return nil, err
		}
		all = append(all, crds...)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("--crds %s: no CustomResourceDefinition found", strings.Join(paths, ", "))
	}
	return New("files "+strings.Join(paths, ", "), all)
}
