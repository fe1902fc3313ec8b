package preflight

import (
	"fmt"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// Target is the Karpenter release an upgrade goes to, with the facts of
// the known release that stands for it (internal/karpenter/release).
type Target struct {
	// display is the canonical semver the user named, pre-release
	// included ("v2.0.0-rc.1"); version is its release.
	display string
	version release.Version
	// facts is the known release whose facts judge the target; exact is
	// false when the target is a release karpgate has no facts of (a patch
	// between known ones, or one newer than every known release).
	facts release.Release
	exact bool
}

// ParseTarget reads "1.1", "v1.1.0", "1.15.1". Karpenter before v1.0 is
// not a target preflight knows.
func ParseTarget(s string) (Target, error) {
	display := strings.TrimSpace(s)
	if display != "" && !strings.HasPrefix(display, "v") {
		display = "v" + display
	}
	if !semver.IsValid(display) {
		return Target{}, fmt.Errorf("--to %q: not a Karpenter version; write it like v1.1.0", s)
	}
	display = semver.Canonical(display)
	core := strings.TrimSuffix(strings.TrimSuffix(display, semver.Build(display)), semver.Prerelease(display))
	v, err := release.ParseVersion(core)
	if err != nil {
		return Target{}, fmt.Errorf("--to %q: %w", s, err)
	}
	if v.Compare(release.MustParseVersion("v1.0.0")) < 0 {
		return Target{}, fmt.Errorf("--to %s: preflight checks upgrades to Karpenter v1.0.0 and later", v)
	}
	facts, exact, err := release.LookupVersion(v)
	if err != nil {
		return Target{}, fmt.Errorf("--to %s: %w", v, err)
	}
	return Target{display: display, version: v, facts: facts, exact: exact}, nil
}

// String is the canonical version, "v1.1.0".
func (t Target) String() string { return t.display }

// DropsV1Beta1 is true from v1.1.0 on: only v1 is served, and the
// controller refuses NodePools with the kubelet annotation.
func (t Target) DropsV1Beta1() bool { return t.version.AtLeast("v1.1.0") }

// factsNote says which known release's facts judge a target karpgate has
// none of, "" when it has the target's own.
func (t Target) factsNote() string {
	if t.exact || t.facts.Version.Compare(t.version) == 0 {
		return ""
	}
	return fmt.Sprintf("Karpenter %s is not among the releases karpgate has facts of; it is judged by the nearest, %s", t.display, t.facts.Version)
}
