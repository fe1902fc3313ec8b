package app

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/disruption/guard"
)

// ExitNotAllChanged is the exit code of freeze and resume when some
// NodePools could not be changed (each is named with why); the others were.
const ExitNotAllChanged = 1

// selectionFlags pick NodePools by name, by label selector, or all.
type selectionFlags struct {
	all      bool
	selector string
	dryRun   bool
}

func (f *selectionFlags) register(fs *pflag.FlagSet, verb string) {
	fs.BoolVar(&f.all, "all", false, "every NodePool of the cluster")
	fs.StringVarP(&f.selector, "selector", "l", "", "the NodePools matching this label selector, e.g. team=payments,env!=dev")
	fs.BoolVar(&f.dryRun, "dry-run", false, "ask the API server to check every change without storing it, and say what would "+verb)
}

// selection reads the names and flags; exactly one way of choosing.
func (f *selectionFlags) selection(names []string) (guard.Selection, error) {
	ways := 0
	for _, set := range []bool{len(names) > 0, f.all, f.selector != ""} {
		if set {
			ways++
		}
	}
	if ways != 1 {
		return guard.Selection{}, errors.New("choose the NodePools one way: name them, or --all, or --selector")
	}
	sel := guard.Selection{Names: names, All: f.all}
	if f.selector != "" {
		s, err := labels.Parse(f.selector)
		if err != nil {
			return sel, fmt.Errorf("--selector %q: %w", f.selector, err)
		}
		sel.Selector = s
	}
	return sel, nil
}

// client is the kube client, told to dry-run every write with --dry-run.
func (f *selectionFlags) client(kube *kubeFlags) (client.Client, error) {
	c, err := kube.client()
	if err != nil || !f.dryRun {
		return c, err
	}
	return client.NewDryRunClient(c), nil
}

func newFreezeCommand(s Streams) *cobra.Command {
	var (
		kube   kubeFlags
		sel    selectionFlags
		reason string
	)
	cmd := &cobra.Command{
		Use:   "freeze [NODEPOOL...] (--all | --selector S) --reason TEXT",
		Short: "Stop drift disruptions in many NodePools at once, until karpgate resume",
		Long: `freeze adds karpgate's hold budget {nodes: "0", reasons: [Drifted]} to each
chosen NodePool, the same budget the rollout guard adds to one: Karpenter then
replaces no drifted node there, while Empty and Underutilized follow your
budgets as before. Use it as a circuit breaker when a bad AMI or node class
change is rolling out: one command instead of an edit per NodePool.

Every NodePool records the budget it got, its index, when and why (--reason)
in its karpgate.io/rollout-guard annotation, marked as a freeze. No other
budget is touched, and a NodePool karpgate already holds (frozen, or held by
the rollout guard) is left as it is. The rollout guard never lifts a freeze,
even when it is turned off: ` + "`karpgate resume`" + ` does.

Drift that is not voluntary is not stopped: expiry (expireAfter) is forceful.

Exit codes:
  0  every chosen NodePool is frozen (or was already held)
  1  some NodePools could not be frozen (each is named with why)
  3  usage error, or the NodePools cannot be listed`,
		Example: `  karpgate freeze --all --reason "AMI v20260105 breaks the CNI; INC-4242"
  karpgate freeze --selector team=payments --reason "payments change freeze" --dry-run
  karpgate freeze gpu general --reason "node class change under review"`,
		RunE: func(cmd *cobra.Command, names []string) error {
			selection, err := sel.selection(names)
			if err != nil {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			if strings.TrimSpace(reason) == "" {
				return &ExitError{Code: ExitUsage, Err: errors.New("--reason is required: say why drift is frozen, for whoever lifts it")}
			}
			c, err := sel.client(&kube)
			if err != nil {
				return err
			}
			results, err := guard.FreezeAll(cmd.Context(), c, selection, time.Now(), reason)
			if err != nil {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			return reportFreeze(s.Out, results, sel.dryRun)
		},
	}
	kube.register(cmd.Flags())
	sel.register(cmd.Flags(), "be frozen")
	cmd.Flags().StringVar(&reason, "reason", "", "why drift is frozen; recorded on every NodePool and shown by status, Events and explain (required)")
	return cmd
}

func reportFreeze(w io.Writer, results []guard.Result, dryRun bool) error {
	out := &printer{w: w}
	would := map[bool]string{true: "would freeze", false: "frozen"}[dryRun]
	frozen, held := 0, 0
	for _, r := range results {
		switch {
		case r.Err != nil:
			out.printf("NodePool %s: not frozen: %v\n", r.NodePool, r.Err)
		case r.Frozen != nil && r.Held != nil:
			frozen++
			what, after := r.Held.Holder(), "hands it back to the plan"
			if r.Held.Guarded() {
				what, after = "the rollout guard's hold", "lifts both"
			}
			out.printf("NodePool %s: %s: took over %s at spec.disruption.budgets[%d]; `karpgate resume` %s\n", r.NodePool, would, what, r.Frozen.Index, after)
		case r.Frozen != nil:
			frozen++
			out.printf("NodePool %s: %s: added spec.disruption.budgets[%d] {nodes: \"0\", reasons: [Drifted]}\n", r.NodePool, would, r.Frozen.Index)
		case r.Held != nil:
			held++
			out.printf("NodePool %s: %s already holds it since %s (%s); left as it is\n", r.NodePool, r.Held.Holder(), r.Held.Since.UTC().Format(time.RFC3339), r.Held.Reason)
		}
	}
	verb := "froze"
	if dryRun {
		verb = "would freeze (dry run: nothing changed)"
	}
	out.printf("%s %d of %d NodePool(s); %d already held; `karpgate resume` lifts it\n", verb, frozen, len(results), held)
	if out.err != nil {
		return out.err
	}
	if guard.Failed(results) {
		return &ExitError{Code: ExitNotAllChanged}
	}
	return nil
}

// printer writes lines and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
