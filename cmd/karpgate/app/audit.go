package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/audit/clusterread"
	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/internal/buildinfo"
	"github.com/karpgate/karpgate/lint"
	"github.com/karpgate/karpgate/lint/output"
)

const auditLong = `Judge every NodePool, NodeClaim and EC2NodeClass stored in the cluster of your
kubeconfig (every Karpenter kind it serves) as karpgate lint judges files: the
same rules, karpgate.yaml, policies, formats and exit codes, and, first, the
API server's own verdict from the Karpenter CRDs installed in that cluster (or
--crds). No karpgate server is needed: this reads the cluster and nothing else.

Use it to guard a live cluster from CI, or to ask what a new configuration
would deny today before rolling it out:

  karpgate audit --config new-karpgate.yaml --policy policies/

Each object is named as kubectl names it (nodepool.karpenter.sh/default), and
lines and columns point into what ` + "`kubectl get nodepool default -o yaml`" + ` shows.
Findings whose action is audit (rolled out as audit before warn and deny) are
shown too. karpgate serve's audit writes the same findings, judged at the
admission point, into OpenReports ClusterReports in the cluster.

Exit codes are lint's: 0 no deny findings, 1 at least one, 2 warnings only with
--fail-on-warn, 3 a usage error or a cluster that cannot be read.`

const auditExample = `  karpgate audit
  karpgate audit --context prod --format sarif=audit.sarif --format text
  karpgate audit --config new-karpgate.yaml --policy policies/ --fail-on-warn`

type auditFlags struct {
	engine     engineFlags
	kube       kubeFlags
	schema     bool
	crds       []string
	formats    []string
	failOnWarn bool
	color      string
	// karpenterVersion overrides the release the cluster's CRDs say.
	karpenterVersion string
}

func newAuditCommand(s Streams) *cobra.Command {
	var f auditFlags
	cmd := &cobra.Command{
		Use:     "audit",
		Short:   "Check the Karpenter objects stored in a cluster as lint checks files (exit 1 on deny)",
		Long:    auditLong,
		Example: auditExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAudit(cmd.Context(), s, f)
		},
	}
	f.engine.register(cmd)
	f.kube.register(cmd.Flags())
	cmd.Flags().BoolVar(&f.schema, "schema", true, "check every object against the Karpenter CRDs installed in the cluster as the API server would; --schema=false leaves only the policy rules")
	cmd.Flags().StringArrayVar(&f.crds, "crds", nil, "CRD manifests to check against instead of the cluster's (the CRDs of a Karpenter release you are about to install, for example)")
	cmd.Flags().StringArrayVar(&f.formats, "format", nil, "output format, optionally =FILE: "+strings.Join(output.Names(), ", ")+" (repeatable; default text)")
	cmd.Flags().BoolVar(&f.failOnWarn, "fail-on-warn", false, "exit 2 when there are warnings but no deny findings")
	cmd.Flags().StringVar(&f.color, "color", "auto", "colour text output: auto (only on a terminal), always or never")
	cmd.Flags().StringVar(&f.karpenterVersion, "karpenter-version", "", "judge by this Karpenter release's facts instead of the release the cluster's CRDs (or --crds) belong to")
	return cmd
}

func runAudit(ctx context.Context, s Streams, f auditFlags) error {
	usage := func(err error) error { return &ExitError{Code: lint.ExitUsage, Err: err} }
	if ctx == nil {
		ctx = context.Background()
	}
	targets, err := output.ParseTargets(f.formats)
	if err != nil {
		return usage(err)
	}
	color, err := useColor(f.color, s.Out)
	if err != nil {
		return usage(err)
	}
	if !f.schema && len(f.crds) > 0 {
		return usage(fmt.Errorf("--schema=false turns off the CRD checks --crds is for"))
	}
	cfg, err := f.kube.restConfig()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return usage(fmt.Errorf("connecting to %s: %w", cfg.Host, err))
	}
	read, err := clusterread.Objects(ctx, c, c.RESTMapper(), listPageSize)
	if err != nil {
		return usage(fmt.Errorf("reading %s: %w", cfg.Host, err))
	}
	// The CRDs say which Karpenter release the rules judge by, so they are
	// read even with --schema=false, which only drops the schema checks.
	schema := schemaFlags{enabled: true, fromCluster: true, kube: f.kube, karpenterVersion: f.karpenterVersion}
	var crds *crdschema.Set
	if len(f.crds) > 0 {
		crds, err = crdschema.LoadFiles(f.crds)
	} else {
		crds, err = schema.clusterSet(ctx)
	}
	if err != nil {
		return usage(err)
	}
	judged, err := schema.judged(crds)
	if err != nil {
		return usage(err)
	}
	if !f.schema {
		crds = nil
	}
	engine, err := f.engine.build(ctx, &judged)
	if err != nil {
		return usage(err)
	}
	fmt.Fprintf(s.Err, "read %d Karpenter object(s) from %s: %s\n", len(read.Documents), cfg.Host, strings.Join(read.Kinds, ", "))
	defer tuneGCForStreaming(engine)()
	report, err := lint.Run(ctx, lint.Options{Documents: read.Documents, Engine: engine, CRDs: crds})
	if err != nil {
		return usage(err)
	}
	opts := output.Options{ToolVersion: buildinfo.Read().Version, Audit: true}
	for _, t := range targets {
		if err := writeTarget(s.Out, t, report, opts, color); err != nil {
			return usage(err)
		}
	}
	if code := report.ExitCode(f.failOnWarn); code != lint.ExitClean {
		return &ExitError{Code: code}
	}
	return nil
}
