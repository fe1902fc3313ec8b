package app

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/karpgate/karpgate/disruption/controller"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/karpgate/karpgate/audit/report"
	"github.com/karpgate/karpgate/cmd/karpgate/app/serve"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/serving"
	"github.com/karpgate/karpgate/policies/policywatch"
)

func newServeCommand(s Streams) *cobra.Command {
	opts := serve.Defaults()
	var kube kubeFlags
	maxBytes := byteSize(opts.MaxRequestBytes)
	checkMemory := byteSize(opts.PolicyCheckMemory)
	reportMaxBytes := byteSize(opts.AuditOptions.ReportMaxBytes)
	memoryLimit, memoryLimitErr := memoryLimitFromEnv()
	var trustedSources []string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve karpgate's admission and conversion webhooks, and run the disruption loop",
		Long: `serve runs what karpgate does inside a cluster, on one controller-runtime manager:

  ` + fmt.Sprintf("%-10s", deploy.ValidatePath) + ` validating webhook: NodePools and EC2NodeClasses checked by karpgate's
             rules (deny findings deny, warn findings become kubectl warnings)
  ` + fmt.Sprintf("%-10s", deploy.MutatePath) + ` mutating webhook: built-in mutations (karpgate.yaml mutations), each
             reported as a warning
  ` + fmt.Sprintf("%-10s", deploy.ConvertPath) + ` conversion webhook for NodePools, NodeClaims and EC2NodeClasses
             (point the Karpenter CRDs' spec.conversion.webhook.clientConfig here)

The serving certificate is read from --cert-dir (tls.crt, tls.key) and reloaded
when it changes; karpgate.yaml (--config) and the --policy and --data folders
are reloaded too, and a version that does not compile is rejected while the
last good one stays in use. /healthz and /readyz answer plain HTTP on
--health-addr. /metrics, /status and /explain (?nodeclaim=NAME or ?node=NAME,
&format=text) answer on --metrics-addr over HTTPS with the serving
certificate, and only to callers the API server authenticates and authorizes
for get on the path (ClusterRole ` + deploy.MetricsReaderClusterRole + `);
--metrics-secure=false serves them as plain HTTP on loopback instead. Times in
Events and /explain read in karpgate.yaml's timezone as well as UTC.

Requests are charged memory as their bodies arrive, which must keep a pace (the
first bytes within a second, the rest at 1 MiB/s), then take a
slot (--max-concurrent-requests); the memory budget and the Go heap limit come
from --memory-limit (the Deployment passes the container's limit in
$` + deploy.MemoryLimitEnv + `). The API server's requests, known by the client
certificate --client-ca-file verifies or by the addresses in
--trusted-source-cidrs, get a share of the connections, slots and memory that
no other caller can take; with --trusted-source-cidrs, /convert reads NodePools
(a NodeClaim's expireAfter) only for them.

The disruption loop (--controller) runs on the elected leader only, in a
manager of its own; every replica serves the webhooks. The audit of stored
objects (--audit) runs on the leader too, with or without the loop: every
stored Karpenter object is judged by the current rules at start, on every
reload, whenever it changes and every --audit-interval, into OpenReports
ClusterReports, metrics and Events. When the leader's work stops on its own (the Lease lost, its API calls failing), a new one
starts after a pause and the webhooks keep serving. The
cluster is reached with --kubeconfig, $KUBECONFIG, ~/.kube/config or the pod's
service account.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if memoryLimitErr != nil && !cmd.Flags().Changed("memory-limit") {
				return &ExitError{Code: ExitUsage, Err: memoryLimitErr}
			}
			cfg, err := kube.restConfig()
			if err != nil {
				return err
			}
			opts.RestConfig, opts.Log, opts.MaxRequestBytes, opts.MemoryLimit = cfg, newLogger(s), int64(maxBytes), int64(memoryLimit.byteSize)
			opts.PolicyCheckMemory = int64(checkMemory)
			if opts.TrustedSources, err = serving.ParseTrustedSources(trustedSources); err != nil {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--trusted-source-cidrs: %w", err)}
			}
			opts.AuditOptions.ReportMaxBytes = int(reportMaxBytes)
			opts.PolicyCheck = func(memory int64) (func(context.Context, policywatch.Options) error, error) {
				return policyCheckInChild(memory, policyCheckTimeout)
			}
			if err := checkServeOptions(opts); err != nil {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			return serve.Run(ctx, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.CertDir, "cert-dir", opts.CertDir, "folder with the serving certificate tls.crt and key tls.key, reloaded when they change")
	f.StringVar(&opts.ClientCAFile, "client-ca-file", "", "PEM CA that signs the client certificate the API server presents to admission webhooks (AdmissionConfiguration); /validate and /mutate then answer only callers with one, before they take a slot (conversion reviews come without one)")
	f.StringSliceVar(&trustedSources, "trusted-source-cidrs", nil, "addresses the API server calls the webhooks from, as CIDRs or single addresses, comma-separated (EKS: the control plane's network interfaces in the cluster's subnets); their requests get a share strangers cannot take, and only they get /convert's NodePool lookups")
	f.StringVar(&opts.Host, "host", opts.Host, "address the webhooks listen on (default every interface)")
	f.IntVar(&opts.Port, "port", opts.Port, "port the webhooks listen on (HTTPS)")
	f.StringVar(&opts.HealthAddr, "health-addr", opts.HealthAddr, `address of /healthz and /readyz (plain HTTP); "0" turns them off`)
	f.StringVar(&opts.MetricsAddr, "metrics-addr", opts.MetricsAddr, fmt.Sprintf(`address of /metrics, /status and /explain (default :%d, or 127.0.0.1:%d with --metrics-secure=false); "0" turns them off`, deploy.MetricsPort, deploy.MetricsPort))
	f.BoolVar(&opts.MetricsSecure, "metrics-secure", opts.MetricsSecure, "serve /metrics, /status and /explain over HTTPS to callers the API server authenticates and authorizes (false: plain HTTP, on loopback unless --metrics-addr says otherwise)")
	f.IntVar(&opts.MaxConnections, "max-connections", opts.MaxConnections, "open connections each listener holds; a new one closes an idle one (never the API server's: a client certificate --client-ca-file verified, or an address in --trusted-source-cidrs) or is refused")
	f.Var(&memoryLimit, "memory-limit", "the container's memory limit: the Go heap limit (GOMEMLIMIT) is 85% of it and requests share what the heap limit leaves after karpgate's own needs (default $"+deploy.MemoryLimitEnv+"; 0: no limit known)")
	f.StringVar(&opts.ConfigPath, "config", opts.ConfigPath, "karpgate.yaml; a missing file means the built-in defaults")
	f.StringArrayVar(&opts.PolicyDirs, "policy", nil, "folder of user Rego policies (repeatable)")
	f.StringArrayVar(&opts.DataDirs, "data", nil, "folder of JSON/YAML data for policies (repeatable)")
	f.StringVar(&opts.Environment, "environment", "", "environment of the whole cluster, overriding karpgate.yaml (production values turn on the production rules)")
	f.BoolVar(&opts.Controller, "controller", opts.Controller, "run the drift/disruption loop (--controller=false turns it off)")
	f.BoolVar(&opts.Guard.Enabled, "rollout-guard", false, "let the disruption loop hold a drift rollout whose replacement nodes do not become Ready (karpgate resume NODEPOOL lifts a hold; turning this off lifts them all)")
	f.DurationVar(&opts.Guard.ReadyTimeout, "rollout-guard-ready-timeout", controller.DefaultReadyTimeout, "how long a node launched during a drift rollout may take to become Ready before the guard holds the rollout")
	f.IntVar(&opts.Guard.FreezeAfter, "rollout-guard-freeze-after", 0, "when the rollout guard holds this many NodePools at once, freeze drift in every NodePool as `karpgate freeze --all` does (karpgate resume --all lifts it); 0 never trips")
	f.BoolVar(&opts.Audit, "audit", opts.Audit, "judge every stored NodePool, NodeClaim and EC2NodeClass by the current rules, on the elected leader, with or without --controller: OpenReports ClusterReports (when their CRDs are installed), metrics and Events")
	f.DurationVar(&opts.AuditOptions.Interval, "audit-interval", opts.AuditOptions.Interval, "time between full audits besides those a configuration reload starts (objects are judged again as soon as they change)")
	f.Float64Var(&opts.AuditOptions.EvaluationsPerSecond, "audit-evaluations-per-second", opts.AuditOptions.EvaluationsPerSecond, "objects the audit judges per second at most, leaving the webhooks their CPU")
	f.BoolVar(&opts.AuditOptions.Reports, "audit-reports", opts.AuditOptions.Reports, "write one OpenReports ClusterReport per audited object (openreports.io/v1alpha1, when the CRDs are installed)")
	f.Float64Var(&opts.AuditOptions.ReportWritesPerSecond, "audit-report-writes-per-second", opts.AuditOptions.ReportWritesPerSecond, "ClusterReport writes per second at most; a report is written only when what it says changed")
	f.Var(&reportMaxBytes, "audit-report-max-bytes", "the most one ClusterReport takes as JSON; an object's results that do not fit take more reports (etcd refuses objects over 1.5MiB: the default leaves room for what others add)")
	f.IntVar(&opts.AuditOptions.ReportsPerObject, "audit-reports-per-object", opts.AuditOptions.ReportsPerObject, "reports an object's results may fill before results other than denials are left out (and counted in its first report); denials take as many as they need")
	f.BoolVar(&opts.AuditOptions.Events, "audit-events", opts.AuditOptions.Events, "send a Warning Event when a stored object newly breaks a deny rule, or its reports newly split or leave results out")
	f.BoolVar(&opts.AdmissionPolicy, "admission-policy", opts.AdmissionPolicy, "keep the parameter ConfigMaps of the rules' CEL twins (ValidatingAdmissionPolicy "+deploy.AdmissionPolicyName+", installed by the manifests) in step with karpgate.yaml, in the pod's namespace; warnings the twins give are not given again")
	f.BoolVar(&opts.LeaderElect, "leader-elect", opts.LeaderElect, "elect one replica to run the disruption loop")
	f.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election Lease (default the pod's namespace, else "+deploy.Namespace+")")
	f.DurationVar(&opts.Lease.Duration, "leader-election-lease-duration", opts.Lease.Duration, "how long after the leader's last renewal another replica may take the Lease")
	f.DurationVar(&opts.Lease.RenewDeadline, "leader-election-renew-deadline", opts.Lease.RenewDeadline, "how long the leader keeps trying to renew before it stops the loop (a new one then waits its turn; the webhooks keep serving)")
	f.DurationVar(&opts.Lease.RetryPeriod, "leader-election-retry-period", opts.Lease.RetryPeriod, "how often replicas try to take or renew the Lease")
	f.DurationVar(&opts.ShutdownDelay, "shutdown-delay", opts.ShutdownDelay, "after SIGTERM, keep serving this long with /readyz failing, so the Service stops routing here first (a few seconds in a Deployment)")
	f.DurationVar(&opts.RequestTimeout, "request-timeout", opts.RequestTimeout, fmt.Sprintf("time budget per request; keep it below the webhooks' timeoutSeconds (the manifests pass four fifths of it; default for %ds)", deploy.WebhookTimeoutSeconds))
	f.IntVar(&opts.MaxConcurrentRequests, "max-concurrent-requests", opts.MaxConcurrentRequests, "requests handled at once; more wait up to 1s, then get 429")
	f.Var(&checkMemory, "policy-check-memory", "resident memory of the child process that loads new policies and checks what they cost before this process compiles them; it comes off --memory-limit")
	f.Var(&maxBytes, "max-request-bytes", "largest admission review accepted (conversion reviews carry whole lists and allow 32MiB)")
	kube.register(f)
	return cmd
}

func checkServeOptions(opts serve.Options) error {
	switch {
	case opts.CertDir == "":
		return fmt.Errorf("--cert-dir is required: a folder with tls.crt and tls.key")
	case opts.RequestTimeout <= 0 || opts.RequestTimeout >= deploy.MaxWebhookTimeoutSeconds*time.Second:
		return fmt.Errorf("--request-timeout %v must be above 0 and below the webhooks' timeoutSeconds (at most %ds), so karpgate answers before the API server gives up", opts.RequestTimeout, deploy.MaxWebhookTimeoutSeconds)
	case opts.MaxConnections < opts.MaxConcurrentRequests:
		return fmt.Errorf("--max-connections %d must be at least --max-concurrent-requests %d, or slots would go unused", opts.MaxConnections, opts.MaxConcurrentRequests)
	case opts.MemoryLimit < 0:
		return fmt.Errorf("--memory-limit must not be negative")
	case opts.MaxConcurrentRequests <= 0:
		return fmt.Errorf("--max-concurrent-requests must be at least 1")
	case opts.MaxRequestBytes <= 0:
		return fmt.Errorf("--max-request-bytes must be positive")
	case opts.Guard.ReadyTimeout <= 0:
		return fmt.Errorf("--rollout-guard-ready-timeout %v must be positive: it is how long a new node may take to become Ready", opts.Guard.ReadyTimeout)
	case opts.Guard.FreezeAfter < 0:
		return fmt.Errorf("--rollout-guard-freeze-after %d: write how many held NodePools trip the cluster-wide freeze, or 0 to never trip it", opts.Guard.FreezeAfter)
	case opts.Guard.FreezeAfter > 0 && !opts.Guard.Enabled:
		return fmt.Errorf("--rollout-guard-freeze-after %d needs --rollout-guard: only the guard's holds trip the freeze", opts.Guard.FreezeAfter)
	case opts.AuditOptions.Interval <= 0 || opts.AuditOptions.EvaluationsPerSecond <= 0 || opts.AuditOptions.ReportWritesPerSecond <= 0:
		return fmt.Errorf("--audit-interval, --audit-evaluations-per-second and --audit-report-writes-per-second must be positive")
	case opts.AuditOptions.ReportMaxBytes < report.MinMaxBytes || opts.AuditOptions.ReportMaxBytes > maxReportBytes:
		b := byteSize(opts.AuditOptions.ReportMaxBytes)
		return fmt.Errorf("--audit-report-max-bytes %s: use 128KiB to 1536KiB: etcd refuses an object over 1.5MiB (its default --max-request-bytes), and what the API server and other tools add to a report needs room too (the default, 1MiB, leaves 512KiB)", b.String())
	case opts.AuditOptions.ReportsPerObject < 1:
		return fmt.Errorf("--audit-reports-per-object %d: write how many ClusterReports an object's results may fill, at least 1", opts.AuditOptions.ReportsPerObject)
	}
	if opts.Controller && opts.LeaderElect {
		return opts.Lease.Check()
	}
	return nil
}

// memoryLimitFromEnv reads $KARPGATE_MEMORY_LIMIT, the container's memory
// limit in bytes as the Deployment passes it (a resourceFieldRef), as the
// default of --memory-limit.
func memoryLimitFromEnv() (limitSize, error) {
	var l limitSize
	v, ok := os.LookupEnv(deploy.MemoryLimitEnv)
	if !ok || strings.TrimSpace(v) == "" {
		return l, nil
	}
	if err := l.Set(v); err != nil {
		return l, fmt.Errorf("$%s: %w (or pass --memory-limit)", deploy.MemoryLimitEnv, err)
	}
	return l, nil
}

func newLogger(s Streams) logr.Logger {
	return funcr.New(func(prefix, args string) {
		fmt.Fprintln(s.Err, time.Now().UTC().Format(time.RFC3339), prefix, args)
	}, funcr.Options{})
}

// maxReportBytes is the largest object etcd stores by default
// (--max-request-bytes).
const maxReportBytes = 1536 << 10

// byteSize is a flag holding bytes, written as a number or a quantity such
// as 3MiB, 3Mi or 512KiB.
type byteSize int64

func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.suffix)
		}
	}
	return fmt.Sprint(n)
}

func (b *byteSize) Set(s string) error {
	q, err := resource.ParseQuantity(strings.TrimSuffix(strings.TrimSpace(s), "B"))
	if err != nil || q.Sign() <= 0 {
		return fmt.Errorf("%q is not a size in bytes; write it like 3MiB or 3145728", s)
	}
	*b = byteSize(q.Value())
	return nil
}

func (b *byteSize) Type() string { return "bytes" }

// limitSize is a byteSize where 0 means none.
type limitSize struct{ byteSize }

func (l *limitSize) Set(s string) error {
	if strings.TrimSpace(s) == "0" {
		l.byteSize = 0
		return nil
	}
	return l.byteSize.Set(s)
}
