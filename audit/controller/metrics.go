package controller

import (
	"github.com/prometheus/client_golang/prometheus"
)

var (
	findingsDesc = prometheus.NewDesc("karpgate_audit_findings",
		"Findings on the stored objects as the last audit of each found them, by rule and action (deny, warn, audit, or waived by an annotation).",
		[]string{"rule", "action"}, nil)
	objectsDesc = prometheus.NewDesc("karpgate_audit_objects",
		"Stored objects the audit has judged, by kind.",
		[]string{"kind"}, nil)
	lastFullDesc = prometheus.NewDesc("karpgate_audit_last_full_audit_timestamp_seconds",
		"When the last full audit of every stored object finished (Unix time); 0 until the first has.",
		nil, nil)
	fullDurationDesc = prometheus.NewDesc("karpgate_audit_full_audit_duration_seconds",
		"How long the last full audit took, from its start (the audit's start, a configuration reload, the resync) until every object was judged.",
		nil, nil)
	evaluationsDesc = prometheus.NewDesc("karpgate_audit_evaluations_total",
		"Objects the audit judged, by result (ok, error).",
		[]string{"result"}, nil)
	writesDesc = prometheus.NewDesc("karpgate_audit_report_writes_total",
		"Writes of ClusterReports, by operation (create, update, delete) and result (ok, error); a report is written only when what it says changed.",
		[]string{"operation", "result"}, nil)
	eventsDesc = prometheus.NewDesc("karpgate_audit_events_total",
		"Events about objects that newly break a deny rule or whose reports newly split or leave results out, by result: sent, or dropped past the rate limit (the reports and metrics still list them).",
		[]string{"result"}, nil)
	oversizedDesc = prometheus.NewDesc("karpgate_audit_oversized_objects",
		"Objects whose results do not fit one ClusterReport (--audit-report-max-bytes), as the last audit of each found them, by kind and outcome: split (over several reports) or truncated (results other than denials left out past --audit-reports-per-object).",
		[]string{"kind", "outcome"}, nil)
	omittedDesc = prometheus.NewDesc("karpgate_audit_omitted_results",
		"Results left out of the ClusterReports (never a denial), as the last audit of each object found them, by kind; the first report of each such object counts them by rule.",
		[]string{"kind"}, nil)
)

// collector exports the audit's state at each scrape.
type collector struct {
	a *auditor
}

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{findingsDesc, objectsDesc, lastFullDesc, fullDurationDesc, evaluationsDesc, writesDesc, eventsDesc, oversizedDesc, omittedDesc} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	a := c.a
	a.mu.Lock()
	findings := map[ruleAction]int{}
	kinds := map[string]int{}
	type kindOutcome struct{ kind, outcome string }
	oversized := map[kindOutcome]int{}
	omitted := map[string]int{}
	for _, st := range a.states {
		kinds[st.kind]++
		for k, n := range st.findings {
			findings[k] += n
		}
		if st.reports > 1 {
			oversized[kindOutcome{st.kind, "split"}]++
		}
		if st.omitted > 0 {
			oversized[kindOutcome{st.kind, "truncated"}]++
			omitted[st.kind] += st.omitted
		}
	}
	last, counts := a.last, a.counts
	a.mu.Unlock()
	for k, n := range findings {
		ch <- prometheus.MustNewConstMetric(findingsDesc, prometheus.GaugeValue, float64(n), k.rule, k.action)
	}
	for kind, n := range kinds {
		ch <- prometheus.MustNewConstMetric(objectsDesc, prometheus.GaugeValue, float64(n), kind)
		// Zero series too, so that an alert or a dashboard reads 0, not
		// nothing, while every report fits.
		for _, outcome := range []string{"split", "truncated"} {
			ch <- prometheus.MustNewConstMetric(oversizedDesc, prometheus.GaugeValue, float64(oversized[kindOutcome{kind, outcome}]), kind, outcome)
		}
		ch <- prometheus.MustNewConstMetric(omittedDesc, prometheus.GaugeValue, float64(omitted[kind]), kind)
	}
	var at float64
	if !last.at.IsZero() {
		at = float64(last.at.UnixNano()) / 1e9
	}
	ch <- prometheus.MustNewConstMetric(lastFullDesc, prometheus.GaugeValue, at)
	ch <- prometheus.MustNewConstMetric(fullDurationDesc, prometheus.GaugeValue, last.duration.Seconds())
	ch <- prometheus.MustNewConstMetric(evaluationsDesc, prometheus.CounterValue, float64(counts.evaluations-counts.evaluationErrors), "ok")
	ch <- prometheus.MustNewConstMetric(evaluationsDesc, prometheus.CounterValue, float64(counts.evaluationErrors), "error")
	if a.events != nil {
		ch <- prometheus.MustNewConstMetric(eventsDesc, prometheus.CounterValue, float64(a.events.sent.Load()), "sent")
		ch <- prometheus.MustNewConstMetric(eventsDesc, prometheus.CounterValue, float64(a.events.dropped.Load()), "dropped")
	}
	if w := a.writer.Load(); w != nil {
		w.mu.Lock()
		writes := make(map[writeKey]int, len(w.writes))
		for k, n := range w.writes {
			writes[k] = n
		}
		w.mu.Unlock()
		for k, n := range writes {
			ch <- prometheus.MustNewConstMetric(writesDesc, prometheus.CounterValue, float64(n), k.operation, k.result)
		}
	}
}
