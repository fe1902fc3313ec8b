package karpenterstack

import (
	"fmt"
	"strings"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// Release is a Karpenter release the stack runs: its kwok provider, the CRDs
// the control plane installs for it, and what differs in running it.
type Release struct {
	// Version is sigs.k8s.io/karpenter's, whose kwok provider `make tools`
	// builds into bin/karpenter/<Version>/ from the build-only module of
	// that release (hack/harness for the newest, hack/karpenter-v1.0.8).
	Version string
	// CRDs are the NodePool, NodeClaim and EC2NodeClass CRDs (and the
	// release's other kinds) the control plane installs: the aws provider's,
	// which are what a cluster running this release has.
	CRDs crdsource.Set
	// NodeClass is the KWOKNodeClass CRD of the same core release.
	NodeClass crdsource.Set
	// Converts says the CRDs serve v1beta1 beside v1 through a conversion
	// webhook, which the local cluster points at karpgate.
	Converts bool
	// Settings are Karpenter's own environment variables for this release,
	// on top of the stack's (karpenterSettings).
	Settings map[string]string
}

// The releases the stack runs. binaries_test.go keeps them equal to the
// Makefile's KARPENTER_VERSIONS and the pins under hack/.
var (
	// V1_15_0 is the newest core release the Go module proxy serves
	// (v1.15.1 is listed, but its zip is refused), on the CRDs of
	// karpenter-provider-aws v1.15.1, which serve only v1. Node repair runs
	// as a disruption method paced by Unhealthy budgets, and static
	// NodePools keep their replicas: both are feature gates, off by default,
	// that the stack turns on so that every budget reason and explain's
	// static pools can be seen live.
	V1_15_0 = Release{
		Version: "v1.15.0", CRDs: crdsource.KarpenterV1_15_1, NodeClass: crdsource.KarpenterKwokV1_15_0,
		Settings: map[string]string{"FEATURE_GATES": "NodeRepair=true,StaticCapacity=true"},
	}
	// V1_0_8 is the last release whose CRDs serve v1beta1 and v1: the
	// migration story, with conversion through karpgate. Its own webhooks
	// are off so that every v1beta1 read goes through karpgate's.
	V1_0_8 = Release{
		Version: "v1.0.8", CRDs: crdsource.KarpenterV1_0_8, NodeClass: crdsource.KarpenterKwokV1_0_8,
		Converts: true,
		Settings: map[string]string{"DISABLE_WEBHOOK": "true"},
	}
)

// Releases lists every release the stack runs, newest first.
var Releases = []Release{V1_15_0, V1_0_8}

// Newest is the release `make run` and the tests run unless told otherwise.
var Newest = Releases[0]

// FindRelease returns the release of version ("v1.0.8", "1.0.8"), or an
// error that lists the releases there are.
func FindRelease(version string) (Release, error) {
	v := strings.TrimSpace(version)
	if v != "" && !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	var known []string
	for _, r := range Releases {
		if r.Version == v {
			return r, nil
		}
		known = append(known, r.Version)
	}
	return Release{}, fmt.Errorf("version %q: the local cluster runs Karpenter %s; pick one of them", version, strings.Join(known, " or "))
}

// String is the version, "v1.15.0".
func (r Release) String() string { return r.Version }
