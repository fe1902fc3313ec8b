package app

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/karpgate/karpgate/disruption/explain"
)

type explainOptions struct {
	kube      kubeFlags
	karpenter karpenterFlag
	display   displayFlags
	at        string
	output    string
}

func newExplainCommand(s Streams) *cobra.Command {
	var opts explainOptions
	cmd := &cobra.Command{
		Use:   "explain nodeclaim/NAME | node/NAME",
		Short: "Say why a node is or is not being disrupted, reason by reason, and what stops it",
		Long: `explain reads one NodeClaim or Node from the cluster in your kubeconfig, with its
NodePool, the NodePool's nodes, the pods on the node and their
PodDisruptionBudgets, and says for each voluntary disruption reason
(Underutilized, Empty, Drifted, and Unhealthy from Karpenter v1.15) whether
Karpenter may pick the node now and everything that stops it:

  - the node not managed, not launched or not initialized, already being
    deleted, disrupted or rebooted, karpenter.sh/do-not-disrupt on the node:
    these stop every reason (node repair ignores do-not-disrupt and the
    initialized label);
  - pods that block eviction: karpenter.sh/do-not-disrupt on a running pod (a
    duration lapses that long after the pod started), a PodDisruptionBudget
    that allows 0 disruptions, two budgets on one pod (drift goes ahead
    anyway when the NodeClaim has a terminationGracePeriod);
  - Drifted: the drift state and reason, or the AMI drift Karpenter will
    find; a static NodePool (spec.replicas) drifts within the Drifted budget
    and limits.nodes, not while it scales down;
  - Empty and Underutilized: a static NodePool, consolidateAfter Never,
    consolidationPolicy WhenEmpty, the Consolidatable condition, pods that
    would need a new home; what Balanced asks of a move;
  - Unhealthy (node repair): karpenter.sh/do-not-repair, a Ready node, more
    than 20% of the NodePool unhealthy (repair stops);
  - the budget that binds now (karpgate's own freeze or rollout guard hold
    included), nodes already disrupting (nodes that are only NotReady do not
    count against Unhealthy), and when it next allows one.

The reasons are those of the Karpenter release --karpenter-version names,
else of the release karpgate serve would judge the cluster by (` + "`karpgate version --cluster`" + `
shows how it decides): --config's karpenterVersion, else the release of the
cluster's Karpenter CRDs, else the linked release (also when they cannot be
read). The third line names that release and what chose it.

It also says when the NodeClaim expires (expireAfter is forceful: no budget,
do-not-disrupt or PodDisruptionBudget stops it) and what terminationGracePeriod
does to a blocked drain. It computes everything with the same code as the
controller's /explain endpoint. Times are in UTC with their reading in
--timezone (or the timezone of --config's karpgate.yaml); Karpenter computes
budget windows in UTC.

What karpgate cannot see it says so: Karpenter's in-memory state (a node
nominated for pending pods) and its consolidation simulation.

Exit codes:
  0  explained
  3  usage error, or the NodeClaim or Node does not exist`,
		Example: `  karpgate explain nodeclaim/default-x7k2p
  karpgate explain node/ip-10-0-12-34.ec2.internal --timezone Europe/Paris
  karpgate explain node/ip-10-0-12-34.ec2.internal -o json --at 2026-01-05T17:00:00Z`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runExplain(cmd, s, opts, args[0]) },
	}
	opts.kube.register(cmd.Flags())
	opts.karpenter.register(cmd.Flags())
	opts.display.register(cmd.Flags())
	cmd.Flags().StringVar(&opts.at, "at", "", "explain at this RFC 3339 instant instead of now (budget windows; the cluster is read as it is now)")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "text", "output format: text or json")
	return cmd
}

func runExplain(cmd *cobra.Command, s Streams, opts explainOptions, arg string) error {
	target, err := explain.ParseTarget(arg)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	if opts.output != "text" && opts.output != "json" {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--output %q: use text or json", opts.output)}
	}
	now := time.Now()
	if opts.at != "" {
		if now, err = parseInstant("--at", opts.at); err != nil {
			return &ExitError{Code: ExitUsage, Err: err}
		}
	}
	loc, err := opts.display.location()
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	c, err := opts.kube.client()
	if err != nil {
		return err
	}
	in, err := explain.Gather(cmd.Context(), c, target)
	if err != nil {
		if errors.Is(err, explain.ErrNotFound) {
			return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%w; `kubectl get nodeclaims,nodes` lists what there is", err)}
		}
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("reading the cluster: %w", err)}
	}
	judged, err := opts.karpenter.judge(cmd.Context(), opts.kube, opts.display.config)
	if err != nil {
		return err
	}
	in.Reasons = judged.reasons
	e := explain.Explain(in, now)
	e.Judged = &judged.judged
	if opts.output == "json" {
		return explain.WriteJSON(s.Out, e)
	}
	return explain.WriteText(s.Out, e, loc)
}
