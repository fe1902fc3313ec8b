// Package deploy holds the names that `karpgate serve` and the install
// manifests must agree on: namespace, object names, mount paths, ports,
// webhook paths and timeouts. The server's flag defaults and the generated
// manifests both read them from here, so they cannot drift apart.
package deploy

import "time"

// The names, paths, ports and timeouts serve and the manifests share.
const (
	// Namespace is where the install manifests put karpgate.
	Namespace = "karpgate"
	// Name is shared by the Deployment, ServiceAccount, Service, PDB and
	// the ClusterRole and its binding.
	Name = "karpgate"

	// ConfigMapName holds karpgate.yaml.
	ConfigMapName  = "karpgate-config"
	ConfigKey      = "karpgate.yaml" // key in the ConfigMap and file name in the mount
	ConfigMountDir = "/etc/karpgate/config"
	// PolicyMountDir holds optional user policies (ConfigMap karpgate-policies).
	PolicyMountDir      = "/etc/karpgate/policies"
	PolicyConfigMapName = "karpgate-policies"
	// LastGoodConfigMapName keeps the files of the last configuration and
	// policies that compiled, for a restart while the mounted ones are
	// broken (policies/lastgood).
	LastGoodConfigMapName = "karpgate-last-good-policy"
	// RestoreMountDir is a writable folder (an emptyDir) the last good
	// files are restored into.
	RestoreMountDir = "/var/run/karpgate"
	CertSecretName  = "karpgate-tls"
	CertMountDir    = "/etc/karpgate/certs" // tls.crt, tls.key
	WebhookPort     = 9443
	ServicePort     = 443
	HealthPort      = 8081 // /healthz, /readyz over plain HTTP
	MetricsPort     = 8080 // /metrics, /status; see MetricsScheme
	ValidatePath    = "/validate"
	MutatePath      = "/mutate"
	ConvertPath     = "/convert"
	// ValidateRolloutPlansPath judges RolloutPlan writes and NodePool
	// label changes: a NodePool may be in one rollout plan only.
	ValidateRolloutPlansPath = "/validate-rolloutplans"
	StatusPath               = "/status"
	ExplainPath              = "/explain"            // served beside /status
	LeaderElectionID         = "karpgate-controller" // Lease name, in the pod's namespace
	ValidatingWebhookName    = "validate.karpgate.io"
	MutatingWebhookName      = "mutate.karpgate.io"
	// RolloutPlansWebhookName is the validating webhook of RolloutPlans.
	RolloutPlansWebhookName = "rolloutplans.karpgate.io"
	// WebhookConfigurationName names both webhook configurations.
	WebhookConfigurationName = "karpgate"
	// AdmissionPolicyName names the ValidatingAdmissionPolicy of the rules'
	// CEL twins; its bindings and their parameter objects are named for
	// each validation action (AdmissionPolicyBindingName,
	// AdmissionPolicyParamsName).
	AdmissionPolicyName   = "karpgate"
	WebhookTimeoutSeconds = 10
	// RequestTimeout is RequestTimeoutFor(WebhookTimeoutSeconds).
	RequestTimeout = WebhookTimeoutSeconds * time.Second * 4 / 5
	// MaxWebhookTimeoutSeconds is the most the API server accepts.
	MaxWebhookTimeoutSeconds = 30
)

// Container port names: the Service, the probes, the NetworkPolicy and a
// ServiceMonitor refer to the ports by these names.
const (
	WebhookPortName = "webhook"
	HealthPortName  = "health"
	MetricsPortName = "metrics"
)

// MetricsScheme is how /metrics and /status are served in a cluster: HTTPS
// with the serving certificate, every request authenticated (TokenReview)
// and authorized (SubjectAccessReview) against the API server. `karpgate
// serve --metrics-secure=false` serves plain HTTP on loopback instead.
const MetricsScheme = "https"

// MetricsReaderClusterRole grants get on /metrics and /status; bind it to
// whatever scrapes karpgate.
const MetricsReaderClusterRole = Name + "-metrics-reader"

// MemoryLimitEnv carries the container's memory limit (the Deployment sets
// it from limits.memory) to `karpgate serve --memory-limit`, which sizes
// the Go heap limit and the memory budget for requests from it.
const MemoryLimitEnv = "KARPGATE_MEMORY_LIMIT"

// Leader election timings of the disruption loop's Lease, spelled out
// rather than left to library defaults: a leader that cannot renew for
// RenewDeadline stops its loop, and a follower takes over LeaseDuration
// after the last renewal.
const (
	LeaseDuration = 15 * time.Second
	RenewDeadline = 10 * time.Second
	RetryPeriod   = 2 * time.Second
)

// RequestTimeoutFor is the server's own budget per request for webhooks
// with the given timeoutSeconds: four fifths of it, so karpgate answers
// (with its own clear error) before the API server gives up and applies
// the failure policy. The manifests pass it as --request-timeout.
func RequestTimeoutFor(timeoutSeconds int32) time.Duration {
	return time.Duration(timeoutSeconds) * time.Second * 4 / 5
}

// ConfigPath is where serve reads karpgate.yaml by default.
const ConfigPath = ConfigMountDir + "/" + ConfigKey

// AdmissionPolicyBindingName names the binding of the twins' policy with
// one validation action (deny, warn or audit): karpgate-deny.
func AdmissionPolicyBindingName(action string) string { return AdmissionPolicyName + "-" + action }

// AdmissionPolicyParamsName names the ConfigMap that binding reads its
// parameters from, in karpgate's namespace: karpgate-vap-deny.
func AdmissionPolicyParamsName(action string) string { return Name + "-vap-" + action }
