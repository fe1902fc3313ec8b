package preflight

import (
	"fmt"
	"strings"

	"golang.org/x/mod/semver"
)

// Target is the Karpenter release an upgrade goes to.
type Target struct {
	version string // canonical semver, "v1.1.0"
}

// The releases whose behaviour the checks depend on.
const (
	firstV1           = "v1.0.0" // v1 API, v1beta1 still served
	firstWithoutBeta1 = "v1.1.0" // v1 only; panics on the kubelet annotation
)

// ParseTarget reads "1.1", "v1.1.0", "1.15.1". Karpenter before v1.0 is
// not a target preflight knows.
func ParseTarget(s string) (Target, error) {
	v := strings.TrimSpace(s)
	if v != "" && !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	if !semver.IsValid(v) {
		return Target{}, fmt.Errorf("--to %q: not a Karpenter version; write it like v1.1.0", s)
	}
	v = semver.Canonical(v)
	if semver.Compare(v, firstV1) < 0 {
		return Target{}, fmt.Errorf("--to %s: preflight checks upgrades to Karpenter v1.0.0 and later", v)
	}
	return Target{version: v}, nil
}

// String is the canonical version, "v1.1.0".
func (t Target) String() string { return t.version }

// DropsV1Beta1 is true from v1.1.0 on: only v1 is served, and the
// controller refuses NodePools with the kubelet annotation.
func (t Target) DropsV1Beta1() bool { return semver.Compare(t.version, firstWithoutBeta1) >= 0 }
