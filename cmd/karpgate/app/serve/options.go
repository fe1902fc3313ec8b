package serve

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	auditcontroller "github.com/karpgate/karpgate/audit/controller"
	"github.com/karpgate/karpgate/audit/report"
	"github.com/karpgate/karpgate/disruption/controller"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/serving"
	"github.com/karpgate/karpgate/policies/policywatch"
	"github.com/karpgate/karpgate/webhook"
)

// Options are `karpgate serve`'s flags, resolved.
type Options struct {
	// RestConfig reaches the cluster.
	RestConfig *rest.Config
	Log        logr.Logger
	// KeepProcessLoggers leaves controller-runtime's and klog's
	// process-wide loggers alone instead of pointing them at Log: a process
	// that runs several serves (the Karpenter e2e tests' local cluster per
	// release) sets them once itself, before any client logs through them.
	KeepProcessLoggers bool

	// CertDir holds tls.crt and tls.key; Host and Port are where the
	// webhooks listen (empty Host: every interface).
	CertDir string
	Host    string
	Port    int
	// ClientCAFile, when set, is the CA that signs the API server's client
	// certificate for admission webhooks (its AdmissionConfiguration);
	// /validate and /mutate then answer no caller without one.
	ClientCAFile string
	// TrustedSources are the addresses the API server calls the webhooks
	// from (--trusted-source-cidrs): its requests get a share of the
	// connections, request slots and memory that no stranger can take,
	// and /convert reads NodePools only for them. Empty: no address is
	// trusted, and /convert reads NodePools for every caller, since the
	// API server presents no certificate to conversion webhooks.
	TrustedSources serving.TrustedSources
	// HealthAddr serves /healthz and /readyz over plain HTTP; "0" turns
	// them off.
	HealthAddr string
	// MetricsAddr serves /metrics and /status; "0" turns them off, ""
	// means the default for MetricsSecure: every interface when secure,
	// loopback when not.
	MetricsAddr string
	// MetricsSecure serves metrics over HTTPS with the serving certificate
	// and lets only callers the API server authenticates and authorizes
	// (get on the path, a nonResourceURL) read them.
	MetricsSecure bool
	// MaxConnections caps the open connections of each listener.
	MaxConnections int

	// ConfigPath is karpgate.yaml (missing: built-in defaults).
	ConfigPath  string
	PolicyDirs  []string
	DataDirs    []string
	Environment string

	// Controller runs the disruption loop; LeaderElect elects the replica
	// that runs it, with a Lease in LeaderElectionNamespace held with the
	// given timings. The loop runs in a manager of its own: losing the
	// Lease stops the loop and drains the webhooks as a SIGTERM does,
	// instead of cutting the requests they are answering.
	Controller  bool
	LeaderElect bool
	Lease       LeaseTimings
	// Guard is the disruption loop's rollout guard (off unless enabled).
	Guard controller.GuardOptions
	// Audit judges every stored Karpenter object by the current rules, on
	// the elected leader, with or without Controller: OpenReports
	// ClusterReports, metrics and Events. See package audit/controller.
	Audit                   bool
	AuditOptions            AuditOptions
	LeaderElectionNamespace string

	// ShutdownDelay keeps serving, with /readyz failing, this long after
	// ctx ends, so that the Service stops routing to this replica before
	// its listener closes: a fail-closed webhook must not refuse requests
	// during a rolling update.
	ShutdownDelay time.Duration

	RequestTimeout        time.Duration
	MaxConcurrentRequests int
	MaxRequestBytes       int64
	// MemoryLimit is the container's memory limit in bytes (0: unknown).
	// From it serve sets the Go heap limit and the memory budget requests
	// share; see planMemory.
	MemoryLimit int64
	// PolicyCheck, when set, makes the check of new policies' cost that
	// runs where they load (see policywatch.Options.Check), given what it
	// may hold; `karpgate serve` runs it in a child process. nil checks in
	// this process.
	PolicyCheck func(memory int64) (func(context.Context, policywatch.Options) error, error)
	// PolicyCheckMemory is the resident memory the policy check may hold.
	PolicyCheckMemory int64
	// KeepLastGood keeps the last configuration and policies that compiled
	// in a ConfigMap (deploy.LastGoodConfigMapName, in the pod's
	// namespace), and starts on them, degraded, when the mounted ones do
	// not compile.
	KeepLastGood bool

	// AdmissionPolicy keeps the parameters of the rules' CEL twins
	// (ValidatingAdmissionPolicy karpgate) in step with karpgate.yaml and
	// the Karpenter release judged, in the ConfigMaps of
	// AdmissionPolicyNamespace (default the pod's namespace), and lets the
	// validating webhook leave to a Warn twin the warning it gives; see
	// package policies/twinsync.
	AdmissionPolicy          bool
	AdmissionPolicyNamespace string

	// ReloadInterval and CertReloadInterval tune how often the mounted
	// files are checked; zero keeps the defaults.
	ReloadInterval     time.Duration
	CertReloadInterval time.Duration
}

// Defaults returns the options `karpgate serve` starts from; its flag
// defaults come from here and from package deploy.
func Defaults() Options {
	return Options{
		CertDir:        deploy.CertMountDir,
		Port:           deploy.WebhookPort,
		HealthAddr:     ":" + strconv.Itoa(deploy.HealthPort),
		MetricsSecure:  true,
		MaxConnections: serving.DefaultMaxConnections,
		ConfigPath:     deploy.ConfigPath,
		Controller:     true,
		Audit:          true,
		AuditOptions: AuditOptions{
			Interval: auditcontroller.DefaultInterval, EvaluationsPerSecond: auditcontroller.DefaultEvaluationsPerSecond,
			ReportWritesPerSecond: auditcontroller.DefaultReportWritesPerSecond, Reports: true, Events: true,
			ReportMaxBytes: report.DefaultMaxBytes, ReportsPerObject: report.DefaultMaxReports,
		},
		LeaderElect:           true,
		Lease:                 LeaseTimings{Duration: deploy.LeaseDuration, RenewDeadline: deploy.RenewDeadline, RetryPeriod: deploy.RetryPeriod},
		RequestTimeout:        deploy.RequestTimeout,
		MaxConcurrentRequests: webhook.DefaultMaxInFlight,
		MaxRequestBytes:       webhook.DefaultMaxBodyBytes,
		PolicyCheckMemory:     DefaultPolicyCheckMemory,
		KeepLastGood:          true,
	}
}

// AuditOptions tune the audit of stored objects; zero fields keep the
// audit's defaults.
type AuditOptions struct {
	Interval              time.Duration
	EvaluationsPerSecond  float64
	ReportWritesPerSecond float64
	// ReportMaxBytes bounds one ClusterReport as JSON; ReportsPerObject
	// how many an object's results may fill besides its denials.
	ReportMaxBytes, ReportsPerObject int
	// Reports writes ClusterReports when the openreports.io CRDs are
	// installed; Events sends an Event when an object newly breaks a deny
	// rule.
	Reports, Events bool
}

// LeaseTimings are the leader election's: a leader that cannot renew for
// RenewDeadline steps down; a follower takes over Duration after the last
// renewal; both retry every RetryPeriod.
type LeaseTimings struct {
	Duration, RenewDeadline, RetryPeriod time.Duration
}

// Check refuses timings client-go's elector would reject or that could
// leave two leaders.
func (l LeaseTimings) Check() error {
	switch {
	case l.RetryPeriod <= 0:
		return fmt.Errorf("--leader-election-retry-period %v must be positive", l.RetryPeriod)
	case l.RenewDeadline*5 <= l.RetryPeriod*6: // client-go's jitter factor 1.2
		return fmt.Errorf("--leader-election-renew-deadline %v must be more than 1.2 times --leader-election-retry-period %v", l.RenewDeadline, l.RetryPeriod)
	case l.Duration <= l.RenewDeadline:
		return fmt.Errorf("--leader-election-lease-duration %v must be longer than --leader-election-renew-deadline %v, or a new leader could start before the old one stops", l.Duration, l.RenewDeadline)
	}
	return nil
}

// metricsAddr resolves the default address of /metrics: every interface
// when callers are authenticated, loopback when anyone who reaches the
// port could read it.
func (o Options) metricsAddr() string {
	switch {
	case o.MetricsAddr != "":
		return o.MetricsAddr
	case o.MetricsSecure:
		return ":" + strconv.Itoa(deploy.MetricsPort)
	}
	return "127.0.0.1:" + strconv.Itoa(deploy.MetricsPort)
}

// serviceAccountNamespace is where the kubelet mounts the pod's namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// PodNamespace is the pod's namespace from its service account, or
// karpgate's install namespace outside a pod.
func PodNamespace() string {
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil {
		if ns := strings.TrimSpace(string(b)); ns != "" {
			return ns
		}
	}
	return deploy.Namespace
}
