package install

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/karpgate/karpgate/api/karpgate/crds"
)

// customResourceDefinitions are the CRDs of karpgate's own API (the
// RolloutPlan), generated from its Go types (api/karpgate/crds), with the
// install's labels.
func customResourceDefinitions() []*apiextensionsv1.CustomResourceDefinition {
	out := crds.All()
	for _, crd := range out {
		labels := map[string]string{}
		for k, v := range Labels {
			labels[k] = v
		}
		crd.Labels = labels
	}
	return out
}
