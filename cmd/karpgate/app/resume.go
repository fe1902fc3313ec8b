package app

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/disruption/guard"
)

// Exit codes of resume.
const (
	// ExitResumeRefused: karpgate could not tell its budget from the user's
	// and changed nothing.
	ExitResumeRefused = 1
)

func newResumeCommand(s Streams) *cobra.Command {
	var kube kubeFlags
	cmd := &cobra.Command{
		Use:   "resume NODEPOOL",
		Short: "Lift the rollout guard's hold on a NodePool's drift rollout",
		Long: `resume removes the budget {nodes: "0", reasons: [Drifted]} that karpgate's rollout
guard added to the NodePool, and only that one: the NodePool's
karpgate.io/rollout-guard annotation records the budget and its index, and
the budget there is removed only if it still has that value. A budget of
yours with the same value stays. If the budget is no longer where karpgate
put it but an equal one exists elsewhere, nothing changes (exit 1) and you
remove the budget you no longer want by hand.

NodeClaims launched before the resume no longer trip the guard.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := kube.client()
			if err != nil {
				return err
			}
			outcome, marker, err := guard.Release(cmd.Context(), c, args[0], time.Now())
			if err != nil {
				if errors.Is(err, guard.ErrAmbiguous) {
					return &ExitError{Code: ExitResumeRefused, Err: err}
				}
				return &ExitError{Code: ExitUsage, Err: err}
			}
			switch outcome {
			case guard.NotHeld:
				fmt.Fprintf(s.Out, "NodePool %s: the rollout guard does not hold it; nothing changed\n", args[0])
			case guard.AlreadyGone:
				fmt.Fprintf(s.Out, "NodePool %s: karpgate's budget had already been removed; cleared the guard's record\n", args[0])
			case guard.Removed:
				fmt.Fprintf(s.Out, "NodePool %s: removed karpgate's budget spec.disruption.budgets[%d]; drift disruptions follow your budgets again\n", args[0], marker.Index)
			}
			return nil
		},
	}
	kube.register(cmd.Flags())
	return cmd
}
