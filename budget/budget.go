package budget

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultNodes is the CRD default of a budget's nodes, and of the single
// budget a NodePool gets when it writes none.
const DefaultNodes = "10%"

// MaxBudgets is the CRD's maxItems for spec.disruption.budgets.
const MaxBudgets = 50

// Budget is one entry of spec.disruption.budgets as written: strings are kept
// unparsed so that validation can quote exactly what the user wrote.
type Budget struct {
	// Index is the budget's position in spec.disruption.budgets.
	Index int
	Nodes string
	// Schedule and Duration are nil when the field is absent.
	Schedule, Duration *string
	// Reasons nil means every reason of the Karpenter release; empty but
	// not nil means none.
	Reasons []string
	// Defaulted marks the budget the CRD supplies when none is written.
	Defaulted bool
}

// Path is the budget's field path, such as "spec.disruption.budgets[1]".
func (b Budget) Path() string { return budgetsPath + "[" + strconv.Itoa(b.Index) + "]" }

// Name describes the budget for people:
// `budgets[1] (nodes "0", "0 9 * * mon-fri" for 8h, Drifted+Underutilized)`.
func (b Budget) Name() string {
	name := fmt.Sprintf("budgets[%d]", b.Index)
	if b.Defaulted {
		name = "default budget"
	}
	when := "always"
	switch {
	case b.Schedule != nil && b.Duration != nil:
		when = fmt.Sprintf("%q for %s", *b.Schedule, *b.Duration)
	case b.Schedule != nil:
		when = fmt.Sprintf("%q without duration", *b.Schedule)
	case b.Duration != nil:
		when = fmt.Sprintf("duration %s without schedule", *b.Duration)
	}
	reasons := "all reasons"
	switch {
	case b.Reasons == nil:
	case len(b.Reasons) == 0:
		reasons = "no reasons"
	default:
		reasons = strings.Join(b.Reasons, "+")
	}
	return fmt.Sprintf("%s (nodes %q, %s, %s)", name, b.Nodes, when, reasons)
}

// appliesTo reports whether the budget restricts reason r. The match is
// exact, as Karpenter's is: "drifted" covers nothing. A budget that names
// no reasons covers every reason of the release, Unhealthy included from
// v1.15 on (GetAllowedDisruptionsByReason tests Reasons == nil).
func (b Budget) appliesTo(r Reason) bool {
	if b.Reasons == nil {
		return true
	}
	for _, name := range b.Reasons {
		if name == string(r) {
			return true
		}
	}
	return false
}

// DefaultBudgets is what the API server writes when spec.disruption.budgets
// is absent or null.
func DefaultBudgets() []Budget {
	return []Budget{{Index: 0, Nodes: DefaultNodes, Defaulted: true}}
}

// Ptr returns a pointer to s, for building budgets in code and tests.
func Ptr(s string) *string { return &s }
