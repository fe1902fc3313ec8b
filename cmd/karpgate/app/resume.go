package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/guard"
)

// ExitResumeRefused is resume's exit code when karpgate could not tell its
// budget from the user's and changed nothing.
const ExitResumeRefused = 1

func newResumeCommand(s Streams) *cobra.Command {
	var (
		kube kubeFlags
		sel  selectionFlags
	)
	cmd := &cobra.Command{
		Use:   "resume [NODEPOOL...] (--all | --selector S)",
		Short: "Lift karpgate's hold on drift: a freeze or the rollout guard's",
		Long: `resume removes the budget {nodes: "0", reasons: [Drifted]} that karpgate added to
each chosen NodePool (by ` + "`karpgate freeze`" + ` or by the rollout guard), and only
that one: the NodePool's karpgate.io/rollout-guard annotation records the
budget and its index, and the budget there is removed only if it still has
that value. A budget of yours with the same value stays. If the budget is no
longer where karpgate put it but an equal one exists elsewhere, that NodePool
is left unchanged (exit 1) and you remove the budget you no longer want by
hand. NodePools karpgate does not hold are left alone.

The budget and the record go in one write, whenever the hold began (its
"since", from the clock of whichever machine froze, is not compared with
this one's). resume then reads the NodePool back: if the hold is there
again, it says so and exits 1.

NodeClaims launched before the resume no longer trip the rollout guard.

Exit codes:
  0  every chosen NodePool is free of karpgate's hold
  1  some NodePools could not be resumed, or their hold came back (each is
     named with why)
  3  usage error, a named NodePool that does not exist, or the NodePools
     cannot be listed`,
		Example: `  karpgate resume payments
  karpgate resume --all
  karpgate resume --selector team=payments --dry-run`,
		RunE: func(cmd *cobra.Command, names []string) error {
			selection, err := sel.selection(names)
			if err != nil {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			c, err := sel.client(&kube)
			if err != nil {
				return err
			}
			results, err := guard.ResumeAll(cmd.Context(), c, selection, time.Now())
			if err != nil {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			// One named NodePool keeps the single command's exit codes.
			if len(names) == 1 && len(results) == 1 && results[0].Err != nil {
				code := ExitUsage
				if errors.Is(results[0].Err, guard.ErrAmbiguous) || errors.Is(results[0].Err, guard.ErrNotLifted) {
					code = ExitResumeRefused
				}
				return &ExitError{Code: code, Err: results[0].Err}
			}
			return reportResume(s.Out, results, sel.dryRun)
		},
	}
	kube.register(cmd.Flags())
	sel.register(cmd.Flags(), "be lifted")
	return cmd
}

func reportResume(w io.Writer, results []guard.Result, dryRun bool) error {
	out := &printer{w: w}
	would := ""
	if dryRun {
		would = "would have "
	}
	lifted := 0
	for _, r := range results {
		switch {
		case r.Err != nil:
			out.printf("NodePool %s: not resumed: %v\n", r.NodePool, r.Err)
		case r.Outcome == guard.NotHeld:
			out.printf("NodePool %s: karpgate does not hold it; nothing changed\n", r.NodePool)
		case r.Outcome == guard.NotKarpgates:
			lifted++
			out.printf("NodePool %s: its record named spec.disruption.budgets[%d] %s, which is no budget karpgate adds; %scleared the record and left every budget\n", r.NodePool, r.Lifted.Index, compactJSON(r.Lifted.Budget), would)
		case r.Outcome == guard.AlreadyGone:
			lifted++
			out.printf("NodePool %s: karpgate's budget had already been removed; %scleared the record of %s\n", r.NodePool, would, r.Lifted.Holder())
		case r.Outcome == guard.Returned:
			lifted++
			out.printf("NodePool %s: %slifted the freeze; spec.disruption.budgets[%d] stays as the wave hold of rollout plan %s, which releases it when its wave comes\n", r.NodePool, would, r.Lifted.Index, holdrecord.PlanOf(r.Lifted.Under))
		case r.Outcome == guard.Removed && r.Lifted.RolloutPlan() != "":
			lifted++
			out.printf("NodePool %s: %sremoved karpgate's budget spec.disruption.budgets[%d] (%s); the plan holds it again unless it is aborted (`karpgate rollout abort %s` first to keep it released)\n", r.NodePool, would, r.Lifted.Index, r.Lifted.Holder(), r.Lifted.RolloutPlan())
		case r.Outcome == guard.Removed:
			lifted++
			out.printf("NodePool %s: %sremoved karpgate's budget spec.disruption.budgets[%d] (%s); drift disruptions follow your budgets again\n", r.NodePool, would, r.Lifted.Index, r.Lifted.Holder())
		}
	}
	if len(results) > 1 || dryRun {
		verb := "resumed"
		if dryRun {
			verb = "would resume (dry run: nothing changed)"
		}
		out.printf("%s %d of %d NodePool(s)\n", verb, lifted, len(results))
	}
	if out.err != nil {
		return out.err
	}
	if guard.Failed(results) {
		return &ExitError{Code: ExitNotAllChanged}
	}
	return nil
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
