package budget

import (
	"slices"
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// Reason is a voluntary disruption reason a v1 budget can name.
type Reason string

// The reasons, spelled as the v1 API spells them (case matters).
const (
	Underutilized Reason = karpenter.ReasonUnderutilized
	Empty         Reason = karpenter.ReasonEmpty
	Drifted       Reason = karpenter.ReasonDrifted
	// Unhealthy paces node repair (Karpenter v1.15 and later): a node whose
	// conditions match one of the cloud provider's repair policies past
	// its toleration is replaced (or rebooted) within this reason's budget.
	Unhealthy Reason = karpenter.ReasonUnhealthy
)

// Reasons lists the reasons of the newest Karpenter release karpgate knows,
// in Karpenter's order; TestReasonsAreTheNewestRelease keeps it equal to
// that release's facts. Older releases know a prefix of it: see ReasonsOf.
var Reasons = []Reason{Underutilized, Empty, Drifted, Unhealthy}

// ReasonsOf returns the reasons a budget can name in a Karpenter release
// ("v1.15", "v1.0.8", "1.14"), from the release's own CRD enum as
// internal/karpenter/release records it: Unhealthy from v1.15 on. A release
// newer than karpgate knows is judged as the newest.
func ReasonsOf(version string) ([]Reason, error) {
	r, _, err := release.Lookup(version)
	if err != nil {
		return nil, err
	}
	return ReasonsNamed(r.Facts.Schema.BudgetReasons), nil
}

// ReasonsNamed keeps Reasons' order and spelling for the names a release's
// CRD lists.
func ReasonsNamed(names []string) []Reason {
	out := make([]Reason, 0, len(names))
	for _, r := range Reasons {
		if slices.Contains(names, string(r)) {
			out = append(out, r)
		}
	}
	return out
}

// ReasonNames spells reasons for people: "Underutilized, Empty, Drifted
// and Unhealthy".
func ReasonNames(reasons []Reason, conjunction string) string {
	names := make([]string, len(reasons))
	for i, r := range reasons {
		names[i] = string(r)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conjunction + " " + names[len(names)-1]
}

// ReasonsOfJudged are the reasons of the release karpgate judges by, in
// Reasons' order: when the cluster's CRDs chose it, those their NodePool
// CRD lists (the CRDs decide what they state). The disruption loop's lanes
// and status and explain all follow them.
func ReasonsOfJudged(j release.Judged) []Reason {
	return ReasonsNamed(j.Facts.Schema.BudgetReasons)
}
