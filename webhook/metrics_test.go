package webhook

import (
	"net/http"
	"testing"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// TestPanicCountersStartAtZero: every route's panic counter is exported
// before any panic, so that increase() in KarpgateWebhookPanics sees the
// first one instead of a series appearing at 1.
func TestPanicCountersStartAtZero(t *testing.T) {
	dir := t.TempDir()
	writeCerts(t, dir)
	if _, err := New(Options{CertDir: dir, Routes: []Route{{Path: "/never-panicked", Handler: http.NotFoundHandler()}}}); err != nil {
		t.Fatal(err)
	}
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "karpgate_webhook_panics_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "endpoint" && l.GetValue() == "/never-panicked" {
					if v := m.GetCounter().GetValue(); v != 0 {
						t.Fatalf("the counter is %v before any panic", v)
					}
					return
				}
			}
		}
	}
	t.Fatal(`karpgate_webhook_panics_total{endpoint="/never-panicked"} is not exported`)
}
