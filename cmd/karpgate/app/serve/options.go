package serve

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/karpgate/karpgate/disruption/controller"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/webhook"
)

// Options are `karpgate serve`'s flags, resolved.
type Options struct {
	// RestConfig reaches the cluster.
	RestConfig *rest.Config
	Log        logr.Logger

	// CertDir holds tls.crt and tls.key; Host and Port are where the
	// webhooks listen (empty Host: every interface).
	CertDir string
	Host    string
	Port    int
	// HealthAddr serves /healthz and /readyz, MetricsAddr /metrics and
	// /status, both over plain HTTP; "0" turns one off.
	HealthAddr  string
	MetricsAddr string

	// ConfigPath is karpgate.yaml (missing: built-in defaults).
	ConfigPath  string
	PolicyDirs  []string
	DataDirs    []string
	Environment string

	// Controller runs the disruption loop; LeaderElect elects the replica
	// that runs it, with a Lease in LeaderElectionNamespace.
	Controller  bool
	LeaderElect bool
	// Guard is the disruption loop's rollout guard (off unless enabled).
	Guard                   controller.GuardOptions
	LeaderElectionNamespace string

	// ShutdownDelay keeps serving, with /readyz failing, this long after
	// ctx ends, so that the Service stops routing to this replica before
	// its listener closes: a fail-closed webhook must not refuse requests
	// during a rolling update.
	ShutdownDelay time.Duration

	RequestTimeout        time.Duration
	MaxConcurrentRequests int
	MaxRequestBytes       int64

	// ReloadInterval and CertReloadInterval tune how often the mounted
	// files are checked; zero keeps the defaults.
	ReloadInterval     time.Duration
	CertReloadInterval time.Duration
}

// Defaults returns the options `karpgate serve` starts from; its flag
// defaults come from here and from package deploy.
func Defaults() Options {
	return Options{
		CertDir:               deploy.CertMountDir,
		Port:                  deploy.WebhookPort,
		HealthAddr:            ":" + strconv.Itoa(deploy.HealthPort),
		MetricsAddr:           ":" + strconv.Itoa(deploy.MetricsPort),
		ConfigPath:            deploy.ConfigPath,
		Controller:            true,
		LeaderElect:           true,
		RequestTimeout:        deploy.RequestTimeout,
		MaxConcurrentRequests: webhook.DefaultMaxInFlight,
		MaxRequestBytes:       webhook.DefaultMaxBodyBytes,
	}
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
