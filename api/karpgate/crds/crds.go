// Package crds holds the CRDs of karpgate's own API, generated from the Go
// types in api/karpgate/v1alpha1 by hack/apigen, and decodes them into
// typed objects: install/ writes them into the manifests, and the test
// clusters install them.
package crds

import (
	_ "embed"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed karpgate.io_rolloutplans.yaml
var rolloutPlans []byte

// RolloutPlans returns a fresh copy of the RolloutPlan CRD.
func RolloutPlans() *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(rolloutPlans, crd); err != nil {
		panic(fmt.Sprintf("the embedded RolloutPlan CRD does not decode (run `make generate`): %v", err))
	}
	crd.APIVersion, crd.Kind = apiextensionsv1.SchemeGroupVersion.String(), "CustomResourceDefinition"
	return crd
}

// All returns every CRD of karpgate's API.
func All() []*apiextensionsv1.CustomResourceDefinition {
	return []*apiextensionsv1.CustomResourceDefinition{RolloutPlans()}
}
