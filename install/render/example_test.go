package render_test

import (
	"fmt"

	"github.com/karpgate/karpgate/install"
	"github.com/karpgate/karpgate/install/render"
)

// The kustomize tree: one file per kind (the rules' CEL twins among them),
// an overlay that adds cert-manager
// and patches Karpenter's CRDs, and a monitoring component with an overlay
// that adds it.
func ExampleKustomize() {
	tree, err := render.Kustomize(install.Defaults())
	if err != nil {
		panic(err)
	}
	for _, p := range tree.Paths() {
		fmt.Println(p)
	}
	// Output:
	// base/clusterrole.yaml
	// base/clusterrolebinding.yaml
	// base/configmap.yaml
	// base/customresourcedefinition.yaml
	// base/deployment.yaml
	// base/kustomization.yaml
	// base/mutatingwebhookconfiguration.yaml
	// base/namespace.yaml
	// base/networkpolicy.yaml
	// base/poddisruptionbudget.yaml
	// base/role.yaml
	// base/rolebinding.yaml
	// base/service.yaml
	// base/serviceaccount.yaml
	// base/validatingadmissionpolicy.yaml
	// base/validatingadmissionpolicybinding.yaml
	// base/validatingwebhookconfiguration.yaml
	// components/monitoring/configmap.yaml
	// components/monitoring/kustomization.yaml
	// components/monitoring/prometheusrule.yaml
	// components/monitoring/servicemonitor.yaml
	// overlays/cert-manager/certificate.yaml
	// overlays/cert-manager/customresourcedefinition.yaml
	// overlays/cert-manager/issuer.yaml
	// overlays/cert-manager/kustomization.yaml
	// overlays/cert-manager/mutatingwebhookconfiguration.yaml
	// overlays/cert-manager/validatingwebhookconfiguration.yaml
	// overlays/monitoring/kustomization.yaml
}
