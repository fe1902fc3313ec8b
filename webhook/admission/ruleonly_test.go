package admission

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies/waiver"
)

// overlayRule is a user rule about NodeOverlays (shared with the policies
// and e2e tests), as docs/own-rules.md writes one: for every kind, testing
// the kind.
const overlayRule = "../../test/testdata/rules/acme_overlay_weight.rego"

func overlay(apiVersion string, weight any, annotations map[string]any) map[string]any {
	spec := map[string]any{"priceAdjustment": "-10%", "requirements": []any{map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"spot"}}}}
	if weight != nil {
		spec["weight"] = weight
	}
	return map[string]any{
		"apiVersion": apiVersion,
		"kind":       "NodeOverlay",
		"metadata":   map[string]any{"name": "discount", "annotations": annotations},
		"spec":       spec,
	}
}

// TestNodeOverlaysAreJudgedByTheRulesForEveryKind: both webhooks hand a
// NodeOverlay (a rule-only kind) to the engine as sent, at any version,
// without converting it: a user rule about it denies with its message, a
// denial the old object had is grandfathered, and a waiver holds only
// with the record the mutating webhook keeps. Before, decode skipped the
// kind, and every NodeOverlay was allowed unjudged.
func TestNodeOverlaysAreJudgedByTheRulesForEveryKind(t *testing.T) {
	dir := t.TempDir()
	rule, err := os.ReadFile(overlayRule)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "overlay.rego"), rule, 0o600); err != nil {
		t.Fatal(err)
	}
	engines := newEngine(t, "", dir)
	clock := func() time.Time { return stamp }
	a := admission{
		mutator:   &reviewServer{handler: &Mutator{Engines: engines, Log: logr.Discard(), Now: clock}, webhook: mutating, log: logr.Discard()},
		validator: &reviewServer{handler: &Validator{Engines: engines, Log: logr.Discard(), Now: clock, Twins: twinsOf{"KG001": config.Warn}}, webhook: validating, log: logr.Discard()},
	}
	const v1alpha1 = "karpenter.sh/v1alpha1"
	waived := map[string]any{"karpgate.io/waive-ACME010": "ties are fine here"}
	relabelled := overlay(v1alpha1, nil, nil)
	relabelled["metadata"].(map[string]any)["labels"] = map[string]any{"team": "a"}
	tests := []struct {
		name    string
		req     request
		mutated bool
		allowed bool
		// message is in the denial; warning in one of the warnings.
		message, warning string
		recorded         bool // the stored object has the waiver record
	}{
		{"create without a weight", request{op: admissionv1.Create, object: overlay(v1alpha1, nil, nil)}, true, false,
			"NodeOverlay/discount", "", false},
		{"create with a weight", request{op: admissionv1.Create, object: overlay(v1alpha1, int64(10), nil)}, true, true, "", "", false},
		{"a version karpgate does not know, judged as sent", request{op: admissionv1.Create, object: overlay("karpenter.sh/v1", nil, nil)}, true, false,
			"ACME010", "", false},
		{"update dropping the weight", request{op: admissionv1.Update, object: overlay(v1alpha1, nil, nil), old: overlay(v1alpha1, int64(10), nil)}, true, false,
			"the overlay sets no weight", "", false},
		{"update of an overlay that had no weight either", request{op: admissionv1.Update, object: relabelled, old: overlay(v1alpha1, nil, nil)}, true, true,
			"", "ACME010", false},
		{"waived, the record kept by the mutating webhook", request{op: admissionv1.Create, object: overlay(v1alpha1, nil, waived), user: "alice"}, true, true,
			"", "ACME010 waived by annotation karpgate.io/waive-ACME010", true},
		{"waived, the mutating webhook did not run", request{op: admissionv1.Create, object: overlay(v1alpha1, nil, waived), user: "alice"}, false, false,
			waiver.RecordAnnotation, "", false},
		// KG001 warns on a waiver without a reason; no admission policy
		// matches NodeOverlays, so its twin does not give the warning.
		{"a waiver without a reason, warned by the webhook", request{op: admissionv1.Create, object: overlay(v1alpha1, int64(1), map[string]any{"karpgate.io/waive-ACME010": ""}), user: "alice"}, true, true,
			"", "KG001", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := a.write(t, tt.req, tt.mutated)
			if got.allowed != tt.allowed {
				t.Fatalf("allowed %v, want %v: %s %q", got.allowed, tt.allowed, got.message, got.warnings)
			}
			if !strings.Contains(got.message, tt.message) {
				t.Errorf("denial %q does not name %q", got.message, tt.message)
			}
			if !tt.allowed && tt.message != waiver.RecordAnnotation && !strings.Contains(got.message, "ACME010") {
				t.Errorf("denial %q is not the user rule's", got.message)
			}
			if tt.warning != "" && !strings.Contains(strings.Join(got.warnings, "\n"), tt.warning) {
				t.Errorf("warnings %q do not mention %q", got.warnings, tt.warning)
			}
			if tt.allowed {
				_, has := stringAnnotations(got.stored)[waiver.RecordAnnotation]
				if has != tt.recorded {
					t.Errorf("stored with the waiver record: %v, want %v (%v)", has, tt.recorded, stringAnnotations(got.stored))
				}
			}
		})
	}
}

// A NodeOverlay is counted under its own kind, not "other".
func TestNodeOverlaysAreCountedByKind(t *testing.T) {
	counter := requestsTotal.WithLabelValues(validating, "NodeOverlay", "CREATE", verdictAllowed, "false")
	before := testutil.ToFloat64(counter)
	v := &Validator{Engines: newEngine(t, ""), Log: logr.Discard()}
	_, review := post(t, ValidatingWebhook(v), request{op: admissionv1.Create, object: overlay("karpenter.sh/v1alpha1", nil, nil)}.body(t), "application/json")
	if !review.Response.Allowed {
		t.Fatalf("no rule is about NodeOverlays, yet it was refused: %+v", review.Response.Result)
	}
	if got := testutil.ToFloat64(counter) - before; got != 1 {
		t.Errorf("requests{kind=NodeOverlay,verdict=allowed} rose by %v, want 1", got)
	}
}
