package render

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/karpgate/karpgate/install"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Values is the chart's values.yaml. values.yaml is this type filled from
// install.Defaults(), and values.schema.json is generated from the type, so
// `helm install` refuses a value the chart does not have or of the wrong
// type. Field comments go in valueDocs, keyed by the value's path.
type Values struct {
	Replicas  int32                       `json:"replicas"`
	Image     ImageValues                 `json:"image"`
	Resources corev1.ResourceRequirements `json:"resources"`
	Affinity  *corev1.Affinity            `json:"affinity"`
	Webhooks  WebhooksValues              `json:"webhooks"`
	// AdmissionPolicy installs the rules' CEL twins
	// (install.Options.AdmissionPolicy).
	AdmissionPolicy EnabledValue              `json:"admissionPolicy"`
	Environment     string                    `json:"environment"`
	Controller      ControllerValues          `json:"controller"`
	Audit           install.AuditOptions      `json:"audit"`
	CertManager     EnabledValue              `json:"certManager"`
	CABundle        string                    `json:"caBundle"`
	Config          string                    `json:"config"`
	Monitoring      install.MonitoringOptions `json:"monitoring"`
	NetworkPolicy   NetworkPolicyValues       `json:"networkPolicy"`
	// TrustedSourceCIDRs is install.Options.TrustedSourceCIDRs.
	TrustedSourceCIDRs []string `json:"trustedSourceCIDRs"`
}

// ImageValues name the karpgate image.
type ImageValues struct {
	Repository string            `json:"repository"`
	Tag        string            `json:"tag"`
	PullPolicy corev1.PullPolicy `json:"pullPolicy"`
}

// WebhooksValues are the two webhook configurations' policies.
type WebhooksValues struct {
	Validating WebhookValues `json:"validating"`
	Mutating   WebhookValues `json:"mutating"`
}

// WebhookValues are what the API server does around one webhook call.
type WebhookValues struct {
	FailurePolicy  admissionregistrationv1.FailurePolicyType `json:"failurePolicy"`
	TimeoutSeconds int32                                     `json:"timeoutSeconds"`
}

// ControllerValues switch the disruption loop and its rollout guard.
type ControllerValues struct {
	Enabled      bool `json:"enabled"`
	RolloutGuard bool `json:"rolloutGuard"`
	// RolloutGuardFreezeAfter is --rollout-guard-freeze-after.
	RolloutGuardFreezeAfter int `json:"rolloutGuardFreezeAfter"`
}

// NetworkPolicyValues say who may reach karpgate's ports.
type NetworkPolicyValues struct {
	Enabled        bool     `json:"enabled"`
	APIServerCIDRs []string `json:"apiServerCIDRs"`
}

// EnabledValue switches a feature.
type EnabledValue struct {
	Enabled bool `json:"enabled"`
}

// valuesFrom fills Values from install options.
func valuesFrom(opts install.Options) (Values, error) {
	repo, tag, ok := strings.Cut(opts.Image, ":")
	if !ok {
		return Values{}, fmt.Errorf("image %q has no tag; write repository:tag", opts.Image)
	}
	webhook := func(p install.WebhookPolicy) WebhookValues {
		return WebhookValues{FailurePolicy: p.FailurePolicy, TimeoutSeconds: p.TimeoutSeconds}
	}
	return Values{
		Replicas:        opts.Replicas,
		Image:           ImageValues{Repository: repo, Tag: tag, PullPolicy: opts.ImagePullPolicy},
		Resources:       opts.Resources,
		Affinity:        opts.Affinity,
		Webhooks:        WebhooksValues{Validating: webhook(opts.Validating), Mutating: webhook(opts.Mutating)},
		AdmissionPolicy: EnabledValue{Enabled: opts.AdmissionPolicy},
		Environment:     opts.Environment,
		Controller:      ControllerValues{Enabled: opts.Controller, RolloutGuard: opts.RolloutGuard, RolloutGuardFreezeAfter: opts.RolloutGuardFreezeAfter},
		Audit:           opts.Audit,
		CertManager:     EnabledValue{Enabled: opts.CertManager},
		Config:          opts.Config,
		Monitoring:      opts.Monitoring,
		NetworkPolicy: NetworkPolicyValues{
			Enabled:        opts.NetworkPolicy.Enabled,
			APIServerCIDRs: opts.NetworkPolicy.APIServerCIDRs,
		},
		// Never null in values.yaml: the schema types it as a list.
		TrustedSourceCIDRs: append([]string{}, opts.TrustedSourceCIDRs...),
	}, nil
}

// valueDoc documents one value: its comment in values.yaml and description
// in the schema, and constraints the Go type cannot express.
type valueDoc struct {
	comment string
	schema  func(*Schema)
}

func valueDocs() map[string]valueDoc {
	timeout := valueDoc{fmt.Sprintf("1 to 30. karpgate answers within four fifths of the shorter of the two webhooks'\ntimeouts (--request-timeout; %s for %ds), before the API server gives up.", deploy.RequestTimeout, deploy.WebhookTimeoutSeconds),
		func(s *Schema) { s.Minimum, s.Maximum = num(1), num(30) }}
	duration := func(comment string) valueDoc {
		return valueDoc{comment, func(s *Schema) { s.Pattern = prometheusDuration; s.MinLength = intp(1) }}
	}
	labels := func(what string) valueDoc { return valueDoc{comment: "Labels added to the " + what + "."} }
	return map[string]valueDoc{
		"replicas": {"Pods serving the webhooks. Keep 2 or more: once Karpenter's CRDs convert through\nkarpgate, a karpgate outage is a Karpenter outage. With 2 or more a\nPodDisruptionBudget (minAvailable 1) keeps one through node drains.",
			func(s *Schema) { s.Minimum = num(1) }},
		"image":                              {comment: "The karpgate image."},
		"image.repository":                   {"Repository, without the tag.", func(s *Schema) { s.MinLength = intp(1) }},
		"image.tag":                          {"Tag; the chart's appVersion unless set.", func(s *Schema) { s.MinLength = intp(1) }},
		"image.pullPolicy":                   {comment: "Always, IfNotPresent or Never."},
		"resources":                          {comment: "Requests and limits of the karpgate container. karpgate keeps 64 MiB of\nlimits.memory for the child process that checks new policies, sets GOMEMLIMIT to\n85% of the rest and shares what that leaves after its own needs among the\nrequests in flight; below 476Mi it refuses to start, because one 32 MiB\nconversion review and one 3 MiB admission review must fit."},
		"affinity":                           {comment: "The default keeps karpgate off nodes Karpenter launched (label " + karpenter.NodePoolLabel + "):\nkarpgate must keep running while Karpenter is down, and must not be disrupted by\nthe NodePools it guards."},
		"webhooks":                           {comment: "What the API server does around each webhook call."},
		"webhooks.validating":                {comment: "The validating webhook (NodePools and EC2NodeClasses, CREATE and UPDATE)."},
		"webhooks.validating.failurePolicy":  {comment: "Fail: a policy gate that fails open is not a gate. While karpgate is down, NodePool\nand EC2NodeClass creates and updates are refused; to lift the gate in an emergency:\n  kubectl delete validatingwebhookconfiguration " + deploy.WebhookConfigurationName + "\nIgnore is the outage mode: with admissionPolicy.enabled, a karpgate outage blocks no\nwrite and the API server still enforces the rules that have CEL twins; what it gives\nup (the rules without twins, dated waivers) is in docs/admission-policy.md."},
		"webhooks.validating.timeoutSeconds": timeout,
		"webhooks.mutating":                  {comment: "The mutating webhook, which fills in what v1 requires."},
		"webhooks.mutating.failurePolicy":    {comment: "Ignore: mutations are conveniences; while karpgate is down objects are stored unmutated."},
		"webhooks.mutating.timeoutSeconds":   timeout,
		"admissionPolicy":                    {comment: "The rules' CEL twins (policies/README.md): ValidatingAdmissionPolicy " + deploy.AdmissionPolicyName + ", bound with\nthe actions Deny, Warn and Audit, each with a parameter ConfigMap that karpgate\nkeeps in step with karpgate.yaml. The API server enforces them itself, also while\nkarpgate is down. Needs Kubernetes 1.30 or newer."},
		"admissionPolicy.enabled":            {comment: "Install the policy, its bindings and parameters, and run karpgate serve with\n--admission-policy."},
		"environment":                        {comment: "When set, passed as --environment: the environment of every object karpgate\nchecks (\"production\", for example), winning over karpgate.yaml and object labels."},
		"controller":                         {comment: "The drift/disruption loop (karpgate serve --controller)."},
		"controller.enabled":                 {comment: "Run the loop: metrics, events and /status per NodePool."},
		"controller.rolloutGuard":            {comment: "Hold a drift rollout whose new nodes do not become Ready, by adding a budget\n{nodes: \"0\", reasons: [Drifted]} to the NodePool; karpgate resume NODEPOOL lifts it."},
		"controller.rolloutGuardFreezeAfter": {"When the rollout guard holds this many NodePools at once, freeze drift in every\nNodePool (as karpgate freeze --all does); karpgate resume --all lifts it. 0: never.",
			func(s *Schema) { s.Minimum = num(0) }},
		"audit":                              {comment: "The audit of stored objects (karpgate serve --audit, on the leader): every stored\nNodePool, NodeClaim and EC2NodeClass judged by the current rules, into OpenReports\nClusterReports, metrics and Events (docs/audit.md)."},
		"audit.enabled":                      {comment: "Run the audit, with or without controller.enabled."},
		"audit.reports":                      {comment: "Write one ClusterReport (openreports.io/v1alpha1) per object, when the CRDs are installed."},
		"audit.installReportCRDs":            {comment: "Install the openreports.io Report and ClusterReport CRDs with karpgate (kept on\nuninstall). Leave it false when Kyverno, Policy Reporter or another tool installs them."},
		"audit.interval":                     {"Time between full audits besides those a reload starts (a Go duration).", func(s *Schema) { s.Pattern = goDuration }},
		"certManager":                        {comment: "cert-manager issues the serving certificate (Secret " + deploy.CertSecretName + ") from a CA of its own and\ninjects the CA into the webhook configurations. Without it, create Secret\n" + deploy.CertSecretName + " (tls.crt, tls.key) yourself and set caBundle."},
		"certManager.enabled":                {comment: "Needs cert-manager's CRDs and controller in the cluster."},
		"caBundle":                           {comment: "Base64 PEM of the CA that signed Secret " + deploy.CertSecretName + "; only used when certManager.enabled is false."},
		"config":                             {comment: "karpgate.yaml, mounted read-only at " + deploy.ConfigPath + "."},
		"monitoring":                         {comment: "Prometheus and Grafana. The ServiceMonitor and PrometheusRule need the\nprometheus-operator CRDs (monitoring.coreos.com). Metrics are served over " + strings.ToUpper(deploy.MetricsScheme) + "\nto callers allowed GET on " + deploy.MetricsPath + " (ClusterRole " + deploy.MetricsReaderClusterRole + ")."},
		"monitoring.scrapeAnnotations":       {comment: "prometheus.io/scrape, /scheme, /port and /path on Service " + deploy.MetricsServiceName + ", for\nPrometheus set-ups that find targets by annotation."},
		"monitoring.serviceMonitor":          {comment: "A ServiceMonitor for Service " + deploy.MetricsServiceName + ": HTTPS, Prometheus's own service account\ntoken, the CA from Secret " + deploy.CertSecretName + " (cert-manager writes ca.crt there)."},
		"monitoring.serviceMonitor.enabled":  {comment: "Render the ServiceMonitor."},
		"monitoring.serviceMonitor.interval": duration("Time between scrapes, a Prometheus duration."),
		"monitoring.serviceMonitor.labels":   labels("ServiceMonitor, for a Prometheus whose serviceMonitorSelector\nwants some (release: kube-prometheus-stack, for example)"),
		"monitoring.serviceMonitor.insecureSkipVerify":   {comment: "Scrape without checking the serving certificate: only for a Secret " + deploy.CertSecretName + "\nwithout ca.crt. The token is then sent to whoever answers on the pod's address."},
		"monitoring.prometheusServiceAccount":            {comment: "When name is set, bind this service account (Prometheus's) to ClusterRole\n" + deploy.MetricsReaderClusterRole + ", which may GET " + deploy.MetricsPath + ", however Prometheus finds karpgate."},
		"monitoring.prometheusServiceAccount.name":       {comment: "prometheus-k8s in kube-prometheus, for example."},
		"monitoring.prometheusServiceAccount.namespace":  {comment: "Its namespace (monitoring in kube-prometheus)."},
		"monitoring.prometheusRule":                      {comment: "Recording rules and alerts, each with a runbook line and a link into docs/runbooks.md."},
		"monitoring.prometheusRule.enabled":              {comment: "Render the PrometheusRule."},
		"monitoring.prometheusRule.labels":               labels("PrometheusRule, for a Prometheus whose ruleSelector wants some"),
		"monitoring.prometheusRule.alerts":               {comment: "Alert thresholds. helm --set reads a fraction such as 0.5 as text: use --set-json for those."},
		"monitoring.prometheusRule.alerts.driftStuckFor": duration("KarpgateDriftRolloutStuck: how long a NodePool's drifted NodeClaims may go without\ndecreasing while its budgets allow drift disruptions."),
		"monitoring.prometheusRule.alerts.blockedFor":    duration("KarpgateNodePoolDisruptionBlocked: how long a NodePool with nodes may allow no\nvoluntary disruption at all."),
		"monitoring.prometheusRule.alerts.frozenFor":     duration("KarpgateDriftFrozen: how long drift may stay frozen in a NodePool (karpgate freeze,\nor the rollout guard's cluster-wide trip)."),
		"monitoring.prometheusRule.alerts.denialsPerMinute": {"KarpgateAdmissionDenialsHigh: denials a minute by one rule, over 15 minutes.",
			func(s *Schema) { s.ExclusiveMinimum = num(0) }},
		"monitoring.prometheusRule.alerts.errorRatio": {"The error alerts: the share of failed conversions, failed evaluations or non-2xx\nanswers (0.05 is 5%).",
			func(s *Schema) { s.ExclusiveMinimum, s.ExclusiveMaximum = num(0), num(1) }},
		"monitoring.prometheusRule.alerts.certificateExpiryDays": {"KarpgateServingCertificateExpiresSoon: days left on the serving certificate.",
			func(s *Schema) { s.Minimum = num(1) }},
		"monitoring.dashboard":         {comment: "A ConfigMap with the Grafana dashboard (also in dashboards/karpgate.json)."},
		"monitoring.dashboard.enabled": {comment: "Render the ConfigMap."},
		"monitoring.dashboard.labels":  labels("ConfigMap; grafana_dashboard is what Grafana's dashboard sidecar looks for"),
		"networkPolicy":                {comment: "A NetworkPolicy for karpgate's pods: the API server on the webhook port, any pod\non the metrics port (every request there is authenticated and authorized, and\nneeds the ClusterRole " + deploy.MetricsReaderClusterRole + "), the kubelet on the probe port."},
		"networkPolicy.enabled":        {comment: "Render the NetworkPolicy."},
		"networkPolicy.apiServerCIDRs": {"Addresses that may reach the webhook port when trustedSourceCIDRs is empty: only\nthe API server calls it. The default admits any address because the chart cannot\nknow the API server's; narrow it to your control plane's (EKS: the subnets of the\ncontrol plane's network interfaces; kubeadm: the control-plane nodes).",
			// An empty list would leave the rule without peers, which a
			// NetworkPolicy reads as every address: refuse it instead.
			func(s *Schema) { s.MinItems = intp(1); s.Items.MinLength = intp(1) }},
		"trustedSourceCIDRs": {"The addresses the API server calls the webhooks from, as CIDRs or single addresses\n(karpgate serve --trusted-source-cidrs). Their requests get a share of karpgate's\nconnections, request slots and memory no other caller can take, and only they get\n/convert's NodePool lookups; the NetworkPolicy then admits exactly these to the\nwebhook port. Every address listed is taken for the API server: on EKS, the CIDRs\nof the subnets that hold the control plane's network interfaces (description\n\"Amazon EKS <cluster>\"), when nothing else lives there. Empty: no address is trusted.",
			func(s *Schema) { s.Items.MinLength = intp(1) }},
	}
}

// goDuration is time.ParseDuration's syntax for a positive duration.
const goDuration = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`

// prometheusDuration is model.ParseDuration's syntax, not empty.
const prometheusDuration = `^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$`

// valuesFile writes values.yaml from opts, each value with its comment.
func valuesFile(opts install.Options) ([]byte, error) {
	values, err := valuesFrom(opts)
	if err != nil {
		return nil, err
	}
	// encoding/json keeps the struct's field order, and YAML reads JSON.
	data, err := json.Marshal(values)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	docs := valueDocs()
	blockStyle(root, "", docs)
	return encodeDocuments([]*yaml.Node{root})
}

// blockStyle turns the flow style JSON came in into block style and adds
// each documented value's comment above its key.
func blockStyle(n *yaml.Node, path string, docs map[string]valueDoc) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.Contains(n.Value, "\n") {
		n.Style = yaml.LiteralStyle
	}
	if n.Kind != yaml.MappingNode {
		for _, c := range n.Content {
			blockStyle(c, path, docs)
		}
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, child := n.Content[i], joinPath(path, n.Content[i].Value)
		key.Style = 0
		key.HeadComment = docs[child].comment
		blockStyle(n.Content[i+1], child, docs)
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
