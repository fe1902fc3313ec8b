package install

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/karpgate/karpgate/api/karpgate/crds"
)

// customResourceDefinitions are the CRDs of karpgate's own API (the
// RolloutPlan), generated from its Go types (api/karpgate/crds), with the
// install's labels. Helm keeps them on uninstall, as it keeps the
// OpenReports CRDs: deleting a CRD deletes every RolloutPlan, and with it the
// record of which NodePools a half-done rollout still holds.
func customResourceDefinitions() []*apiextensionsv1.CustomResourceDefinition {
	out := crds.All()
	for _, crd := range out {
		labels := map[string]string{}
		for k, v := range Labels {
			labels[k] = v
		}
		crd.Labels = labels
		crd.Annotations = map[string]string{"helm.sh/resource-policy": "keep"}
	}
	return out
}
