package explain

import (
	"slices"
	"time"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/disruption/drift"
	"github.com/karpgate/karpgate/disruption/eviction"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// Explanation is why one node is or is not a candidate for each voluntary
// disruption reason at At, and when it expires.
type Explanation struct {
	At time.Time `json:"at"`
	// Judged names the Karpenter release whose reasons are explained and
	// what chose it (`karpgate explain`, and serve's /explain); nil when
	// the caller does not say.
	Judged    *release.Summary `json:"judged,omitempty"`
	NodeClaim string           `json:"nodeClaim,omitempty"`
	Node      string           `json:"node,omitempty"`
	NodePool  string           `json:"nodePool,omitempty"`

	// Initialized: the node carries karpenter.sh/initialized=true, the
	// test Karpenter's disruption controller applies.
	Initialized bool `json:"initialized"`
	// Nodes and Disrupting are the NodePool's counts the budgets use;
	// NotReady, those of Disrupting that are only not Ready, which
	// Unhealthy's budget does not count; DisruptingNodes names the
	// disrupting ones and why.
	Nodes           int              `json:"nodes"`
	Disrupting      int              `json:"disrupting"`
	NotReady        int              `json:"notReady"`
	DisruptingNodes []DisruptingNode `json:"disruptingNodes,omitempty"`

	Drift  Drift  `json:"drift"`
	Expiry Expiry `json:"expiry"`

	// StopsEveryReason are what keep Karpenter from picking the node for
	// any reason: they apply before a reason is even considered.
	StopsEveryReason []Stop `json:"stopsEveryReason"`
	// Pods are the node's pods that block its eviction, and the
	// do-not-disrupt annotations Karpenter ignores.
	Pods eviction.Result `json:"pods"`
	// Reasons are those of the Karpenter release judged, in Karpenter's
	// order: Underutilized, Empty, Drifted, and Unhealthy from v1.15.
	Reasons []Reason `json:"reasons"`
}

// DisruptingNode is a node of the NodePool already being disrupted.
type DisruptingNode struct {
	Node string `json:"node"`
	Why  string `json:"why"`
}

// Drift is the NodeClaim's drift state.
type Drift struct {
	Drifted bool       `json:"drifted"`
	Reason  string     `json:"reason,omitempty"`
	Since   *time.Time `json:"since,omitempty"`
	// Pending: not Drifted yet, but its image is no longer the newest
	// compatible AMI, so Karpenter will mark it AMIDrift when it checks.
	Pending *drift.Pending `json:"pending,omitempty"`
	// Undecided says why karpgate cannot tell whether the AMI drifted.
	Undecided string `json:"undecided,omitempty"`
}

// Expiry is the NodeClaim's forceful end and how a drain ends.
type Expiry struct {
	// ExpireAfter is spec.expireAfter as written ("720h", "Never", or
	// empty when unset).
	ExpireAfter string     `json:"expireAfter,omitempty"`
	ExpiresAt   *time.Time `json:"expiresAt,omitempty"`
	Expired     bool       `json:"expired,omitempty"`
	// TerminationGracePeriod is spec.terminationGracePeriod, empty when
	// unset; DrainDeadline is when a drain that began is forced.
	TerminationGracePeriod string     `json:"terminationGracePeriod,omitempty"`
	DeletingSince          *time.Time `json:"deletingSince,omitempty"`
	DrainDeadline          *time.Time `json:"drainDeadline,omitempty"`
}

// Reason is one disruption reason's verdict.
type Reason struct {
	Reason budget.Reason `json:"reason"`
	// Candidate: nothing karpgate can see stops Karpenter from picking the
	// node for this reason now.
	Candidate bool `json:"candidate"`
	// Stops are what stop this reason, besides StopsEveryReason.
	Stops  []Stop   `json:"stops"`
	Budget Budget   `json:"budget"`
	Notes  []string `json:"notes,omitempty"`
}

// Budget is what the NodePool's budgets allow the reason now.
type Budget struct {
	Allowed budget.Allowance `json:"allowed"`
	// Why names the binding budgets in words.
	Why string `json:"why"`
	// NextChange is when the allowance next changes within a week.
	NextChange *time.Time `json:"nextChange,omitempty"`
	// NextAllowed is when the reason next allows at least one more
	// disruption, assuming the nodes disrupting now still are; nil when no
	// window within a week does.
	NextAllowed *time.Time `json:"nextAllowed,omitempty"`
	// NextFree is when the reason allows one once no node is disrupting
	// (now, when only disrupting nodes use the allowance up); set only
	// when it differs from NextAllowed.
	NextFree *time.Time `json:"nextFree,omitempty"`
	// Hold is set when a binding budget is karpgate's own: "freeze",
	// "rollout-guard" or HoldWave (a RolloutPlan's wave hold, the plan in
	// RolloutPlan).
	Hold        string `json:"hold,omitempty"`
	RolloutPlan string `json:"rolloutPlan,omitempty"`
}

// Stop is one thing that keeps the node from being disrupted.
type Stop struct {
	Kind    StopKind `json:"kind"`
	Message string   `json:"message"`
	// Spares lists the reasons a stop of StopsEveryReason does not stop:
	// node repair (Unhealthy) acts on a node that is not initialized or
	// carries karpenter.sh/do-not-disrupt.
	Spares []budget.Reason `json:"spares,omitempty"`
	// Until is when the stop lifts by itself, when known. Free, on a
	// budget stop, is when it lifts once the nodes disrupting now are done.
	Until *time.Time `json:"until,omitempty"`
	Free  *time.Time `json:"free,omitempty"`
}

// StopKind names a stop for scripts.
type StopKind string

// The stops, in the order Karpenter meets them.
const (
	StopNotManaged            StopKind = "not-managed"
	StopNoNode                StopKind = "no-node"
	StopNoNodePool            StopKind = "no-nodepool"
	StopNotInitialized        StopKind = "not-initialized"
	StopDeleting              StopKind = "deleting"
	StopDisrupting            StopKind = "disrupting"
	StopRebooting             StopKind = "rebooting"
	StopDoNotDisruptNode      StopKind = "do-not-disrupt-node"
	StopStaticNodePool        StopKind = "static-nodepool"
	StopStaticScalingDown     StopKind = "static-scaling-down"
	StopStaticAtLimit         StopKind = "static-at-limit"
	StopHealthy               StopKind = "healthy"
	StopDoNotRepair           StopKind = "do-not-repair"
	StopRepairStopped         StopKind = "repair-stopped"
	StopPods                  StopKind = "pods"
	StopNotDrifted            StopKind = "not-drifted"
	StopConsolidationDisabled StopKind = "consolidation-disabled"
	StopNotConsolidatable     StopKind = "not-consolidatable"
	StopNotEmpty              StopKind = "not-empty"
	StopEmpty                 StopKind = "empty"
	StopWhenEmpty             StopKind = "when-empty"
	StopBudgetsInvalid        StopKind = "budgets-invalid"
	StopBudget                StopKind = "budget"
)

// stops reports whether an every-reason stop stops reason r.
func (s Stop) stops(r budget.Reason) bool { return !slices.Contains(s.Spares, r) }

// StopsFor returns the every-reason stops that stop reason r.
func (e *Explanation) StopsFor(r budget.Reason) []Stop {
	var out []Stop
	for _, s := range e.StopsEveryReason {
		if s.stops(r) {
			out = append(out, s)
		}
	}
	return out
}

// Candidate reports whether the node is a candidate for reason r.
func (e *Explanation) Candidate(r budget.Reason) bool {
	for _, rs := range e.Reasons {
		if rs.Reason == r {
			return rs.Candidate
		}
	}
	return false
}

// HoldWave is Budget.Hold for the wave hold of a RolloutPlan.
const HoldWave = "rollout-wave"
