package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/disruption/guard"
	"github.com/karpgate/karpgate/disruption/rolloutplan/report"
)

func newRolloutCommand(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Follow and steer RolloutPlans: drift carried through the fleet in waves",
		Long: `A RolloutPlan (karpgate.io/v1alpha1, declared in Git) rolls drift through
its NodePools in waves: the first wave rolls while karpgate holds every other
NodePool of the plan with Karpenter's own budget {nodes: "0", reasons:
[Drifted]}; when the wave is replaced and its gates have held for its soak,
the next wave is released. These commands show where each plan stands and
pause, resume or abort one. docs/rollout.md is the guide.`,
	}
	cmd.AddCommand(newRolloutStatusCommand(s), newRolloutPauseCommand(s), newRolloutResumeCommand(s), newRolloutAbortCommand(s))
	return cmd
}

func newRolloutStatusCommand(s Streams) *cobra.Command {
	var (
		kube   kubeFlags
		output string
	)
	cmd := &cobra.Command{
		Use:   "status [PLAN]",
		Short: "Where each RolloutPlan stands: its phase, waves, gates and soak",
		Long: `status prints every RolloutPlan (or the one named): its phase, the wave that
rolls, soaks or failed, how many NodePools karpgate holds for it, then per
wave its NodePools, NodeClaims, drifted and replaced NodeClaims and soak (what
is left of it for the wave that soaks), the current wave's gates, and what
stopped the plan. It reads the plans' status, which karpgate's controller
writes; -o json gives the same as JSON.

Exit codes:
  0  printed
  3  usage error, the plan does not exist, or the plans cannot be read`,
		Example: `  karpgate rollout status
  karpgate rollout status fleet -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "table" && output != "json" {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--output %q: use table or json", output)}
			}
			c, err := kube.client()
			if err != nil {
				return err
			}
			plans, err := readPlans(cmd.Context(), c, args)
			if err != nil {
				return err
			}
			r := report.Build(plans, time.Now())
			if output == "json" {
				return report.JSON(s.Out, r)
			}
			return report.Text(s.Out, r)
		},
	}
	kube.register(cmd.Flags())
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	return cmd
}

func readPlans(ctx context.Context, c client.Client, names []string) ([]v1alpha1.RolloutPlan, error) {
	if len(names) == 1 {
		plan, err := getPlan(ctx, c, names[0])
		if err != nil {
			return nil, err
		}
		return []v1alpha1.RolloutPlan{*plan}, nil
	}
	var list v1alpha1.RolloutPlanList
	if err := c.List(ctx, &list); err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("listing RolloutPlans: %w (is karpgate's CRD installed?)", err)}
	}
	return list.Items, nil
}

func getPlan(ctx context.Context, c client.Client, name string) (*v1alpha1.RolloutPlan, error) {
	plan := &v1alpha1.RolloutPlan{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, plan); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("RolloutPlan %s not found; `karpgate rollout status` lists them", name)}
		}
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("reading RolloutPlan %s: %w", name, err)}
	}
	return plan, nil
}

// steer is what pause, resume and abort share: read the plan, change it
// with one merge patch, say what happens next.
func steer(use, short, long string, s Streams, change func(plan *v1alpha1.RolloutPlan, now time.Time) (string, error)) *cobra.Command {
	var kube kubeFlags
	cmd := &cobra.Command{
		Use:   use + " PLAN",
		Short: short,
		Long:  long + "\n\nExit codes:\n  0  done\n  3  usage error, or the plan does not exist or cannot be changed",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := kube.client()
			if err != nil {
				return err
			}
			plan, err := getPlan(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			changed := plan.DeepCopy()
			if changed.Annotations == nil {
				changed.Annotations = map[string]string{}
			}
			msg, err := change(changed, time.Now())
			if err != nil {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			if err := c.Patch(cmd.Context(), changed, client.MergeFrom(plan), client.FieldOwner(guard.FieldManager)); err != nil {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("changing RolloutPlan %s: %w", plan.Name, err)}
			}
			_, err = fmt.Fprintln(s.Out, msg)
			return err
		},
	}
	kube.register(cmd.Flags())
	return cmd
}

func newRolloutPauseCommand(s Streams) *cobra.Command {
	return steer("pause", "Hold the next wave of a RolloutPlan without failing it",
		`pause sets the plan's spec.paused: the wave that rolls finishes and soaks,
and the plan then waits (phase Paused) with every other NodePool held, until
`+"`karpgate rollout resume`"+`. A GitOps tool that applies the plan with
paused: false in Git undoes it; leave paused out of Git to steer from here.`, s,
		func(plan *v1alpha1.RolloutPlan, _ time.Time) (string, error) {
			if plan.Spec.Paused {
				return "", errors.New("RolloutPlan " + plan.Name + " is paused already; `karpgate rollout resume " + plan.Name + "` releases its next wave")
			}
			plan.Spec.Paused = true
			return fmt.Sprintf("RolloutPlan %s: paused; wave %s finishes (%s), then the plan waits for `karpgate rollout resume %s`", plan.Name, plan.Status.CurrentWave, plan.Status.Phase, plan.Name), nil
		})
}

func newRolloutResumeCommand(s Streams) *cobra.Command {
	return steer("resume", "Resume a paused RolloutPlan, or retry the wave that failed or was aborted",
		`resume clears spec.paused, and on a plan that failed a gate or was aborted it
asks karpgate to roll the stopped wave again (annotation `+v1alpha1.RetryAnnotation+`):
only NodeClaims launched from now on are judged, so fix the cause first (a
reverted AMI, a fixed node class), and remove NodeClaims that never came up.`, s,
		func(plan *v1alpha1.RolloutPlan, now time.Time) (string, error) {
			var did []string
			if plan.Spec.Paused {
				plan.Spec.Paused = false
				did = append(did, "unpaused")
			}
			if p := plan.Status.Phase; p == v1alpha1.PhaseFailed || p == v1alpha1.PhaseAborted {
				plan.Annotations[v1alpha1.RetryAnnotation] = now.UTC().Format(time.RFC3339)
				did = append(did, fmt.Sprintf("wave %s rolls again (it was %s)", plan.Status.CurrentWave, p))
			}
			if len(did) == 0 {
				return "", fmt.Errorf("RolloutPlan %s is %s and not paused: nothing to resume", plan.Name, plan.Status.Phase)
			}
			return fmt.Sprintf("RolloutPlan %s: %s", plan.Name, joinAnd(did)), nil
		})
}

func newRolloutAbortCommand(s Streams) *cobra.Command {
	return steer("abort", "Stop a RolloutPlan: hold its rolling wave too and release nothing",
		`abort asks karpgate to stop the plan (annotation `+v1alpha1.AbortAnnotation+`): the
wave that rolls is held too, every NodePool of the plan stays held, and the
plan changes no hold until a person acts: `+"`karpgate resume NODEPOOL`"+` lifts
one hold by hand, `+"`karpgate rollout resume PLAN`"+` rolls the wave again.`, s,
		func(plan *v1alpha1.RolloutPlan, now time.Time) (string, error) {
			if plan.Status.Phase == v1alpha1.PhaseAborted {
				return "", errors.New("RolloutPlan " + plan.Name + " is aborted already")
			}
			plan.Annotations[v1alpha1.AbortAnnotation] = now.UTC().Format(time.RFC3339)
			return fmt.Sprintf("RolloutPlan %s: aborted at wave %s; every NodePool of the plan stays held until `karpgate resume` or `karpgate rollout resume %s`", plan.Name, plan.Status.CurrentWave, plan.Name), nil
		})
}

func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return parts[0] + " and " + parts[1]
}
