package budget

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Allowance is how many voluntary disruptions one reason allows.
type Allowance struct {
	// Unlimited: no active budget covers the reason. Count is then 0 and
	// meaningless; karpgate never reports a huge number instead.
	Unlimited bool `json:"unlimited,omitempty"`
	// Count is the number of further nodes that may be disrupted: the
	// binding limit minus the nodes already disrupting, floor 0.
	Count int `json:"count"`
	// Limit is the binding budgets' node count before disrupting nodes are
	// subtracted.
	Limit int `json:"limit"`
	// Blocked: Karpenter fails closed because a budget is invalid, and every
	// reason of the NodePool allows zero. Cause says why.
	Blocked bool   `json:"blocked,omitempty"`
	Cause   string `json:"cause,omitempty"`
	// Binding lists the indexes of the budgets that set the allowance: those
	// with the smallest limit, or those that block. Empty when unlimited.
	Binding []int `json:"binding,omitempty"`
}

// Same reports whether a and b say the same thing, so that a timeline can
// merge adjacent stretches.
func (a Allowance) Same(b Allowance) bool {
	return a.Unlimited == b.Unlimited && a.Count == b.Count && a.Limit == b.Limit &&
		a.Blocked == b.Blocked && a.Cause == b.Cause && slices.Equal(a.Binding, b.Binding)
}

func (a Allowance) String() string {
	switch {
	case a.Blocked:
		return "blocked (0)"
	case a.Unlimited:
		return "unlimited"
	default:
		return fmt.Sprint(a.Count)
	}
}

// Set is a NodePool's budgets compiled once, for the reasons of one
// Karpenter release. It is immutable and safe for concurrent use.
type Set struct {
	budgets []*Compiled
	reasons []Reason
}

// CompileSet parses every budget of a NodePool once, for the reasons of the
// newest Karpenter release (Reasons).
func CompileSet(budgets []Budget) *Set {
	return CompileSetFor(Reasons, budgets)
}

// CompileSetFor parses every budget of a NodePool once, for a release whose
// budgets can name reasons (see ReasonsOf): every answer of the set covers
// those reasons, in that order.
func CompileSetFor(reasons []Reason, budgets []Budget) *Set {
	s := &Set{budgets: make([]*Compiled, len(budgets)), reasons: reasons}
	for i, b := range budgets {
		s.budgets[i] = Compile(b)
	}
	return s
}

// Budgets returns the compiled budgets in spec order.
func (s *Set) Budgets() []*Compiled { return s.budgets }

// Reasons returns the reasons the set answers for, in Karpenter's order.
func (s *Set) Reasons() []Reason { return s.reasons }

// Allowed returns the allowance of every reason at now. See Set.Allowed.
func Allowed(budgets []Budget, counts Counts, now time.Time) (map[Reason]Allowance, error) {
	return CompileSet(budgets).Allowed(counts, now)
}

// Allowed returns the allowance of every reason at now for a NodePool with
// counts. The error is only for counts that cannot be; invalid budgets show
// as Blocked allowances.
func (s *Set) Allowed(counts Counts, now time.Time) (map[Reason]Allowance, error) {
	if err := counts.Check(); err != nil {
		return nil, err
	}
	active := make([]bool, len(s.budgets))
	for i, c := range s.budgets {
		active[i] = c.Active(now)
	}
	out := make(map[Reason]Allowance, len(s.reasons))
	for _, r := range s.reasons {
		out[r] = s.allowance(r, active, counts)
	}
	return out, nil
}

// allowance is the one place where Karpenter's rule is applied, given which
// budgets are active: any failing budget blocks every reason; otherwise the
// minimum limit over the active budgets covering r, minus the nodes using
// up r's budget, floor 0.
func (s *Set) allowance(r Reason, active []bool, counts Counts) Allowance {
	var a Allowance
	var causes []string
	for i, c := range s.budgets {
		cause := c.blocked
		if cause == "" && active[i] && c.nodesErr != "" {
			cause = c.nodesErr
		}
		if cause != "" {
			a.Binding = append(a.Binding, c.Index)
			causes = append(causes, cause)
		}
	}
	if len(causes) > 0 {
		a.Blocked, a.Cause = true, strings.Join(causes, "; ")
		return a
	}
	a.Unlimited = true
	for i, c := range s.budgets {
		if !active[i] || !c.appliesTo(r) {
			continue
		}
		limit, _ := c.Limit(counts.Nodes) // nodesErr was handled above
		switch {
		case a.Unlimited || limit < a.Limit:
			a.Unlimited, a.Limit, a.Binding = false, limit, []int{c.Index}
		case limit == a.Limit:
			a.Binding = append(a.Binding, c.Index)
		}
	}
	if !a.Unlimited {
		a.Count = max(a.Limit-counts.Consuming(r), 0)
	}
	return a
}
