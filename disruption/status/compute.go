package status

import (
	"encoding/json"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/drift"
	"github.com/karpgate/karpgate/disruption/eviction"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// ComputeAll returns the status of every NodePool in the snapshot at now,
// with the disruption reasons of the Karpenter release judged (nil: the
// newest, budget.Reasons).
func ComputeAll(s state.Snapshot, reasons []budget.Reason, now time.Time) Report {
	pools := s.Pools()
	r := Report{At: now.UTC(), NodePools: make([]NodePool, len(pools))}
	for i, p := range pools {
		r.NodePools[i] = Compute(p, reasons, now)
	}
	return r
}

// Compute returns the status of one NodePool at now, with the disruption
// reasons of the Karpenter release judged (nil: the newest, budget.Reasons).
func Compute(pool state.Pool, reasons []budget.Reason, now time.Time) NodePool {
	now = now.UTC()
	if reasons == nil {
		reasons = budget.Reasons
	}
	out := NodePool{Name: pool.NodePool.Name, At: now, Reasons: reasons}
	nodes := countNodes(pool, now)
	out.Nodes, out.Disrupting, out.NotReady = nodes.counted, nodes.disrupting, nodes.notReady
	out.DoNotDisrupt, out.DoNotDisruptDrifted = nodes.doNotDisrupt, nodes.doNotDisruptDrifted
	out.DriftBlockedByPods, out.DriftBlockedNodes = len(nodes.podBlocked), firstNames(nodes.podBlocked, maxNamedNodes)

	out.computeBudgets(pool.NodePool, now)
	out.Repair = repairOf(pool, out.Reasons)
	out.Drift = drift.Summarize(pool.NodeClaims)
	out.WillDrift = drift.WillDrift(pool.NodeClaims, pool.NodeClasses)
	out.readGuard(pool.NodePool)
	return out
}

// BudgetsOf reads a NodePool's budgets as Karpenter does: an absent list is
// the CRD default, an empty one means none.
func BudgetsOf(np *state.NodePool) ([]budget.Budget, error) {
	return budget.FromNodePool(budgetContent(np))
}

func (out *NodePool) computeBudgets(np *state.NodePool, now time.Time) {
	budgets, err := BudgetsOf(np)
	if err != nil {
		// Such a NodePool fails the CRD schema; if one is stored anyway,
		// Karpenter cannot read it and disrupts nothing.
		out.blockAll(err.Error())
		return
	}
	set := budget.CompileSetFor(out.Reasons, budgets)
	out.Budgets = make([]Budget, 0, len(budgets))
	for _, c := range set.Budgets() {
		b := Budget{Index: c.Index, Nodes: c.Nodes, Schedule: c.Schedule, Duration: c.Duration,
			Reasons: reasonsOf(c.Budget, out.Reasons), Defaulted: c.Defaulted, Active: c.Active(now), Problem: c.Blocked()}
		blocks := b.Problem != ""
		if _, err := c.Limit(out.Nodes); err != nil && !blocks {
			// A node count that cannot be read blocks only while active.
			b.Problem, blocks = err.Error(), b.Active
		}
		if blocks {
			out.Invalid = append(out.Invalid, b.Problem)
		}
		out.Budgets = append(out.Budgets, b)
	}
	// The counts always describe a NodePool here, the only error Allowed
	// and NextChange report.
	out.Allowed, _ = set.Allowed(out.Counts(), now)
	next, _ := set.NextChange(out.Counts(), now, Horizon)
	out.NextChange = make(map[budget.Reason]Change, len(out.Reasons))
	for _, r := range out.Reasons {
		c := next[r]
		if c.At.IsZero() {
			out.NextChange[r] = Change{}
			continue
		}
		at, to := c.At, c.To
		out.NextChange[r] = Change{At: &at, To: &to}
	}
}

func (out *NodePool) blockAll(cause string) {
	out.Invalid = []string{cause}
	out.Allowed = make(map[budget.Reason]budget.Allowance, len(out.Reasons))
	out.NextChange = make(map[budget.Reason]Change, len(out.Reasons))
	for _, r := range out.Reasons {
		out.Allowed[r] = budget.Allowance{Blocked: true, Cause: cause}
		out.NextChange[r] = Change{}
	}
}

// budgetContent rebuilds the part of the NodePool budget.FromNodePool reads.
// A nil list is left out: FromNodePool gives the CRD default for a missing
// list, while an empty one means no budgets at all.
func budgetContent(np *state.NodePool) map[string]any {
	disruption := map[string]any{}
	if np.Spec.Disruption.Budgets != nil {
		disruption["budgets"] = np.Spec.Disruption.Budgets
	}
	return map[string]any{
		"apiVersion": state.CoreV1.String(),
		"spec":       map[string]any{"disruption": disruption},
	}
}

// reasonsOf spells out the reasons a budget restricts: every reason of the
// release when it names none, nothing for an explicit empty list.
func reasonsOf(b budget.Budget, reasons []budget.Reason) []string {
	if b.Reasons != nil {
		return b.Reasons
	}
	all := make([]string, len(reasons))
	for i, r := range reasons {
		all[i] = string(r)
	}
	return all
}

func (out *NodePool) readGuard(np *state.NodePool) {
	if t, ok := holdrecord.ResumedAt(np.Annotations); ok {
		out.Guard.ResumedAt = &t
	}
	m, err := holdrecord.ReadMarker(np.Annotations)
	if err != nil {
		out.Guard.Problem = err.Error()
		return
	}
	if m == nil {
		return
	}
	out.Guard.Marker = m
	if !holdrecord.SameBudget(m.Budget, holdrecord.Budget()) {
		out.Guard.Problem = "the record names " + compactJSON(m.Budget) + ", a budget karpgate never adds, so it holds nothing; `karpgate resume " + np.Name + "` clears the record and leaves every budget"
		return
	}
	if !m.Present(np.Spec.Disruption.Budgets) {
		out.Guard.Problem = "the budget of " + m.Holder() + " is no longer at spec.disruption.budgets[" + strconv.Itoa(m.Index) + "]; `karpgate resume " + np.Name + "` clears the record"
		return
	}
	out.Guard.Held = true
	out.Guard.Frozen = m.Frozen()
	out.Guard.RolloutPlan = m.RolloutPlan()
	for i := range out.Budgets {
		if out.Budgets[i].Index == m.Index {
			out.Budgets[i].Guard = true
		}
	}
}

type nodeCounts struct {
	counted, disrupting, notReady, doNotDisrupt, doNotDisruptDrifted int
	// podBlocked names the drifted nodes whose pods block eviction.
	podBlocked []string
}

// maxNamedNodes bounds the node names a status carries.
const maxNamedNodes = 5

// Counted reports whether Karpenter counts node towards its NodePool's
// budgets: it has a NodeClaim (paired by provider ID), carries
// karpenter.sh/initialized=true or is being rebooted by node repair
// (Karpenter v1.15 resets the label for the reboot), and its instance is
// not terminating.
func Counted(node *corev1.Node, nc *state.NodeClaim) bool {
	return nc != nil && node.Spec.ProviderID != "" &&
		(node.Labels[karpenter.NodeInitializedLabel] == "true" || nc.Condition(karpenter.ConditionRebooting).IsTrue()) &&
		!nc.Condition(karpenter.ConditionInstanceTerminating).IsTrue()
}

// WhyNotReady is what DisruptingWhy says of a node that is disrupting only
// because it is not Ready: such a node uses up every reason's allowance
// but Unhealthy's.
const WhyNotReady = "not Ready"

// DisruptingWhy says why a counted node is already disrupting, "" when it
// is not: such nodes use up every reason's allowance (Unhealthy's only
// when the answer is not WhyNotReady).
func DisruptingWhy(node *corev1.Node, nc *state.NodeClaim) string {
	switch {
	case nc.DeletionTimestamp != nil:
		return "its NodeClaim is being deleted"
	case state.HasTaint(node, karpenter.DisruptedTaintKey):
		return "tainted " + karpenter.DisruptedTaintKey
	case nc.Condition(karpenter.ConditionRebooting).IsTrue():
		return "node repair is rebooting it"
	case !state.NodeReady(node):
		return WhyNotReady
	}
	return ""
}

// countNodes applies Karpenter's rules; see the package documentation.
func countNodes(pool state.Pool, now time.Time) nodeCounts {
	var n nodeCounts
	claims := state.ClaimsByProviderID(pool.NodeClaims)
	for _, node := range pool.Nodes {
		nc := claims[node.Spec.ProviderID]
		if !Counted(node, nc) {
			continue
		}
		n.counted++
		switch DisruptingWhy(node, nc) {
		case "":
		case WhyNotReady:
			n.disrupting++
			n.notReady++
		default:
			n.disrupting++
		}
		drifted := nc.Condition(karpenter.ConditionDrifted).IsTrue()
		if node.Annotations[karpenter.DoNotDisruptAnnotation] == "true" {
			n.doNotDisrupt++
			if drifted {
				n.doNotDisruptDrifted++
			}
		}
		// A terminationGracePeriod bounds the drain, so drift goes ahead
		// whatever the pods say.
		if pods, known := pool.Pods[node.Name]; drifted && known && nc.Spec.TerminationGracePeriod == nil &&
			len(eviction.Check(pods, pool.PDBs, now).Blockers) > 0 {
			n.podBlocked = append(n.podBlocked, node.Name)
		}
	}
	return n
}

// firstNames returns the first n names in order.
func firstNames(names []string, n int) []string {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	if len(sorted) > n {
		sorted = sorted[:n]
	}
	return sorted
}

// compactJSON is a recorded budget as one line of JSON, for messages.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "an unreadable budget"
	}
	return string(b)
}
