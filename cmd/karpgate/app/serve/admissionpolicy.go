package serve

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/policies/twinsync"
)

// setupAdmissionPolicy returns the syncer of the twins' parameters, or nil
// without --admission-policy.
func setupAdmissionPolicy(opts Options, engines twinsync.Engines) (*twinsync.Syncer, error) {
	if !opts.AdmissionPolicy {
		return nil, nil
	}
	c, err := client.New(opts.RestConfig, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("a client for the twins' parameters (--admission-policy): %w", err)
	}
	ns := opts.AdmissionPolicyNamespace
	if ns == "" {
		ns = PodNamespace()
	}
	return twinsync.New(twinsync.Options{Client: c, Engines: engines, Namespace: ns, Log: opts.Log.WithName("admission-policy")}), nil
}
