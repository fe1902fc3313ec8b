package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/internal/kubelist"
	"github.com/karpgate/karpgate/migration/kubeletfix"
	"github.com/karpgate/karpgate/migration/preflight"
	"github.com/karpgate/karpgate/migration/snapshot"
)

const preflightLong = `preflight checks a cluster (your kubeconfig), or manifests (--from-files),
before a Karpenter upgrade from the release it runs to --to, and prints one
finding per problem: the objects it affects and the command or edit that fixes
it.

The release running is --from when given, else the one Karpenter's Deployment
runs (its chart's app.kubernetes.io/version label, or its image tag), else the
known release whose CRDs state what the installed CRDs state. Between it and
--to, by both releases' facts (read from their modules):
  PF111  the upgrade: from which release, read how; a downgrade is denied
  PF112  CRDs the target serves that are missing or served otherwise: install first
  PF113  hash versions: a new version re-hashes; the same version hashing
         other fields drifts every node
  PF114  spec fields the target's CRDs no longer define, on objects that set them

For an upgrade to v1.1 and later, which serve only v1:
  PF100  CRDs older than v1.0 (upgrade through v1.0.x first)
  PF101  v1beta1 still in a CRD's status.storedVersions (karpgate migrate-storage)
  PF102  NodePools whose kubelet lives only in Karpenter's annotation, and the
         EC2NodeClass it moves to, split where NodePools sharing one disagree
         (--fix-kubelet does it)
  PF103  other v1beta1 compatibility annotations that v1.1 ignores
  PF104  Ubuntu EC2NodeClasses left with a placeholder AMI
  PF105  validating/mutating webhook configurations left from Karpenter v0.3x
  PF106  CRD conversion webhooks: where they point and whether it answers
  PF107  v1beta1 documents in the files (karpgate convert -w)
  PF108  managedFields written at v1beta1: karpgate's conversion still needed
  PF109  what uninstalling karpgate's conversion would change
  PF110  what could not be read
Upgrades to v1.0.x get the checks that apply to them (PF100, PF105, PF106).

--fix-kubelet moves the annotation-held kubelet settings into EC2NodeClasses
on the cluster, as karpgate convert does for files, printing each change and
the drift it causes to standard error, then checks again. With --dry-run
every write is a server-side dry run.

Exit codes, as lint's:
  0  no deny findings (warnings do not fail the run)
  1  at least one deny finding
  2  warnings but no deny findings, with --fail-on-warn
  3  usage error, unreadable input or cluster, or a --fix-kubelet write failed`

const preflightExample = `  karpgate preflight --to v1.15.1
  karpgate preflight --to v1.1.0
  karpgate preflight --to v1.1.0 -o json | jq '.findings[] | select(.severity == "deny")'
  karpgate preflight --to v1.1.0 --fix-kubelet --dry-run
  karpgate preflight --to v1.15.1 --from v1.8.2 --from-files clusters/prod/`

type preflightOptions struct {
	kube       kubeFlags
	to         string
	from       string
	files      []string
	output     string
	failOnWarn bool
	fixKubelet bool
	dryRun     bool
	pageSize   int64
}

func newPreflightCommand(s Streams) *cobra.Command {
	var opts preflightOptions
	cmd := &cobra.Command{
		Use:     "preflight --to VERSION",
		Short:   "Check a cluster or manifests before a Karpenter upgrade (exit 1 on deny)",
		Long:    preflightLong,
		Example: preflightExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(contextOf(cmd), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runPreflight(ctx, s, opts)
		},
	}
	opts.kube.register(cmd.Flags())
	cmd.Flags().StringVar(&opts.to, "to", "", "the Karpenter version you upgrade to, like v1.15.1 (required)")
	cmd.Flags().StringVar(&opts.from, "from", "", "the Karpenter version you run, like v1.0.8 (default: read from Karpenter's Deployment or CRDs)")
	cmd.Flags().StringArrayVar(&opts.files, "from-files", nil, "check these files or folders (- for standard input) instead of the cluster (repeatable)")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "text", "output format: text or json")
	cmd.Flags().BoolVar(&opts.failOnWarn, "fail-on-warn", false, "exit 2 when there are warnings but no deny findings")
	cmd.Flags().BoolVar(&opts.fixKubelet, "fix-kubelet", false, "move annotation-held kubelet settings into EC2NodeClasses on the cluster first")
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "with --fix-kubelet: send every write as a server-side dry run")
	cmd.Flags().Int64Var(&opts.pageSize, "page-size", kubelist.DefaultPageSize, "objects per List request")
	return cmd
}

func contextOf(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

func runPreflight(ctx context.Context, s Streams, opts preflightOptions) error {
	usage := func(err error) error { return &ExitError{Code: preflight.ExitUsage, Err: err} }
	if opts.to == "" {
		return usage(errors.New("--to is required: the Karpenter version you upgrade to, like v1.1.0"))
	}
	target, err := preflight.ParseTarget(opts.to)
	if err != nil {
		return usage(err)
	}
	if opts.output != "text" && opts.output != "json" {
		return usage(fmt.Errorf("--output %q: use text or json", opts.output))
	}
	if opts.fixKubelet && len(opts.files) > 0 {
		return usage(errors.New("--fix-kubelet changes a cluster; for files, karpgate convert moves kubelet blocks"))
	}
	if opts.dryRun && !opts.fixKubelet {
		return usage(errors.New("--dry-run goes with --fix-kubelet; preflight itself changes nothing"))
	}
	var snap *snapshot.Snapshot
	if len(opts.files) > 0 {
		if snap, err = snapshot.FromFiles(opts.files, s.In); err != nil {
			return usage(err)
		}
	} else if snap, err = readCluster(ctx, s, opts); err != nil {
		return err
	}
	running, err := preflight.DetectRunning(snap, opts.from)
	if err != nil {
		return usage(err)
	}
	report := preflight.Run(snap, running, target)
	write := preflight.WriteText
	if opts.output == "json" {
		write = preflight.WriteJSON
	}
	if err := write(s.Out, report); err != nil {
		return usage(err)
	}
	if code := report.ExitCode(opts.failOnWarn); code != preflight.ExitReady {
		return &ExitError{Code: code}
	}
	return nil
}

// readCluster reads the cluster, and with --fix-kubelet moves kubelet
// blocks first and reads it again.
func readCluster(ctx context.Context, s Streams, opts preflightOptions) (*snapshot.Snapshot, error) {
	c, host, err := opts.kube.apiClient()
	if err != nil {
		return nil, err
	}
	snap, err := snapshot.FromCluster(ctx, c, host, opts.pageSize)
	if err != nil || !opts.fixKubelet {
		return snap, wrapUsage(err)
	}
	if err := fixKubelet(ctx, s, c, snap, opts.dryRun); err != nil {
		return nil, err
	}
	snap, err = snapshot.FromCluster(ctx, c, host, opts.pageSize)
	return snap, wrapUsage(err)
}

func wrapUsage(err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: preflight.ExitUsage, Err: err}
}

func fixKubelet(ctx context.Context, s Streams, c client.Client, snap *snapshot.Snapshot, dryRun bool) error {
	plan := kubeletfix.PlanFor(snap)
	steps := plan.Steps()
	prefix := ""
	if dryRun {
		prefix = "(dry run) "
	}
	if len(steps) == 0 {
		fmt.Fprintln(s.Err, "fix-kubelet: no NodePool keeps kubelet settings that an EC2NodeClass can take; nothing to move")
		return nil
	}
	replaced := 0
	err := kubeletfix.Apply(ctx, c, plan, kubeletfix.Options{DryRun: dryRun, Report: func(step kubeletfix.Step) {
		fmt.Fprintf(s.Err, "fix-kubelet: %s%s\n", prefix, step)
		replaced += step.Replaces
	}})
	if err != nil {
		return &ExitError{Code: preflight.ExitUsage, Err: fmt.Errorf("fix-kubelet stopped: %w", err)}
	}
	fmt.Fprintf(s.Err, "fix-kubelet: %s%d changes; %d nodes will be replaced by drift\n", prefix, len(steps), replaced)
	return nil
}
