package install

import (
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/karpgate/karpgate/internal/deploy"
)

// RunbooksURL is the page of runbooks, docs/runbooks.md: one section per
// alert, headed by the alert's name, with what it means, how to check and
// how to fix.
const RunbooksURL = "https://github.com/karpgate/karpgate/blob/main/docs/runbooks.md"

// RunbookURL is where an alert's runbook_url points: its own section of the
// runbooks page, whose anchor is GitHub's slug of the heading, the alert's
// name in lower case.
func RunbookURL(alert string) string {
	return RunbooksURL + "#" + strings.ToLower(alert)
}

// Rule group names.
const (
	RecordingGroup = "karpgate.rules"
	AlertingGroup  = "karpgate.alerts"
)

// Recorded series. The per-NodePool series come from the elected leader
// only, but during a leader change two pods may export them: the records
// take the max over pods, so nothing is counted twice. They also give the
// range functions of the alerts one series per NodePool to read.
const (
	RecordAllowed = "karpgate:nodepool_allowed_disruptions:max"
	RecordDrifted = "karpgate:nodepool_drifted_nodeclaims:sum"
	RecordBlocked = "karpgate:nodepool_blocked_for_every_reason"
)

// An Alert is one alerting rule and what an operator does about it.
type Alert struct {
	Name     string
	Expr     string
	For      string // a Prometheus duration, or "" to fire on the first evaluation
	Severity string // warning or critical
	Summary  string
	// Description and Summary may use {{ $labels.x }} and {{ $value }}.
	Description string
	// Runbook is one line: what to look at and what to do.
	Runbook string
}

// RecordingRules are the series the alerts and the runbooks refer to.
func RecordingRules() []monitoringv1.Rule {
	record := func(name, expr string) monitoringv1.Rule {
		return monitoringv1.Rule{Record: name, Expr: intstr.FromString(expr)}
	}
	return []monitoringv1.Rule{
		record(RecordAllowed, `max by (nodepool, reason) (karpgate_nodepool_allowed_disruptions)`),
		// A NodePool with no drifted NodeClaim has no drifted series at
		// all; the zero from its node count keeps the record continuous,
		// so a rollout that finished and started again is seen as such.
		record(RecordDrifted, `max by (nodepool) (sum without (reason) (karpgate_nodepool_drifted_nodeclaims))
or
max by (nodepool) (karpgate_nodepool_nodes) * 0`),
		// 1 while a NodePool with nodes allows no voluntary disruption for
		// any reason; an empty NodePool allows none either (10% of 0 is 0)
		// but has nothing to disrupt.
		record(RecordBlocked, `(max by (nodepool) (karpgate_nodepool_allowed_disruptions) == bool 0)
* on (nodepool)
(max by (nodepool) (karpgate_nodepool_nodes) > bool 0)`),
	}
}

// Alerts are karpgate's alerting rules with the given thresholds.
func Alerts(t AlertThresholds) []Alert {
	return []Alert{
		{
			Name:     "KarpgateNodePoolBudgetsInvalid",
			Expr:     `max by (nodepool) (karpgate_nodepool_invalid_budgets) > 0`,
			For:      "5m",
			Severity: "warning",
			Summary:  "NodePool {{ $labels.nodepool }}: Karpenter disrupts none of its nodes",
			Description: "{{ $value }} disruption budget(s) of NodePool {{ $labels.nodepool }} cannot be used (a schedule Karpenter's cron parser rejects, for example). " +
				"Karpenter then allows zero voluntary disruptions of the NodePool for every reason: no drift replacement, no consolidation.",
			Runbook: "Run `karpgate lint` or `karpgate budgets` on the NodePool's manifest: they name the broken budget field and the fix; correct spec.disruption.budgets.",
		},
		{
			Name: "KarpgateDriftRolloutStuck",
			// Drifted throughout the window, never fewer than the sample
			// before (resets counts every decrease), drift disruptions
			// allowed throughout, and data as old as the window, so that a
			// fresh Prometheus does not judge a rollout on minutes.
			Expr: `min_over_time(` + RecordDrifted + `[` + t.DriftStuckFor + `]) > 0
and on (nodepool)
resets(` + RecordDrifted + `[` + t.DriftStuckFor + `]) == 0
and on (nodepool)
min_over_time(` + RecordAllowed + `{reason="Drifted"}[` + t.DriftStuckFor + `]) > 0
and on (nodepool)
` + RecordDrifted + ` offset ` + t.DriftStuckFor,
			Severity: "warning",
			Summary:  "NodePool {{ $labels.nodepool }}: the drift rollout is stuck",
			Description: "NodePool {{ $labels.nodepool }} has had drifted NodeClaims (at least {{ $value }}) for " + t.DriftStuckFor +
				" without one being replaced, although its budgets allowed drift disruptions all along.",
			Runbook: "Run `karpgate status --nodepool NODEPOOL` and `karpgate explain nodeclaim/NAME` on a drifted NodeClaim: do-not-disrupt pods or nodes, PodDisruptionBudgets that allow no eviction (karpgate_nodepool_drift_blocked_by_pods_nodes counts those nodes) and nodes stuck disrupting hold a rollout; then Karpenter's DisruptionBlocked events and logs.",
		},
		{
			Name:        "KarpgateRolloutGuardHolding",
			Expr:        `max by (nodepool) (karpgate_nodepool_rollout_guard_held) == 1`,
			For:         "1m",
			Severity:    "warning",
			Summary:     "NodePool {{ $labels.nodepool }}: the rollout guard holds its drift rollout",
			Description: "The new nodes of NodePool {{ $labels.nodepool }}'s drift rollout did not become Ready in time, so karpgate added a budget {nodes: \"0\", reasons: [Drifted]}: no more drifted nodes are replaced until it is lifted.",
			Runbook:     "Look at the new nodes (`kubectl get nodeclaims -l karpenter.sh/nodepool=NODEPOOL`), fix the NodePool or EC2NodeClass that broke them, then run `karpgate resume NODEPOOL`.",
		},
		{
			Name: "KarpgateRolloutStalled",
			// The gate that failed, by plan and wave; the phase keeps an
			// aborted plan (a person's choice) out.
			Expr: `max by (plan, wave, gate) (karpgate_rolloutplan_gate_failing) == 1
and on (plan)
max by (plan) (karpgate_rolloutplan_phase{phase="Failed"}) == 1`,
			For:      "1m",
			Severity: "warning",
			Summary:  "RolloutPlan {{ $labels.plan }}: wave {{ $labels.wave }} failed its {{ $labels.gate }} gate",
			Description: "The new nodes of wave {{ $labels.wave }} of RolloutPlan {{ $labels.plan }} failed the {{ $labels.gate }} gate, so karpgate holds every NodePool of the plan: " +
				"the rollout stops after this wave until it is resumed.",
			Runbook: "`karpgate rollout status PLAN` names the failing gate and the NodeClaims or pods behind it; fix the cause (revert the AMI or node class change), delete NodeClaims that never came up, then `karpgate rollout resume PLAN` rolls the wave again.",
		},
		{
			Name: "KarpgateDriftFrozen",
			// min_over_time over the window rather than for:, so that a
			// Prometheus restart does not start the clock again.
			Expr: `min_over_time(max by (nodepool) (karpgate_nodepool_drift_frozen)[` + t.FrozenFor + `:5m]) == 1
and on (nodepool)
max by (nodepool) (karpgate_nodepool_drift_frozen offset ` + t.FrozenFor + `) == 1`,
			Severity:    "warning",
			Summary:     "NodePool {{ $labels.nodepool }}: drift has been frozen for " + t.FrozenFor,
			Description: "Drift disruptions of NodePool {{ $labels.nodepool }} have been frozen for " + t.FrozenFor + " (karpgate freeze, or the rollout guard's cluster-wide trip): drifted nodes, new AMIs and security fixes included, are not replaced until the freeze is lifted.",
			Runbook:     "`karpgate status --nodepool NODEPOOL` shows the freeze's reason and when it began; if the cause is gone run `karpgate resume NODEPOOL` (or `karpgate resume --all` after a cluster-wide trip).",
		},
		{
			Name: "KarpgateNodePoolDisruptionBlocked",
			Expr: `min_over_time(` + RecordBlocked + `[` + t.BlockedFor + `]) == 1
and on (nodepool)
` + RecordBlocked + ` offset ` + t.BlockedFor,
			Severity:    "warning",
			Summary:     "NodePool {{ $labels.nodepool }}: no voluntary disruption allowed for " + t.BlockedFor,
			Description: "NodePool {{ $labels.nodepool }} has nodes but has allowed no voluntary disruption, for any reason, for " + t.BlockedFor + ": its nodes are never consolidated nor replaced when they drift.",
			Runbook:     "Run `karpgate budgets` on the NodePool's manifest (or `karpgate status --nodepool NODEPOOL`): a nodes: \"0\" budget without schedule, windows that never open or nodes that never stop disrupting keep it at zero.",
		},
		{
			Name:     "KarpgateAdmissionDenialsHigh",
			Expr:     `sum by (webhook, rule) (rate(karpgate_admission_decisions_total{action="deny",dry_run="false"}[15m])) * 60 > ` + t.DenialsPerMinute,
			For:      "15m",
			Severity: "warning",
			Summary:  "karpgate rule {{ $labels.rule }} denies {{ $value | humanize }} writes a minute",
			Description: "Rule {{ $labels.rule }} has denied {{ $value | humanize }} NodePool or EC2NodeClass writes a minute for 15 minutes: a controller (a GitOps tool, or Karpenter) " +
				"is probably retrying a change the rule refuses.",
			Runbook: "karpgate does not log denials: find the writer in the API server's audit log (or the status of the GitOps tool that applies it); fix the object (`karpgate lint` shows the same finding), or make the rule warn at admission in karpgate.yaml.",
		},
		{
			Name: "KarpgateAdmissionErrors",
			Expr: `sum by (webhook) (rate(karpgate_admission_requests_total{verdict="error"}[10m]))
/
sum by (webhook) (rate(karpgate_admission_requests_total[10m]))
> ` + t.ErrorRatio,
			For:         "10m",
			Severity:    "warning",
			Summary:     "karpgate's {{ $labels.webhook }} webhook fails {{ $value | humanizePercentage }} of its requests",
			Description: "{{ $value | humanizePercentage }} of the {{ $labels.webhook }} webhook's requests could not be evaluated for 10 minutes. The validating webhook fails closed: those writes were refused.",
			Runbook:     "karpgate's log names the object and the error (\"evaluation failed\"); a user policy in ConfigMap " + deploy.PolicyConfigMapName + " that errors on some input is the usual cause: test it with `karpgate verify`.",
		},
		{
			Name: "KarpgateConversionFailing",
			Expr: `sum by (desired_version) (rate(karpgate_conversion_reviews_total{result="failure"}[10m]))
/
sum by (desired_version) (rate(karpgate_conversion_reviews_total[10m]))
> ` + t.ErrorRatio,
			For:         "5m",
			Severity:    "critical",
			Summary:     "karpgate fails {{ $value | humanizePercentage }} of conversions to {{ $labels.desired_version }}",
			Description: "{{ $value | humanizePercentage }} of the conversions of Karpenter objects to {{ $labels.desired_version }} failed for 5 minutes: reading or writing those objects fails for everyone, Karpenter included.",
			Runbook:     "karpgate's log has \"conversion failed\" with the object and the reason; `karpgate convert --check` reproduces it offline. To take conversion back from karpgate, re-apply Karpenter's own CRDs.",
		},
		{
			Name: "KarpgateWebhookRejectingRequests",
			Expr: `sum by (webhook) (rate(controller_runtime_webhook_requests_total{code!~"2.."}[10m]))
/
sum by (webhook) (rate(controller_runtime_webhook_requests_total[10m]))
> ` + t.ErrorRatio,
			For:         "10m",
			Severity:    "warning",
			Summary:     "karpgate turns away {{ $value | humanizePercentage }} of the requests to {{ $labels.webhook }}",
			Description: "{{ $value | humanizePercentage }} of the requests to {{ $labels.webhook }} got no review back for 10 minutes (429: every --max-concurrent-requests slot busy, no memory free, or one address over its share; 408: a body that fell behind its pace; 413: a body over --max-request-bytes; 400: unreadable). The API server applies the webhook's failure policy to them.",
			Runbook:     "karpgate_webhook_rejected_requests_total says which limit; for saturation add replicas or raise --max-concurrent-requests with the CPU limit; for source, timeout, too_large or unreadable find the client, and keep the API server a share with --trusted-source-cidrs or --client-ca-file.",
		},
		{
			Name:        "KarpgateWebhookPanics",
			Expr:        `sum by (endpoint) (increase(karpgate_webhook_panics_total[10m])) > 0`,
			Severity:    "warning",
			Summary:     "karpgate's {{ $labels.endpoint }} handler panicked",
			Description: "karpgate's {{ $labels.endpoint }} handler panicked on about {{ printf \"%.0f\" $value }} request(s) in the last 10 minutes; each got a 500, to which the API server applied the webhook's failure policy. karpgate kept serving.",
			Runbook:     "karpgate's log has each panic with its stack (\"panicked\"; the admission handler's also name the object): report it with the log lines (karpgate's bug); `karpgate lint` or `karpgate convert` on the object usually reproduces it offline.",
		},
		{
			Name:        "KarpgatePolicyReloadFailing",
			Expr:        `max by (namespace, pod, instance) (karpgate_config_last_reload_failed) == 1`,
			For:         "5m",
			Severity:    "warning",
			Summary:     "karpgate {{ $labels.instance }} refuses its newest configuration or policies",
			Description: "karpgate at {{ $labels.instance }} rejected the newest karpgate.yaml or policy folder and still enforces the last good one, so a change someone made is not in effect.",
			Runbook:     "karpgate's log (logger \"policies\") says what is wrong; check the files with `karpgate lint --config` and `karpgate verify --policy` before editing ConfigMap " + deploy.ConfigMapName + " or " + deploy.PolicyConfigMapName + " again.",
		},
		{
			Name:        "KarpgateServingCertificateExpiresSoon",
			Expr:        `(karpgate_serving_certificate_expiration_timestamp_seconds - time()) / 86400 < ` + t.CertificateExpiryDays,
			For:         "10m",
			Severity:    "warning",
			Summary:     "karpgate's serving certificate expires in {{ $value | humanize }} days",
			Description: "The certificate karpgate at {{ $labels.instance }} serves expires in {{ $value | humanize }} days. Once it has, every conversion fails (a Karpenter outage) and the validating webhook refuses every write it judges.",
			Runbook:     "With cert-manager, `kubectl -n NAMESPACE describe certificate karpgate-serving` says why it was not renewed (renewal starts 30 days ahead); without, replace Secret " + deploy.CertSecretName + ". karpgate reloads the files within seconds of the Secret changing.",
		},
		{
			Name:        "KarpgateDown",
			Expr:        `absent(karpgate_webhook_requests_in_flight)`,
			For:         "10m",
			Severity:    "critical",
			Summary:     "Prometheus has scraped no karpgate pod for 10 minutes",
			Description: "No karpgate metrics for 10 minutes: either karpgate is down (conversions of Karpenter's objects fail, NodePool and EC2NodeClass writes are refused) or Prometheus cannot scrape it.",
			Runbook:     "`kubectl -n NAMESPACE get pods -l app.kubernetes.io/name=karpgate`; if they run, check the ServiceMonitor or scrape annotations, and that Prometheus's service account is bound to ClusterRole " + deploy.MetricsReaderClusterRole + ".",
		},
	}
}

// AlertingRules turns alerts into rules: a runbook line and a link next to
// summary and description.
func AlertingRules(alerts []Alert) []monitoringv1.Rule {
	rules := make([]monitoringv1.Rule, 0, len(alerts))
	for _, a := range alerts {
		r := monitoringv1.Rule{
			Alert:  a.Name,
			Expr:   intstr.FromString(a.Expr),
			Labels: map[string]string{"severity": a.Severity},
			Annotations: map[string]string{
				"summary":     a.Summary,
				"description": a.Description,
				"runbook":     a.Runbook,
				"runbook_url": RunbookURL(a.Name),
			},
		}
		if a.For != "" {
			d := monitoringv1.Duration(a.For)
			r.For = &d
		}
		rules = append(rules, r)
	}
	return rules
}

// RuleGroups are the PrometheusRule's groups, which are also a Prometheus
// rule file (what promtool reads).
func RuleGroups(t AlertThresholds) []monitoringv1.RuleGroup {
	return []monitoringv1.RuleGroup{
		{Name: RecordingGroup, Rules: RecordingRules()},
		{Name: AlertingGroup, Rules: AlertingRules(Alerts(t))},
	}
}
