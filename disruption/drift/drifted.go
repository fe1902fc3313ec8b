package drift

import (
	"sort"
	"time"

	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Summary is the drift Karpenter has already noticed in one NodePool.
type Summary struct {
	// Total counts NodeClaims whose Drifted condition is True.
	Total int `json:"total"`
	// ByReason counts them by the condition's reason (AMIDrift, ...).
	ByReason map[string]int `json:"byReason,omitempty"`
	// OldestSince is the earliest transition to Drifted=True; nil when
	// nothing has drifted.
	OldestSince *time.Time `json:"oldestSince,omitempty"`
	// OldestNodeClaim is the NodeClaim that has been drifted longest.
	OldestNodeClaim string `json:"oldestNodeClaim,omitempty"`
}

// Summarize counts the drifted NodeClaims among claims.
func Summarize(claims []*state.NodeClaim) Summary {
	var s Summary
	for _, nc := range claims {
		c := nc.Condition(karpenter.ConditionDrifted)
		if !c.IsTrue() {
			continue
		}
		s.Total++
		if s.ByReason == nil {
			s.ByReason = map[string]int{}
		}
		s.ByReason[c.Reason]++
		since := c.LastTransitionTime.UTC()
		if s.OldestSince == nil || since.Before(*s.OldestSince) || (since.Equal(*s.OldestSince) && nc.Name < s.OldestNodeClaim) {
			s.OldestSince, s.OldestNodeClaim = &since, nc.Name
		}
	}
	return s
}

// Reasons returns the drift reasons in s, sorted.
func (s Summary) Reasons() []string {
	out := make([]string, 0, len(s.ByReason))
	for r := range s.ByReason {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}
