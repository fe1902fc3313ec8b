package status

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/karpgate/karpgate/budget"
)

// WriteTable prints one row per NodePool, then notes for what needs a person:
// budgets that block every reason, rollout guard holds and freezes, drifted
// nodes held by karpenter.sh/do-not-disrupt or by their pods, and the
// display zone's daylight-saving shifts within the horizon. Times are in UTC
// with their reading in loc (nil: UTC only).
func WriteTable(w io.Writer, r Report, loc *time.Location) error {
	if loc == nil {
		loc = time.UTC
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	withAudit := audited(r)
	header := "NODEPOOL\tNODES\tDISRUPTING\tDRIFTED\tWILL-DRIFT\tALLOWED NOW\tNEXT CHANGE"
	if withAudit {
		header += "\tAUDIT"
	}
	fmt.Fprintln(tw, header)
	for _, p := range r.NodePools {
		row := fmt.Sprintf("%s\t%d\t%s\t%s\t%d\t%s\t%s", p.Name, p.Nodes, disruptingCell(p),
			driftCell(p, r.At), len(p.WillDrift.Pending), allowedCell(p), nextChangeCell(p, r.At, loc))
		if withAudit {
			row += "\t" + auditCell(p)
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var notes []string
	if r.Judged != nil {
		// in the words of `karpgate version --cluster`
		notes = append(notes, "Judged by "+r.Judged.DescribeWithNote())
	}
	for _, p := range r.NodePools {
		notes = append(notes, notesFor(p)...)
	}
	for _, s := range budget.Shifts(loc, r.At, r.At.Add(Horizon)) {
		notes = append(notes, fmt.Sprintf("%s: %s; Karpenter computes in UTC", loc, budget.ShiftNote(s, loc, r.At, r.At.Add(Horizon))))
	}
	if len(notes) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
	return err
}

func driftCell(p NodePool, now time.Time) string {
	if p.Drift.Total == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (oldest %s)", p.Drift.Total, HumanDuration(now.Sub(*p.Drift.OldestSince)))
}

// disruptingCell says how many of the disrupting nodes are only not Ready,
// which Unhealthy's allowance does not count: "3 (2 not Ready)".
func disruptingCell(p NodePool) string {
	if p.NotReady == 0 {
		return fmt.Sprint(p.Disrupting)
	}
	return fmt.Sprintf("%d (%d not Ready)", p.Disrupting, p.NotReady)
}

// allowedCell says "all=N" when every reason allows the same.
func allowedCell(p NodePool) string {
	if p.Blocked() {
		return "all=blocked"
	}
	lanes := p.Lanes()
	if len(lanes) == 0 {
		return "-"
	}
	first := p.Allowed[lanes[0]].String()
	same := true
	parts := make([]string, len(lanes))
	for i, r := range lanes {
		s := p.Allowed[r].String()
		same = same && s == first
		parts[i] = fmt.Sprintf("%s=%s", r, s)
	}
	cell := strings.Join(parts, " ")
	if same {
		cell = "all=" + first
	}
	if p.Repair != nil && p.Repair.Stopped {
		cell += " (repair stopped)"
	}
	return cell
}

func nextChangeCell(p NodePool, now time.Time, loc *time.Location) string {
	at, reasons := p.Earliest()
	if at.IsZero() {
		return fmt.Sprintf("none within %s", HumanDuration(Horizon))
	}
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%s=%s", r, p.NextChange[r].To.String())
	}
	return fmt.Sprintf("%s at %s (in %s)", strings.Join(parts, " "), budget.InZone(at, loc), HumanDuration(at.Sub(now)))
}

func notesFor(p NodePool) []string {
	var notes []string
	for _, cause := range p.Invalid {
		notes = append(notes, fmt.Sprintf("%s: BLOCKED, Karpenter disrupts nothing voluntarily: %s", p.Name, cause))
	}
	switch {
	case p.Guard.Frozen:
		notes = append(notes, fmt.Sprintf("%s: drift is frozen since %s (spec.disruption.budgets[%d]): %s; `karpgate resume %s` or `karpgate resume --all` lifts it",
			p.Name, p.Guard.Marker.Since.UTC().Format(time.RFC3339), p.Guard.Marker.Index, p.Guard.Marker.Reason, p.Name))
	case p.Guard.RolloutPlan != "":
		notes = append(notes, fmt.Sprintf("%s: wave hold of rollout plan %s since %s (spec.disruption.budgets[%d]): %s; the plan releases it when its wave comes (`karpgate rollout status %s`)",
			p.Name, p.Guard.RolloutPlan, p.Guard.Marker.Since.UTC().Format(time.RFC3339), p.Guard.Marker.Index, p.Guard.Marker.Reason, p.Guard.RolloutPlan))
	case p.Guard.Held:
		notes = append(notes, fmt.Sprintf("%s: the rollout guard holds drift since %s (spec.disruption.budgets[%d]): %s; `karpgate resume %s` lifts it",
			p.Name, p.Guard.Marker.Since.UTC().Format(time.RFC3339), p.Guard.Marker.Index, p.Guard.Marker.Reason, p.Name))
	}
	if p.Guard.Problem != "" {
		notes = append(notes, fmt.Sprintf("%s: rollout guard: %s", p.Name, p.Guard.Problem))
	}
	if r := p.Repair; r != nil && r.Stopped {
		notes = append(notes, fmt.Sprintf("%s: node repair STOPPED: %d of %d nodes are not Ready, more than %d%% (%d); Karpenter repairs none of them until at most %d are",
			p.Name, r.Unhealthy, r.Nodes, RepairStopPercent, r.StopAbove, r.StopAbove))
	}
	if p.DoNotDisruptDrifted > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d drifted node(s) carry karpenter.sh/do-not-disrupt; the rollout cannot finish until it is removed", p.Name, p.DoNotDisruptDrifted))
	}
	if p.DriftBlockedByPods > 0 {
		names := strings.Join(p.DriftBlockedNodes, ", ")
		if more := p.DriftBlockedByPods - len(p.DriftBlockedNodes); more > 0 {
			names += fmt.Sprintf(" and %d more", more)
		}
		notes = append(notes, fmt.Sprintf("%s: %d drifted node(s) run pods that block eviction (karpenter.sh/do-not-disrupt, or a PodDisruptionBudget that allows 0): %s; `karpgate explain node/NAME` names them",
			p.Name, p.DriftBlockedByPods, names))
	}
	if p.Audit != nil && p.Audit.Fail > 0 {
		notes = append(notes, fmt.Sprintf("%s: the audit of stored objects finds %d finding(s) karpgate's rules deny on it, its NodeClaims or its EC2NodeClass: `kubectl get clusterreports -l app.kubernetes.io/managed-by=karpgate` lists them",
			p.Name, p.Audit.Fail))
	}
	for _, u := range p.WillDrift.Undecided {
		notes = append(notes, fmt.Sprintf("%s: cannot tell whether NodeClaim %s will drift: %s", p.Name, u.NodeClaim, u.Why))
	}
	return notes
}

// HumanDuration prints d to the minute ("3d4h", "2h30m", "45s").
func HumanDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d/time.Second))
	}
	d = d.Truncate(time.Minute)
	days, hours, minutes := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	var b strings.Builder
	if days > 0 {
		fmt.Fprintf(&b, "%dd", days)
	}
	if hours > 0 {
		fmt.Fprintf(&b, "%dh", hours)
	}
	if minutes > 0 && days == 0 {
		fmt.Fprintf(&b, "%dm", minutes)
	}
	return b.String()
}
