package render

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karpgate/karpgate/install"
	"github.com/karpgate/karpgate/internal/deploy"
)

// ChartDir is where the chart lives in the manifests folder.
const ChartDir = "charts/karpgate"

// chartMeta is Chart.yaml.
type chartMeta struct {
	APIVersion  string   `yaml:"apiVersion"`
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Type        string   `yaml:"type"`
	Version     string   `yaml:"version"`
	AppVersion  string   `yaml:"appVersion"`
	Keywords    []string `yaml:"keywords"`
}

// fileConditions render a whole template only when they hold. A single
// replica gets no PodDisruptionBudget: minAvailable 1 of 1 would block every
// node drain.
var fileConditions = map[string]string{
	"Issuer":              ".Values.certManager.enabled",
	"Certificate":         ".Values.certManager.enabled",
	"PodDisruptionBudget": "gt (int .Values.replicas) 1",
	"ServiceMonitor":      ".Values.monitoring.serviceMonitor.enabled",
	"PrometheusRule":      ".Values.monitoring.prometheusRule.enabled",
	"NetworkPolicy":       ".Values.networkPolicy.enabled",
	// The twins' policy and bindings; their ConfigMaps are conditioned
	// one by one (chartObjectConditions).
	"ValidatingAdmissionPolicy":        ".Values.admissionPolicy.enabled",
	"ValidatingAdmissionPolicyBinding": ".Values.admissionPolicy.enabled",
}

func chartHoles() []hole {
	pod := []string{"spec", "template", "spec"}
	container := append(append([]string{}, pod...), "containers", "0")
	at := func(base []string, rest ...string) []string { return append(append([]string{}, base...), rest...) }
	holes := []hole{
		{kind: "Deployment", path: []string{"spec", "replicas"}, inline: "{{ .Values.replicas }}"},
		{kind: "Deployment", path: at(pod, "affinity"), block: "{{- toYaml .Values.affinity | nindent %d }}"},
		{kind: "Deployment", path: at(container, "resources"), block: "{{- toYaml .Values.resources | nindent %d }}"},
		{kind: "Deployment", path: at(container, "args", "--controller="), inline: `"--controller={{ .Values.controller.enabled }}"`},
		{kind: "Deployment", path: at(container, "args", "--rollout-guard="), inline: `"--rollout-guard={{ .Values.controller.rolloutGuard }}"`},
		{kind: "Deployment", path: at(container, "args", "--rollout-guard-freeze-after="), inline: `"--rollout-guard-freeze-after={{ .Values.controller.rolloutGuardFreezeAfter }}"`},
		{kind: "Deployment", path: at(container, "args", "--audit="), inline: `"--audit={{ .Values.audit.enabled }}"`},
		{kind: "Deployment", path: at(container, "args", "--audit-reports="), inline: `"--audit-reports={{ .Values.audit.reports }}"`},
		{kind: "Deployment", path: at(container, "args", "--audit-interval="), inline: `"--audit-interval={{ .Values.audit.interval }}"`},
		{kind: "Deployment", path: at(container, "args", "--admission-policy="), inline: `"--admission-policy={{ .Values.admissionPolicy.enabled }}"`},
		{kind: "Deployment", path: at(container, "args", "--environment="), when: ".Values.environment"},
		// Four fifths of the shorter webhook timeout (deploy.RequestTimeoutFor),
		// so karpgate answers before the API server gives up.
		{kind: "Deployment", path: at(container, "args", "--request-timeout="),
			inline: `"--request-timeout={{ mul (min (int .Values.webhooks.validating.timeoutSeconds) (int .Values.webhooks.mutating.timeoutSeconds)) 800 }}ms"`},
		// The API server's trusted addresses, when given, are what may
		// reach the webhook port (install.apiServerCIDRs).
		{kind: "NetworkPolicy", path: []string{"spec", "ingress", "0", "from"},
			block: `{{- range (.Values.trustedSourceCIDRs | default .Values.networkPolicy.apiServerCIDRs) }}{{ printf "- ipBlock:\n    cidr: %%q" . | nindent %d }}{{- end }}`},
		{kind: "Deployment", path: at(container, "args"),
			add: `{{- with .Values.trustedSourceCIDRs }}
- {{ printf "--trusted-source-cidrs=%s" (join "," .) | quote }}
{{- end }}`},
		{kind: "ConfigMap", name: deploy.ConfigMapName, path: []string{"data", deploy.ConfigKey}, blockHeader: " |", block: "{{- .Values.config | nindent %d }}"},
	}
	caBundle := `{{- if not .Values.certManager.enabled }}
caBundle: {{ required "set caBundle to the base64 PEM of the CA that signed Secret ` + deploy.CertSecretName + `, or set certManager.enabled=true" .Values.caBundle | quote }}
{{- end }}`
	for _, w := range []struct{ kind, values string }{
		{"ValidatingWebhookConfiguration", ".Values.webhooks.validating"},
		{"MutatingWebhookConfiguration", ".Values.webhooks.mutating"},
	} {
		holes = append(holes,
			hole{kind: w.kind, path: []string{"metadata", "annotations"}, when: ".Values.certManager.enabled"},
			hole{kind: w.kind, path: []string{"webhooks", "0", "failurePolicy"}, inline: "{{ " + w.values + ".failurePolicy }}"},
			hole{kind: w.kind, path: []string{"webhooks", "0", "timeoutSeconds"}, inline: "{{ " + w.values + ".timeoutSeconds }}"},
			hole{kind: w.kind, path: []string{"webhooks", "0", "clientConfig"}, add: caBundle},
		)
	}
	return holes
}

// Chart renders the Helm chart. Its values default to opts, so that `helm
// template` with default values gives the cert-manager overlay's objects
// (without the Namespace, which Helm users create with --create-namespace,
// and without the CRD patch, which NOTES.txt prints: Helm must not own
// Karpenter's CRDs, or uninstalling karpgate would delete every NodePool),
// and with the monitoring values switched on, the monitoring overlay's.
func Chart(opts install.Options) (Tree, error) {
	t := newTemplater()
	helmOpts := opts
	helmOpts.Namespace = t.value("{{ .Release.Namespace }}")
	helmOpts.Image = t.value("{{ .Values.image.repository }}:{{ .Values.image.tag }}")
	helmOpts.ImagePullPolicy = corev1.PullPolicy(t.value("{{ .Values.image.pullPolicy }}"))
	helmOpts.Environment = t.value("{{ .Values.environment }}")
	helmOpts.CertManager = true
	helmOpts.Monitoring = chartMonitoringOptions(t, opts.Monitoring)
	helmOpts.NetworkPolicy.Enabled = true // the file condition decides
	helmOpts.AdmissionPolicy = true       // the file and object conditions decide
	set, err := install.Build(helmOpts)
	if err != nil {
		return nil, err
	}
	paramsHoles, err := chartParamsHoles(opts)
	if err != nil {
		return nil, err
	}
	monitoring, err := chartMonitoringObjects(t, helmOpts)
	if err != nil {
		return nil, err
	}
	objs := append(set.Objects(), monitoring...)

	tree := Tree{}
	var kinds []string
	byKind := map[string][]runtime.Object{}
	for _, obj := range objs {
		kind := kindOf(obj)
		if kind == "Namespace" {
			continue
		}
		if _, seen := byKind[kind]; !seen {
			kinds = append(kinds, kind)
		}
		byKind[kind] = append(byKind[kind], obj)
	}
	holes := append(append(chartHoles(), chartMonitoringHoles()...), paramsHoles...)
	conditions := chartObjectConditions()
	for _, kind := range kinds {
		text, err := t.kindTemplate(kind, byKind[kind], holes, conditions)
		if err != nil {
			return nil, err
		}
		if cond, ok := fileConditions[kind]; ok {
			text = "{{- if " + cond + " }}\n" + text + "{{- end }}\n"
		}
		tree[join(ChartDir, "templates", fileName(kind))] = []byte(Header + text)
	}

	notes, err := notesText(t, helmOpts)
	if err != nil {
		return nil, err
	}
	tree[join(ChartDir, "templates", "NOTES.txt")] = []byte(notes)
	values, err := valuesFile(opts)
	if err != nil {
		return nil, err
	}
	tree[join(ChartDir, "values.yaml")] = append([]byte(Header), values...)
	schema, err := ValuesSchema()
	if err != nil {
		return nil, err
	}
	tree[join(ChartDir, "values.schema.json")] = schema
	chart, err := yamlText(chartMeta{
		APIVersion:  "v2",
		Name:        deploy.Name,
		Description: "karpgate: conversion, admission and disruption guard rails for Karpenter",
		Type:        "application",
		Version:     install.ChartVersion,
		AppVersion:  install.ImageTag,
		Keywords:    []string{"karpenter", "admission-webhook", "conversion-webhook"},
	})
	if err != nil {
		return nil, err
	}
	tree[join(ChartDir, "Chart.yaml")] = append([]byte(Header), chart...)
	return tree, nil
}

// kindTemplate renders the objects of one kind, each with its holes and,
// when conditions name it ("Kind/name"), only when its condition holds.
func (t *templater) kindTemplate(kind string, objs []runtime.Object, holes []hole, conditions map[string]string) (string, error) {
	nodes, err := objectNodes(objs)
	if err != nil {
		return "", err
	}
	docs := make([]string, 0, len(objs))
	for i, n := range nodes {
		name := objs[i].(metav1.Object).GetName()
		var dug []string
		for _, h := range holes {
			if h.kind != kind || (h.name != "" && h.name != name) {
				continue
			}
			if h.name == "" && len(nodes) != 1 {
				return "", fmt.Errorf("%s: a hole in a kind with %d objects would not say which one; give the hole an object name", kind, len(nodes))
			}
			tok, err := t.dig(n, h)
			if err != nil {
				return "", err
			}
			dug = append(dug, tok)
		}
		text, err := t.template([]*yaml.Node{n}, dug)
		if err != nil {
			return "", fmt.Errorf("%s %s template: %w", kind, name, err)
		}
		if cond, ok := conditions[kind+"/"+name]; ok {
			text = "{{- if " + cond + " }}\n" + text + "{{- end }}\n"
		}
		docs = append(docs, text)
	}
	return strings.Join(docs, "---\n"), nil
}

// template encodes nodes and turns the holes' tokens into template text.
// Braces already in the objects (alert annotations' {{ $labels.x }}, the
// dashboard's legends) are escaped first, so Helm writes them as they are.
func (t *templater) template(nodes []*yaml.Node, dug []string) (string, error) {
	for _, n := range nodes {
		t.quoteValues(n)
	}
	data, err := encodeDocuments(nodes)
	if err != nil {
		return "", err
	}
	return t.finish(escapeTemplate(string(data)), dug)
}

// escapeTemplate makes text that Go templates print as it is.
func escapeTemplate(text string) string {
	return strings.NewReplacer("{{", `{{ "{{" }}`, "}}", `{{ "}}" }}`).Replace(text)
}

// notesText is printed after install. It carries the CRD conversion patch
// for the release's namespace, for the operator to apply.
func notesText(t *templater, helmOpts install.Options) (string, error) {
	nodes, err := partialNodes(install.ConversionPatches(helmOpts))
	if err != nil {
		return "", err
	}
	patch, err := t.template(nodes, nil)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(`karpgate {{ .Chart.AppVersion }} runs in namespace {{ .Release.Namespace }} with {{ .Values.replicas }} replicas.
Validating webhook: failurePolicy {{ .Values.webhooks.validating.failurePolicy }} (Fail: NodePool and EC2NodeClass writes wait for karpgate).
Mutating webhook: failurePolicy {{ .Values.webhooks.mutating.failurePolicy }}.
{{- if .Values.admissionPolicy.enabled }}
ValidatingAdmissionPolicy ` + deploy.AdmissionPolicyName + `: the rules' CEL twins, which the API server enforces itself,
also while karpgate is down (docs/admission-policy.md).
{{- else if eq (toString .Values.webhooks.validating.failurePolicy) "Ignore" }}
WARNING: the validating webhook fails open and the rules' CEL twins are not installed:
while karpgate is down, NodePool and EC2NodeClass writes go through unjudged.
{{- end }}
{{- if .Values.certManager.enabled }}

Karpenter v1.0.x serves v1beta1 through a conversion webhook. To make karpgate
that webhook, apply this patch to Karpenter's CRDs (server-side apply moves
only spec.conversion and cert-manager's CA annotation to karpgate). From then
on a karpgate outage is a Karpenter outage: keep 2 or more replicas.

  kubectl apply --server-side --field-manager=karpgate --force-conflicts -f - <<'EOF'
`)
	for _, line := range strings.Split(strings.TrimSuffix(patch, "\n"), "\n") {
		b.WriteString("  " + line + "\n")
	}
	b.WriteString("  EOF\n{{- end }}\n")
	return b.String(), nil
}

func yamlText(v any) ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	return encodeDocuments([]*yaml.Node{&n})
}
