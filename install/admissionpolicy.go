package install

import (
	"fmt"
	"maps"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/twin"
)

// paramsAnnotations mark the parameter objects as karpgate serve's once it
// runs: it rewrites their data from the karpgate.yaml it loads and the
// Karpenter release it judges. Flux creates them and leaves them to it;
// other GitOps tools should ignore their data (docs/admission-policy.md).
var paramsAnnotations = map[string]string{"kustomize.toolkit.fluxcd.io/ssa": "IfNotPresent"}

// admissionPolicy is the policy of the rules' CEL twins with its bindings
// and parameter objects (policies/twin, internal/webhookconfig), the
// parameters built from the karpgate.yaml the install ships and the
// newest Karpenter release karpgate knows: karpgate serve rewrites them
// for the cluster's own release when it starts.
func admissionPolicy(opts Options) (*admissionregistrationv1.ValidatingAdmissionPolicy, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, []*corev1.ConfigMap, error) {
	cfg, err := config.Parse(deploy.ConfigKey, []byte(opts.Config))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("install options: the karpgate.yaml to ship: %w", err)
	}
	catalog, err := policies.BuiltinCatalog()
	if err != nil {
		return nil, nil, nil, err
	}
	judged := release.ForRelease(release.Newest(), true, "the newest release karpgate knows")
	objs, _, err := twin.Build(catalog, cfg.WithEnvironment(opts.Environment), judged, opts.Namespace)
	if err != nil {
		return nil, nil, nil, err
	}
	objs.Policy.ObjectMeta = objectMeta(objs.Policy.Name, "")
	for _, b := range objs.Bindings {
		b.ObjectMeta = objectMeta(b.Name, "")
	}
	for _, cm := range objs.Params {
		cm.ObjectMeta = objectMeta(cm.Name, opts.Namespace)
		cm.Annotations = maps.Clone(paramsAnnotations)
	}
	return objs.Policy, objs.Bindings, objs.Params, nil
}
