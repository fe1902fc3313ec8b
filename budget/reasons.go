package budget

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter"
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
// in Karpenter's order. Older releases know a prefix of it: see ReasonsOf.
var Reasons = []Reason{Underutilized, Empty, Drifted, Unhealthy}

// reasonsBeforeV1_15 are the reasons of Karpenter v1.0 to v1.14.
var reasonsBeforeV1_15 = Reasons[:3:3]

// ReasonsOf returns the reasons a budget can name in a Karpenter release
// ("v1.15", "v1.0.8", "1.14"): Unhealthy from v1.15 on.
func ReasonsOf(version string) ([]Reason, error) {
	v := strings.TrimPrefix(version, "v")
	major, rest, _ := strings.Cut(v, ".")
	minorText, _, _ := strings.Cut(rest, ".")
	minor, err := strconv.Atoi(minorText)
	if major != "1" || err != nil || minor < 0 {
		return nil, fmt.Errorf("not a Karpenter version: %q; write v1.MINOR, such as v1.15 or v1.0.8", version)
	}
	if minor < 15 {
		return reasonsBeforeV1_15, nil
	}
	return Reasons, nil
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
