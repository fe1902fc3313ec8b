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
	PolicyMountDir        = "/etc/karpgate/policies"
	PolicyConfigMapName   = "karpgate-policies"
	CertSecretName        = "karpgate-tls"
	CertMountDir          = "/etc/karpgate/certs" // tls.crt, tls.key
	WebhookPort           = 9443
	ServicePort           = 443
	HealthPort            = 8081 // /healthz, /readyz over plain HTTP
	MetricsPort           = 8080 // /metrics, /status over plain HTTP
	ValidatePath          = "/validate"
	MutatePath            = "/mutate"
	ConvertPath           = "/convert"
	StatusPath            = "/status"
	LeaderElectionID      = "karpgate-controller" // Lease name, in the pod's namespace
	ValidatingWebhookName = "validate.karpgate.io"
	MutatingWebhookName   = "mutate.karpgate.io"
	// WebhookConfigurationName names both webhook configurations.
	WebhookConfigurationName = "karpgate"
	WebhookTimeoutSeconds    = 10
	// RequestTimeout is the server's own budget per request: below
	// WebhookTimeoutSeconds so that karpgate answers with a clear error
	// before the API server gives up and applies the failure policy.
	RequestTimeout = 8 * time.Second
)

// ConfigPath is where serve reads karpgate.yaml by default.
const ConfigPath = ConfigMountDir + "/" + ConfigKey
