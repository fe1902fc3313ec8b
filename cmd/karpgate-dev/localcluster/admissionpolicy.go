package localcluster

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/twin"
)

// installAdmissionPolicy creates what the install manifests create for
// the rules' CEL twins, with the same objects (policies/twin): namespace
// karpgate, the policy, its bindings and their parameters from the local
// karpgate.yaml and the newest Karpenter release; karpgate serve then
// keeps the parameters in step, as in a cluster.
func installAdmissionPolicy(ctx context.Context, cfg *rest.Config, karpgateYAML string) error {
	k, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	parsed, err := config.Parse(deploy.ConfigKey, []byte(karpgateYAML))
	if err != nil {
		return err
	}
	catalog, err := policies.BuiltinCatalog()
	if err != nil {
		return err
	}
	objs, _, err := twin.Build(catalog, parsed, release.ForRelease(release.Newest(), true, "newest"), deploy.Namespace)
	if err != nil {
		return err
	}
	all := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: deploy.Namespace}}}
	for _, p := range objs.Params {
		all = append(all, p)
	}
	all = append(all, objs.Policy)
	for _, b := range objs.Bindings {
		all = append(all, b)
	}
	for _, obj := range all {
		if err := k.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("installing the twins' %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}
	return nil
}

// waitForAdmissionPolicy waits until the API server enforces the twins:
// its policy informers load them a moment after they are created. The
// probe is a dry-run production EC2NodeClass on @latest, which KG101's
// twin refuses when karpgate.yaml leaves KG101 denying at admission;
// otherwise there is nothing to wait on that a write would show.
func waitForAdmissionPolicy(ctx context.Context, cfg *rest.Config, karpgateYAML string) error {
	parsed, err := config.Parse(deploy.ConfigKey, []byte(karpgateYAML))
	if err != nil {
		return err
	}
	if !parsed.Enabled("KG101") || parsed.ActionFor("KG101", config.Deny, config.Admission) != config.Deny ||
		len(parsed.Production.Labels) == 0 || len(parsed.Production.Values) == 0 {
		return nil
	}
	k, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": karpenter.AWSGroup + "/" + karpenter.V1, "kind": karpenter.KindEC2NodeClass,
		"metadata": map[string]any{"name": probeName, "labels": map[string]any{parsed.Production.Labels[0]: parsed.Production.Values[0]}},
		"spec": map[string]any{
			"role": "KarpenterNodeRole", "amiSelectorTerms": []any{map[string]any{"alias": "al2023@latest"}},
			"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "probe"}}},
			"securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "probe"}}},
		},
	}}
	return waitFor(ctx, "the API server to enforce the twins' ValidatingAdmissionPolicy", func() error {
		err := k.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		if err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+deploy.AdmissionPolicyName+"'") {
			return nil
		}
		return fmt.Errorf("a production EC2NodeClass on @latest got %w", err)
	})
}
