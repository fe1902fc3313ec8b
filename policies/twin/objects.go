package twin

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/internal/webhookconfig"
	"github.com/karpgate/karpgate/policies"
)

// Objects are what the API server needs to enforce the twins: the
// policy, its bindings and their parameter objects.
type Objects struct {
	Policy   *admissionregistrationv1.ValidatingAdmissionPolicy
	Bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	Params   []*corev1.ConfigMap
}

// Build makes the objects for the twins of catalog, with parameters from
// cfg and the release judged, the bindings' parameters in namespace.
func Build(catalog policies.Catalog, cfg *config.Config, judged release.Judged, namespace string) (Objects, []Twin, error) {
	twins, err := Load(catalog)
	if err != nil {
		return Objects{}, nil, err
	}
	spec, err := NewSpec(twins)
	if err != nil {
		return Objects{}, nil, err
	}
	params, err := ParamObjects(cfg, judged, catalog, twins, namespace)
	if err != nil {
		return Objects{}, nil, err
	}
	return Objects{
		Policy:   webhookconfig.AdmissionPolicy(spec),
		Bindings: webhookconfig.AdmissionPolicyBindings(namespace),
		Params:   params,
	}, twins, nil
}

// ForEngine is Build for what an engine judges by: its catalog,
// configuration and Karpenter release.
func ForEngine(e *policies.Engine, namespace string) (Objects, []Twin, error) {
	return Build(e.Catalog(), e.Config(), e.Karpenter(), namespace)
}

// ParamObjects are the parameter objects of every binding.
func ParamObjects(cfg *config.Config, judged release.Judged, catalog policies.Catalog, twins []Twin, namespace string) ([]*corev1.ConfigMap, error) {
	out := make([]*corev1.ConfigMap, 0, len(Actions))
	for _, a := range Actions {
		cm, err := webhookconfig.AdmissionPolicyParams(namespace, string(a), Params(cfg, judged, catalog, twins, a))
		if err != nil {
			return nil, err
		}
		out = append(out, cm)
	}
	return out, nil
}
