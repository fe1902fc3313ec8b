package app

import (
	"context"
	"fmt"
	"time"

	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/audit/report"
	"github.com/karpgate/karpgate/internal/kubelist"

	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/disruption/status"
)

type statusOptions struct {
	kube      kubeFlags
	karpenter karpenterFlag
	display   displayFlags
	at        string
	output    string
	nodePool  string
}

// listPageSize keeps each List response small on large clusters.
const listPageSize = 500

func newStatusCommand(s Streams) *cobra.Command {
	var opts statusOptions
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show, per NodePool, the disruptions allowed now, when that changes and how far drift has got",
		Long: `status reads the NodePools, NodeClaims, EC2NodeClasses and Nodes of the cluster in
your kubeconfig and prints one row per NodePool: the nodes Karpenter counts,
those already disrupting, drifted NodeClaims (and how long the oldest has
been drifted), NodeClaims that will drift once Karpenter notices a newer AMI,
the voluntary disruptions each reason allows now (Unhealthy, node repair, from
Karpenter v1.15: its budget does not count nodes that are only NotReady), and
when that next changes within a week. The reasons are those of the Karpenter
release --karpenter-version names, else of the release karpgate serve would
judge the cluster by (` + "`karpgate version --cluster`" + ` shows how it decides):
--config's karpenterVersion, else the release of the cluster's Karpenter CRDs,
else the linked release (also when they cannot be read). A line below the
table names that release and what chose it. Notes name budgets that block every reason,
rollout guard holds and freezes, drifted nodes held by karpenter.sh/do-not-disrupt
or by their pods (a do-not-disrupt pod, a PodDisruptionBudget that allows no
disruption: ` + "`karpgate explain node/NAME`" + ` names them), and the daylight-saving
shifts of the display time zone within the week. When karpgate serve's audit
writes its ClusterReports, an AUDIT column sums what they say about each
NodePool, its NodeClaims and its EC2NodeClass (fail and warn findings, or pass).

Times are in UTC, with their reading in --timezone (or the timezone of the
karpgate.yaml given with --config); Karpenter computes budget windows in UTC.

It computes everything itself with the same code as the controller's /status
endpoint, so it works whether or not karpgate runs in the cluster; --at asks
about another instant ("what will be allowed on Monday at 09:00?").`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runStatus(cmd, s, opts) },
	}
	opts.kube.register(cmd.Flags())
	opts.karpenter.register(cmd.Flags())
	opts.display.register(cmd.Flags())
	cmd.Flags().StringVar(&opts.at, "at", "", "evaluate at this RFC 3339 instant instead of now, e.g. 2026-01-05T09:00:00Z")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	cmd.Flags().StringVar(&opts.nodePool, "nodepool", "", "only this NodePool")
	return cmd
}

func runStatus(cmd *cobra.Command, s Streams, opts statusOptions) error {
	now := time.Now()
	if opts.at != "" {
		var err error
		if now, err = parseInstant("--at", opts.at); err != nil {
			return &ExitError{Code: ExitUsage, Err: err}
		}
	}
	if opts.output != "table" && opts.output != "json" {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--output %q: use table or json", opts.output)}
	}
	loc, err := opts.display.location()
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	c, err := opts.kube.client()
	if err != nil {
		return err
	}
	snap, err := state.List(cmd.Context(), c, listPageSize)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("reading the cluster: %w", err)}
	}
	judged, err := opts.karpenter.judge(cmd.Context(), opts.kube, opts.display.config)
	if err != nil {
		return err
	}
	report := status.ComputeAll(snap, judged.reasons, now)
	report.Judged = &judged.judged
	audits, found, err := readAuditReports(cmd.Context(), c)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("reading the audit's reports: %w", err)}
	}
	if found {
		status.AddAudit(&report, snap, audits)
	}
	if opts.nodePool != "" {
		report.NodePools = onlyPool(report.NodePools, opts.nodePool)
		if len(report.NodePools) == 0 {
			return &ExitError{Code: ExitUsage, Err: fmt.Errorf("NodePool %q not found", opts.nodePool)}
		}
	}
	if opts.output == "json" {
		return status.WriteJSON(s.Out, report)
	}
	return status.WriteTable(s.Out, report, loc)
}

func onlyPool(pools []status.NodePool, name string) []status.NodePool {
	for _, p := range pools {
		if p.Name == name {
			return []status.NodePool{p}
		}
	}
	return nil
}

// readAuditReports sums the ClusterReports karpgate serve's audit wrote, by
// the object each reports on; found is false when the cluster has no
// openreports.io CRDs.
func readAuditReports(ctx context.Context, c client.Client) (map[status.ObjectRef]status.Audit, bool, error) {
	out := map[status.ObjectRef]status.Audit{}
	gvk := orv1.SchemeGroupVersion.WithKind("ClusterReport")
	if _, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); meta.IsNoMatchError(err) {
		return out, false, nil
	}
	err := kubelist.Pages(ctx, listWithLabels{c, report.Selector}, gvk, listPageSize, func(p kubelist.Page) error {
		for _, item := range p.Items {
			var r orv1.ClusterReport
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &r); err != nil || r.Scope == nil {
				continue
			}
			// An object whose results take several reports: their
			// summaries add up to its results.
			ref := status.ObjectRef{Kind: r.Scope.Kind, Name: r.Scope.Name}
			a := out[ref]
			a.Fail, a.Warn, a.Skip = a.Fail+r.Summary.Fail, a.Warn+r.Summary.Warn, a.Skip+r.Summary.Skip
			out[ref] = a
		}
		return nil
	})
	return out, true, err
}

// listWithLabels lists only objects with the given labels.
type listWithLabels struct {
	client.Reader
	labels map[string]string
}

func (l listWithLabels) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return l.Reader.List(ctx, list, append(opts, client.MatchingLabels(l.labels))...)
}
