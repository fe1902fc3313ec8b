package status

import (
	"time"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/drift"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// Report is the status of every NodePool at one instant.
type Report struct {
	At time.Time `json:"at"`
	// Judged names the Karpenter release whose reasons the report follows
	// and what chose it (`karpgate status`, and serve's /status); nil when
	// the caller does not say.
	Judged    *release.Summary `json:"judged,omitempty"`
	NodePools []NodePool       `json:"nodePools"`
}

// NodePool is the disruption status of one NodePool at At.
type NodePool struct {
	Name string    `json:"name"`
	At   time.Time `json:"at"`
	// Nodes counts the nodes budgets are computed from; Disrupting those
	// already being disrupted (deleting, marked, rebooting or not Ready),
	// which every allowance is reduced by; NotReady those of Disrupting that
	// are only not Ready, which Unhealthy's allowance is not reduced by
	// (Karpenter v1.15: NotReady is what node repair acts on).
	Nodes      int `json:"nodes"`
	Disrupting int `json:"disrupting"`
	NotReady   int `json:"notReady"`
	// DoNotDisrupt counts counted nodes annotated karpenter.sh/do-not-disrupt,
	// and how many of those are drifted (a rollout cannot finish past them).
	DoNotDisrupt        int `json:"doNotDisrupt"`
	DoNotDisruptDrifted int `json:"doNotDisruptDrifted"`
	// DriftBlockedByPods counts drifted nodes whose pods keep Karpenter
	// from replacing them (a karpenter.sh/do-not-disrupt pod, or a
	// PodDisruptionBudget that allows no disruption) while their NodeClaim
	// has no terminationGracePeriod to bound the drain. DriftBlockedNodes
	// names the first few, sorted.
	DriftBlockedByPods int      `json:"driftBlockedByPods"`
	DriftBlockedNodes  []string `json:"driftBlockedNodes,omitempty"`

	Budgets []Budget `json:"budgets"`
	// Invalid lists why budgets block every reason; non-empty means
	// Karpenter disrupts nothing in this NodePool voluntarily.
	Invalid []string `json:"invalid,omitempty"`

	// Reasons are the disruption reasons of the Karpenter release judged,
	// in Karpenter's order: the keys of Allowed and NextChange.
	Reasons    []budget.Reason                    `json:"reasons"`
	Allowed    map[budget.Reason]budget.Allowance `json:"allowed"`
	NextChange map[budget.Reason]Change           `json:"nextChange"`

	// Repair is node repair's view of the NodePool (Karpenter v1.15): its
	// unhealthy nodes and whether they stop repair; nil for a release
	// without the Unhealthy reason.
	Repair *Repair `json:"repair,omitempty"`

	Drift     drift.Summary    `json:"drift"`
	WillDrift drift.AMIOutlook `json:"willDrift"`

	Guard Guard `json:"guard"`

	// Audit is what the audit of stored objects reports about the
	// NodePool's objects; nil when the reports were not read.
	Audit *Audit `json:"audit,omitempty"`
}

// Budget is one budget as written, whether it is active now, and what is
// wrong with it.
type Budget struct {
	Index     int      `json:"index"`
	Nodes     string   `json:"nodes"`
	Schedule  *string  `json:"schedule,omitempty"`
	Duration  *string  `json:"duration,omitempty"`
	Reasons   []string `json:"reasons"`
	Defaulted bool     `json:"defaulted,omitempty"`
	Active    bool     `json:"active"`
	Problem   string   `json:"problem,omitempty"`
	// Guard marks the budget karpgate's rollout guard added.
	Guard bool `json:"guard,omitempty"`
}

// Change is when a reason's allowance next changes, within the horizon.
type Change struct {
	// At is nil when nothing changes within the horizon.
	At *time.Time        `json:"at"`
	To *budget.Allowance `json:"to,omitempty"`
}

// Guard is the rollout guard's hold on the NodePool, as recorded on it.
type Guard struct {
	Held bool `json:"held"`
	// Frozen: the hold is a freeze (`karpgate freeze`, or the guard's
	// cluster-wide trip), which only `karpgate resume` lifts.
	Frozen bool `json:"frozen,omitempty"`
	// RolloutPlan names the RolloutPlan whose wave hold this is; the plan
	// lifts it when its wave comes.
	RolloutPlan string             `json:"rolloutPlan,omitempty"`
	Marker      *holdrecord.Marker `json:"marker,omitempty"`
	ResumedAt   *time.Time         `json:"resumedAt,omitempty"`
	// Problem: a record that cannot be read, or whose budget is gone.
	Problem string `json:"problem,omitempty"`
}

// Horizon is how far ahead NextChange looks.
const Horizon = budget.DefaultHorizon

// Earliest returns the earliest next change over every reason, and the
// reasons changing then; zero when nothing changes within the horizon.
func (p NodePool) Earliest() (time.Time, []budget.Reason) {
	var at time.Time
	var reasons []budget.Reason
	for _, r := range p.Lanes() {
		c := p.NextChange[r]
		switch {
		case c.At == nil:
		case at.IsZero() || c.At.Before(at):
			at, reasons = *c.At, []budget.Reason{r}
		case c.At.Equal(at):
			reasons = append(reasons, r)
		}
	}
	return at, reasons
}

// Lanes are the NodePool's reasons in Karpenter's order: Reasons, or the
// newest release's for a status that names none (read from an older
// karpgate's JSON).
func (p NodePool) Lanes() []budget.Reason {
	if p.Reasons == nil {
		return budget.Reasons
	}
	return p.Reasons
}

// Blocked reports whether invalid budgets block every reason.
func (p NodePool) Blocked() bool { return len(p.Invalid) > 0 }

// Counts are the NodePool's node counts as the budget maths takes them.
func (p NodePool) Counts() budget.Counts {
	return budget.Counts{Nodes: p.Nodes, Disrupting: p.Disrupting, NotReady: p.NotReady}
}
