package dashboard

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/karpgate/karpgate/internal/deploy"
)

// UID is the dashboard's stable identity: importing a newer version
// replaces the older one instead of adding a copy.
const UID = "karpgate"

// datasource is every query's data source: the dashboard's variable.
var datasource = &DataSourceRef{Type: "prometheus", UID: "${datasource}"}

// pool selects the NodePools picked in the dashboard's nodepool variable.
const pool = `{nodepool=~"$nodepool"}`

type query struct{ expr, legend string }

type panelSpec struct {
	kind, title, description, unit string
	width, height                  int
	queries                        []query
	stacked                        bool
	// steps draws values as held until the next sample: allowances and
	// counts change in steps, never in ramps.
	steps bool
	// thresholds colour a stat: the colour of each step from its value up.
	thresholds []Step
	mappings   []any
}

type row struct {
	title  string
	panels []panelSpec
}

func rows() []row {
	webhookLatency := func(paths string, q float64) string {
		return fmt.Sprintf(`histogram_quantile(%v, sum by (le, webhook) (rate(controller_runtime_webhook_latency_seconds_bucket{webhook=~%q}[$__rate_interval])))`, q, paths)
	}
	admissionPaths := deploy.ValidatePath + "|" + deploy.MutatePath
	return []row{
		{title: "Disruption budgets per NodePool", panels: []panelSpec{
			{kind: "timeseries", title: "Allowed disruptions by reason", width: 12, steps: true,
				description: "How many nodes Karpenter may disrupt at once now, per NodePool and reason (Underutilized, Empty, Drifted): the binding budget minus the nodes already disrupting. " +
					"A reason that no active budget covers is unlimited and drawn at the NodePool's node count. Steps are budget windows opening and closing; " +
					"the \"Budget window edges\" annotation marks them on every panel.",
				queries: []query{{legend: "{{nodepool}} {{reason}}", expr: `max by (nodepool, reason) (karpgate_nodepool_allowed_disruptions` + pool + `) < +Inf
or on (nodepool, reason)
clamp_max(max by (nodepool, reason) (karpgate_nodepool_allowed_disruptions` + pool + `), 0)
+ on (nodepool) group_left ()
max by (nodepool) (karpgate_nodepool_nodes` + pool + `)`}}},
			{kind: "timeseries", title: "Time to the next window edge", width: 12, unit: "s",
				description: "Seconds until each reason's allowance next changes because a budget window opens or closes: a sawtooth that drops to zero at each edge. No line when nothing changes within 7 days.",
				queries:     []query{{legend: "{{nodepool}} {{reason}}", expr: `min by (nodepool, reason) (karpgate_nodepool_allowed_disruptions_next_change_seconds` + pool + `) < +Inf`}}},
			{kind: "timeseries", title: "Nodes counted, disrupting, do-not-disrupt", width: 12, steps: true,
				description: "The nodes the budgets are computed from (initialized, not terminating), those already disrupting (they reduce every allowance) and those annotated karpenter.sh/do-not-disrupt.",
				queries: []query{
					{legend: "{{nodepool}} nodes", expr: `max by (nodepool) (karpgate_nodepool_nodes` + pool + `)`},
					{legend: "{{nodepool}} disrupting", expr: `max by (nodepool) (karpgate_nodepool_disrupting_nodes` + pool + `)`},
					{legend: "{{nodepool}} do-not-disrupt", expr: `max by (nodepool) (karpgate_nodepool_do_not_disrupt_nodes` + pool + `)`},
				}},
			{kind: "stat", title: "Invalid budgets", width: 12,
				description: "Budgets Karpenter cannot use (a schedule its cron parser rejects): one is enough for Karpenter to disrupt nothing in the NodePool, for any reason.",
				thresholds:  []Step{{Color: "green"}, {Color: "red", Value: ptr(1)}},
				queries:     []query{{legend: "{{nodepool}}", expr: `max by (nodepool) (karpgate_nodepool_invalid_budgets` + pool + `)`}}},
		}},
		{title: "Drift rollouts and the rollout guard", panels: []panelSpec{
			{kind: "timeseries", title: "Drifted vs total nodes", width: 12, steps: true,
				description: "Drifted NodeClaims against the NodePool's nodes: a rollout is done when the drifted line reaches zero.",
				queries: []query{
					{legend: "{{nodepool}} drifted", expr: `sum by (nodepool) (max by (nodepool, reason) (karpgate_nodepool_drifted_nodeclaims` + pool + `))`},
					{legend: "{{nodepool}} nodes", expr: `max by (nodepool) (karpgate_nodepool_nodes` + pool + `)`},
				}},
			{kind: "timeseries", title: "Drifted NodeClaims by reason", width: 12, steps: true, stacked: true,
				description: "The reason of each NodeClaim's Drifted condition: NodePoolDrifted, NodeClassDrift, AMIDrift, RequirementsDrifted, SubnetDrift, SecurityGroupDrift.",
				queries:     []query{{legend: "{{nodepool}} {{reason}}", expr: `max by (nodepool, reason) (karpgate_nodepool_drifted_nodeclaims` + pool + `)`}}},
			{kind: "timeseries", title: "NodeClaims that will drift", width: 6, steps: true,
				description: "NodeClaims whose image is no longer the newest compatible AMI of their EC2NodeClass, not yet marked Drifted: the next rollout, before Karpenter starts it.",
				queries:     []query{{legend: "{{nodepool}}", expr: `max by (nodepool) (karpgate_nodepool_will_drift_nodeclaims` + pool + `)`}}},
			{kind: "timeseries", title: "Oldest drift", width: 6, unit: "s",
				description: "How long the longest-drifted NodeClaim of each NodePool has been drifted.",
				queries:     []query{{legend: "{{nodepool}}", expr: `max by (nodepool) (karpgate_nodepool_oldest_drift_age_seconds` + pool + `)`}}},
			{kind: "timeseries", title: "Drifted nodes blocked by their pods", width: 6, steps: true,
				description: "Drifted nodes whose pods cannot be evicted (a karpenter.sh/do-not-disrupt pod, or a PodDisruptionBudget that allows no disruption) and whose NodeClaim has no terminationGracePeriod: the rollout cannot replace them until that changes. `karpgate explain node/NAME` names the pods.",
				queries:     []query{{legend: "{{nodepool}}", expr: `max by (nodepool) (karpgate_nodepool_drift_blocked_by_pods_nodes` + pool + `)`}}},
			{kind: "state-timeline", title: "Guard holds and freezes", width: 6,
				description: "When karpgate's rollout guard held a NodePool's drift rollout (its new nodes did not become Ready), and when drift was frozen (karpgate freeze, or the guard's cluster-wide trip). `karpgate resume` lifts both.",
				mappings: []any{map[string]any{"type": "value", "options": map[string]any{
					"0": map[string]any{"text": "rolling", "color": "green", "index": 0},
					"1": map[string]any{"text": "held", "color": "red", "index": 1},
				}}},
				queries: []query{
					{legend: "{{nodepool}} guard", expr: `max by (nodepool) (karpgate_nodepool_rollout_guard_held` + pool + `)`},
					{legend: "{{nodepool}} frozen", expr: `max by (nodepool) (karpgate_nodepool_drift_frozen` + pool + `)`},
				}},
		}},
		{title: "Admission", panels: []panelSpec{
			{kind: "timeseries", title: "Requests by verdict", width: 12, unit: "reqps", stacked: true,
				description: "Admission requests (dry runs excluded) by webhook and verdict: allowed, denied, patched, error (the validating webhook then refuses the write), skipped.",
				queries:     []query{{legend: "{{webhook}} {{verdict}}", expr: `sum by (webhook, verdict) (rate(karpgate_admission_requests_total{dry_run="false"}[$__rate_interval]))`}}},
			{kind: "timeseries", title: "Decisions by rule", width: 12, unit: "reqps",
				description: "Findings acted on at admission (dry runs excluded), by rule and action: deny, warn, grandfathered (a denial the old object already had), waived, mutate.",
				queries:     []query{{legend: "{{rule}} {{action}}", expr: `sum by (rule, action) (rate(karpgate_admission_decisions_total{dry_run="false"}[$__rate_interval]))`}}},
			{kind: "timeseries", title: "Admission latency p50 / p99", width: 12, unit: "s",
				description: "Time to answer the API server, per endpoint, as controller-runtime measures it around karpgate's handlers.",
				queries: []query{
					{legend: "{{webhook}} p50", expr: webhookLatency(admissionPaths, 0.5)},
					{legend: "{{webhook}} p99", expr: webhookLatency(admissionPaths, 0.99)},
				}},
			{kind: "timeseries", title: "Policy evaluation p50 / p99", width: 12, unit: "s",
				description: "Time spent evaluating the Rego rules per request, the bulk of the latency above.",
				queries: []query{
					{legend: "{{webhook}} p50", expr: `histogram_quantile(0.5, sum by (le, webhook) (rate(karpgate_admission_evaluation_seconds_bucket[$__rate_interval])))`},
					{legend: "{{webhook}} p99", expr: `histogram_quantile(0.99, sum by (le, webhook) (rate(karpgate_admission_evaluation_seconds_bucket[$__rate_interval])))`},
				}},
		}},
		{title: "Conversion", panels: []panelSpec{
			{kind: "timeseries", title: "Conversion reviews", width: 8, unit: "reqps",
				description: "ConversionReviews by the version asked for and result. A failure means a read or write of Karpenter objects failed, for Karpenter too.",
				queries:     []query{{legend: "to {{desired_version}} {{result}}", expr: `sum by (desired_version, result) (rate(karpgate_conversion_reviews_total[$__rate_interval]))`}}},
			{kind: "timeseries", title: "Conversion latency p50 / p99", width: 8, unit: "s",
				description: "Time to answer a ConversionReview; lists of many objects come in one review.",
				queries: []query{
					{legend: "p50", expr: webhookLatency(deploy.ConvertPath, 0.5)},
					{legend: "p99", expr: webhookLatency(deploy.ConvertPath, 0.99)},
				}},
			{kind: "timeseries", title: "Answers by HTTP code", width: 8, unit: "reqps", stacked: true,
				description: "Every endpoint's HTTP answers: 429 when every concurrency slot is busy, 413 for a body over the limit, 400 for an unreadable review.",
				queries:     []query{{legend: "{{webhook}} {{code}}", expr: `sum by (webhook, code) (rate(controller_runtime_webhook_requests_total[$__rate_interval]))`}}},
		}},
		{title: "karpgate", panels: []panelSpec{
			{kind: "timeseries", title: "Requests in flight, turned away, panics", width: 6,
				description: "Requests holding a --max-concurrent-requests slot, summed over pods; the rate of requests the limits turned away, by endpoint and reason; handler panics, each answered with a 500.",
				queries: []query{
					{legend: "in flight", expr: `sum(karpgate_webhook_requests_in_flight)`},
					{legend: "{{endpoint}} {{reason}} /s", expr: `sum by (endpoint, reason) (rate(karpgate_webhook_rejected_requests_total[$__rate_interval]))`},
					{legend: "{{endpoint}} panics /s", expr: `sum by (endpoint) (rate(karpgate_webhook_panics_total[$__rate_interval]))`},
				}},
			{kind: "timeseries", title: "Memory charged to requests", width: 6, unit: "bytes",
				description: "Memory charged to the requests in flight per pod (the body read so far, in doubling chunks, times the endpoint's factor, and the per-value charge), out of the budget --memory-limit leaves for requests; a request whose next chunk does not fit waits or is turned away.",
				queries:     []query{{legend: "{{instance}}", expr: `max by (instance) (karpgate_webhook_reserved_memory_bytes)`}}},
			{kind: "timeseries", title: "Configuration reloads", width: 6,
				description: "Reloads of karpgate.yaml and the policy folders by result, and pods that refuse their newest configuration and keep enforcing the last good one.",
				queries: []query{
					{legend: "{{result}}", expr: `sum by (result) (increase(karpgate_config_reload_total[$__rate_interval]))`},
					{legend: "pods refusing the newest", expr: `sum(karpgate_config_last_reload_failed)`},
				}},
			{kind: "stat", title: "Serving certificate expires in", width: 6, unit: "s",
				description: "Time left on the certificate the webhooks serve, for the pod whose certificate expires first. Once it has expired, every conversion fails.",
				thresholds:  []Step{{Color: "red"}, {Color: "orange", Value: ptr(7 * 86400)}, {Color: "green", Value: ptr(14 * 86400)}},
				queries:     []query{{legend: "", expr: `min(karpgate_serving_certificate_expiration_timestamp_seconds) - time()`}}},
		}},
	}
}

func ptr(v float64) *float64 { return &v }

// New builds the dashboard.
func New() Dashboard {
	d := Dashboard{
		Description: "karpgate: what Karpenter's disruption budgets allow per NodePool, drift rollouts, the rollout guard, admission and conversion. " +
			"Times are UTC, as Karpenter evaluates budget schedules.",
		Editable:      true,
		GraphTooltip:  1,
		Links:         []any{},
		Refresh:       "1m",
		SchemaVersion: 39,
		Tags:          []string{"karpgate", "karpenter"},
		Time:          TimeRange{From: "now-24h", To: "now"},
		Timezone:      "utc",
		Title:         "karpgate",
		UID:           UID,
		Version:       1,
		Annotations: Annotations{List: []Annotation{{
			Datasource:  datasource,
			Enable:      true,
			Expr:        `max by (nodepool, reason) (karpgate_nodepool_allowed_disruptions_next_change_seconds` + pool + `) <= 60`,
			IconColor:   "orange",
			Name:        "Budget window edges",
			Step:        "60s",
			TagKeys:     "nodepool,reason",
			TitleFormat: "{{nodepool}}: the {{reason}} allowance changes",
		}}},
		Templating: Templating{List: []Variable{
			{Name: "datasource", Label: "Data source", Type: "datasource", Query: "prometheus", Current: map[string]any{}, Options: []any{}},
			{Name: "nodepool", Label: "NodePool", Type: "query", Datasource: datasource,
				Query: "label_values(karpgate_nodepool_nodes, nodepool)", Definition: "label_values(karpgate_nodepool_nodes, nodepool)",
				Multi: true, IncludeAll: true, AllValue: ".*", Refresh: 2, Sort: 1,
				Current: map[string]any{"selected": true, "text": []string{"All"}, "value": []string{"$__all"}}, Options: []any{}},
		}},
	}
	id, y := 0, 0
	for _, r := range rows() {
		id++
		d.Panels = append(d.Panels, Panel{Type: "row", Title: r.title, ID: id, Collapsed: new(bool), GridPos: GridPos{H: 1, W: 24, Y: y}})
		y++
		x, rowHeight := 0, 0
		for _, p := range r.panels {
			if x+p.width > 24 {
				x, y = 0, y+rowHeight
			}
			id++
			panel := p.build(id)
			panel.GridPos = GridPos{H: p.heightOr(8), W: p.width, X: x, Y: y}
			d.Panels = append(d.Panels, panel)
			x, rowHeight = x+p.width, max(rowHeight, p.heightOr(8))
		}
		y += rowHeight
	}
	return d
}

func (p panelSpec) heightOr(h int) int {
	if p.height > 0 {
		return p.height
	}
	return h
}

func (p panelSpec) build(id int) Panel {
	panel := Panel{ID: id, Type: p.kind, Title: p.title, Description: p.description, Datasource: datasource,
		FieldConfig: &FieldConfig{Defaults: FieldDefaults{Unit: p.unit, Mappings: p.mappings}, Overrides: []any{}}}
	if p.kind == "timeseries" {
		custom := map[string]any{"drawStyle": "line", "lineWidth": 1, "fillOpacity": 0, "showPoints": "never", "spanNulls": false}
		if p.steps {
			custom["lineInterpolation"] = "stepAfter"
		}
		if p.stacked {
			custom["stacking"] = map[string]any{"mode": "normal", "group": "A"}
			custom["fillOpacity"] = 30
		}
		panel.FieldConfig.Defaults.Custom = custom
		zero := 0.0
		panel.FieldConfig.Defaults.Min = &zero
		panel.Options = map[string]any{"legend": map[string]any{"displayMode": "table", "placement": "right", "showLegend": true, "calcs": []string{"lastNotNull"}},
			"tooltip": map[string]any{"mode": "multi", "sort": "desc"}}
	}
	if len(p.thresholds) > 0 {
		panel.FieldConfig.Defaults.Thresholds = &Thresholds{Mode: "absolute", Steps: p.thresholds}
		panel.Options = map[string]any{"colorMode": "background", "graphMode": "none", "reduceOptions": map[string]any{"calcs": []string{"lastNotNull"}, "fields": "", "values": false}}
	}
	for i, q := range p.queries {
		panel.Targets = append(panel.Targets, Target{Datasource: datasource, Expr: q.expr, LegendFormat: q.legend, Range: true, RefID: string(rune('A' + i))})
	}
	return panel
}

// JSON is the dashboard as Grafana imports it.
func JSON() ([]byte, error) {
	data, err := json.MarshalIndent(New(), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Query is one PromQL expression of the dashboard and where it is.
type Query struct {
	Where string
	Expr  string
}

// Queries lists every PromQL expression in d: panel targets, annotations,
// and the selectors inside the variables' label_values().
func Queries(d Dashboard) []Query {
	var out []Query
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			out = append(out, Query{Where: fmt.Sprintf("panel %q query %s", p.Title, t.RefID), Expr: t.Expr})
		}
	}
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			out = append(out, Query{Where: fmt.Sprintf("annotation %q", a.Name), Expr: a.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		inner, ok := strings.CutPrefix(v.Query, "label_values(")
		selector, _, found := strings.Cut(inner, ",")
		if !ok || !found {
			out = append(out, Query{Where: fmt.Sprintf("variable %q", v.Name), Expr: v.Query})
			continue
		}
		out = append(out, Query{Where: fmt.Sprintf("variable %q", v.Name), Expr: strings.TrimSpace(selector)})
	}
	return out
}

// sampleValues stand for the dashboard's variables outside Grafana.
var sampleValues = map[string]string{
	"$__rate_interval": "5m",
	"$nodepool":        ".*",
}

// WithSampleValues replaces the dashboard's variables in a query with values
// Grafana could give them, so the query can be parsed and run elsewhere. A
// variable it does not know is an error.
func WithSampleValues(expr string) (string, error) {
	for name, value := range sampleValues {
		expr = strings.ReplaceAll(expr, name, value)
	}
	if i := strings.Index(expr, "$"); i >= 0 {
		return "", fmt.Errorf("unknown variable at %q", expr[i:])
	}
	return expr, nil
}
