package app

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/config"
)

// karpenterFlag picks the Karpenter release whose disruption reasons status
// and explain report: --karpenter-version, else karpgate.yaml's
// karpenterVersion (--config; karpgate serve's loop judges by it too), else
// what the cluster's NodePool CRD allows a budget to name, else the newest
// release karpgate knows.
type karpenterFlag struct{ version string }

func (k *karpenterFlag) register(fs *pflag.FlagSet) {
	fs.StringVar(&k.version, "karpenter-version", "", "judge by this Karpenter release, such as v1.14 or v1.15 (default: --config's karpenterVersion, else the budget reasons of the cluster's NodePool CRD)")
}

// reasons returns the reasons and where they came from, for people;
// configPath is --config's karpgate.yaml, or "".
func (k *karpenterFlag) reasons(ctx context.Context, c client.Reader, configPath string) ([]budget.Reason, string, error) {
	if k.version != "" {
		r, err := budget.ReasonsOf(k.version)
		if err != nil {
			return nil, "", &ExitError{Code: ExitUsage, Err: fmt.Errorf("--karpenter-version: %w", err)}
		}
		return r, "--karpenter-version " + k.version, nil
	}
	if configPath != "" {
		cfg, err := config.Load(configPath)
		if err != nil {
			return nil, "", &ExitError{Code: ExitUsage, Err: fmt.Errorf("--config: %w", err)}
		}
		if cfg.KarpenterVersion != "" {
			// Load has checked that karpgate knows the release.
			r, err := budget.ReasonsOf(cfg.KarpenterVersion)
			if err != nil {
				return nil, "", &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s: karpenterVersion: %w", configPath, err)}
			}
			return r, configPath + " karpenterVersion " + cfg.KarpenterVersion, nil
		}
	}
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(budget.CRDKind)
	if err := c.Get(ctx, client.ObjectKey{Name: budget.NodePoolCRDName}, crd); err != nil {
		// Without the CRD (or the right to read it) the newest release's
		// reasons are the best guess; the lanes say which were used.
		return budget.Reasons, "newest", nil //nolint:nilerr // a guess, not a failure
	}
	if r := budget.ReasonsOfCRD(crd.Object); r != nil {
		return r, "the cluster's NodePool CRD", nil
	}
	return budget.Reasons, "newest", nil
}
