package install

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/webhookconfig"
)

// Image defaults. The tag moves with each release of the chart.
const (
	ImageRepository = "ghcr.io/karpgate/karpgate"
	ImageTag        = "v" + ChartVersion
	// ChartVersion is the Helm chart's version and, prefixed with v, the
	// image tag it installs by default.
	ChartVersion = "0.1.0"
)

// Options are the choices an operator makes at install time. The Helm chart
// exposes each of them as a value; the kustomize tree carries Defaults().
type Options struct {
	// Namespace holds every namespaced object.
	Namespace string
	Image     string
	// ImagePullPolicy of the karpgate container.
	ImagePullPolicy corev1.PullPolicy
	Replicas        int32
	Resources       corev1.ResourceRequirements
	Affinity        *corev1.Affinity
	Validating      WebhookPolicy
	Mutating        WebhookPolicy
	// AdmissionPolicy installs the rules' CEL twins as a
	// ValidatingAdmissionPolicy with its bindings and parameter objects,
	// and has karpgate serve keep the parameters in step with karpgate.yaml
	// (--admission-policy): the API server then enforces the twinned rules
	// itself while karpgate is down, and the validating webhook may fail
	// open (Validating.FailurePolicy Ignore) without giving them up.
	AdmissionPolicy bool
	// Environment, when set, is passed as --environment and wins over the
	// environment in karpgate.yaml and over object labels.
	Environment string
	// Controller runs the drift/disruption loop next to the webhooks.
	Controller bool
	// RolloutGuard lets the loop hold a drift rollout whose new nodes do not
	// become Ready (karpgate serve --rollout-guard). Off by default: it
	// patches NodePools.
	RolloutGuard bool
	// RolloutGuardFreezeAfter trips a cluster-wide drift freeze when the
	// guard holds this many NodePools (karpgate serve
	// --rollout-guard-freeze-after). 0, the default, never trips.
	RolloutGuardFreezeAfter int
	// Audit judges every stored Karpenter object on the elected leader
	// (karpgate serve --audit), with or without the loop.
	Audit AuditOptions
	// CertManager adds the Issuers and Certificates and has cert-manager's
	// cainjector fill the webhooks' caBundle.
	CertManager bool
	// Config is karpgate.yaml, mounted from a ConfigMap.
	Config string
	// Monitoring: scrape annotations, ServiceMonitor, alerts, dashboard.
	Monitoring MonitoringOptions
	// NetworkPolicy limits who reaches karpgate's ports.
	NetworkPolicy NetworkPolicyOptions
	// TrustedSourceCIDRs are the addresses the API server calls the
	// webhooks from (karpgate serve --trusted-source-cidrs; on EKS the
	// control plane's network interfaces in the cluster's subnets): their
	// requests get a share no other caller can take, and only they get
	// /convert's NodePool lookups. When set, the NetworkPolicy admits
	// exactly these to the webhook port, in place of
	// NetworkPolicy.APIServerCIDRs. Empty: no address is trusted.
	TrustedSourceCIDRs []string
}

// AuditOptions are karpgate serve's audit of stored objects.
type AuditOptions struct {
	Enabled bool `json:"enabled"`
	// Reports writes a ClusterReport per object (--audit-reports), when
	// the openreports.io CRDs are installed.
	Reports bool `json:"reports"`
	// InstallReportCRDs ships the openreports.io CRDs with karpgate (the
	// Helm chart's audit.installReportCRDs; kustomize's
	// components/openreports). Off by default: Kyverno, Policy Reporter
	// and others install them too, and only one may own them.
	InstallReportCRDs bool `json:"installReportCRDs"`
	// Interval is --audit-interval, a Go duration.
	Interval string `json:"interval"`
}

// WebhookPolicy is what the API server does around one webhook call.
type WebhookPolicy = webhookconfig.Policy

// DefaultConfig is the karpgate.yaml the ConfigMap ships with: every key is
// optional, so the file only names its kind and shows where settings go.
const DefaultConfig = `# karpgate.yaml: the settings the admission webhook shares with
# ` + "`karpgate lint`" + ` in CI. Every key is optional; a missing key means
# karpgate's default. Edit this ConfigMap (or the Helm value "config") to
# set which environments are production, the target Kubernetes version,
# approved AMI alias versions and per-rule actions; every setting is shown
# in config/karpgate.example.yaml.
apiVersion: karpgate.io/v1alpha1
kind: Config
`

// Defaults are the safe choices: two replicas, a validating webhook that
// fails closed (a policy gate that fails open is not a gate), a mutating
// webhook that fails open (mutations are conveniences), and karpgate kept
// off Karpenter's own nodes.
func Defaults() Options {
	return Options{
		Namespace:       deploy.Namespace,
		Image:           ImageRepository + ":" + ImageTag,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Replicas:        2,
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("100m"),
				corev1.ResourceMemory: resource.MustParse("128Mi"),
			},
			Limits: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("1"),
				corev1.ResourceMemory: resource.MustParse("512Mi"),
			},
		},
		Affinity:        OffKarpenterNodes(),
		Validating:      webhookconfig.DefaultValidatingPolicy,
		Mutating:        webhookconfig.DefaultMutatingPolicy,
		AdmissionPolicy: true,
		Controller:      true,
		Audit:           AuditOptions{Enabled: true, Reports: true, Interval: "10m"},
		CertManager:     true,
		Config:          DefaultConfig,
		NetworkPolicy:   NetworkPolicyOptions{Enabled: true, APIServerCIDRs: DefaultAPIServerCIDRs},
		Monitoring:      DefaultMonitoring(),
	}
}

// OffKarpenterNodes requires nodes that Karpenter did not launch. karpgate
// converts Karpenter's objects: on a Karpenter node it could be disrupted by
// the very NodePool it guards, and it could not be rescheduled while
// Karpenter cannot read its NodePools.
func OffKarpenterNodes() *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key:      karpenter.NodePoolLabel,
					Operator: corev1.NodeSelectorOpDoesNotExist,
				}},
			}},
		},
	}}
}
