package admission

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// TestKarpgatesHoldIsNotRefusedWhenKG301Denies (issue #30): a production
// cluster denies KG301 (drift is never allowed). karpgate's own hold, the
// budget {nodes "0", reasons [Drifted]} with its record, is exactly what
// KG301 describes; the validating webhook must still admit the guard's or
// a freeze's patch and every later write of the held NodePool, and still
// refuse a hand-written hold whose record does not vouch for it.
func TestKarpgatesHoldIsNotRefusedWhenKG301Denies(t *testing.T) {
	hook := NewValidatingWebhook(newEngine(t, "rules:\n  KG301:\n    actions: {admission: deny}\n"), logr.Discard())
	const kg301 = "KG301 spec.disruption.budgets["
	labelled := func(obj map[string]any) map[string]any {
		obj["metadata"].(map[string]any)["labels"] = map[string]any{karpenter.EnvironmentLabel: "production"}
		return obj
	}
	unheld := labelled(nodePool("web", fullRef, map[string]any{"nodes": "10%"}))
	held := labelled(frozenPool())
	relabelled := patch(t, held, `[{"op":"replace","path":"/spec/template/metadata/labels/team","value":"b"}]`)
	// The record names budgets[0], the budget sits at budgets[1].
	misplaced := patch(t, held, `[{"op":"replace","path":"/metadata/annotations/karpgate.io~1rollout-guard","value":"{\"budget\":{\"nodes\":\"0\",\"reasons\":[\"Drifted\"]},\"index\":0,\"since\":\"2026-01-05T08:00:00Z\",\"reason\":\"mine\"}"}]`)
	// The record vouches for a budget of another value: {nodes "0"} holds every reason.
	otherBudget := patch(t, unheld, `[{"op":"add","path":"/spec/disruption/budgets/-","value":{"nodes":"0"}},
		{"op":"add","path":"/metadata/annotations","value":{"karpgate.io/rollout-guard":"{\"budget\":{\"nodes\":\"0\"},\"index\":1,\"since\":\"2026-01-05T08:00:00Z\",\"reason\":\"mine\"}"}}]`)
	unreadable := withAnnotations(held, map[string]any{karpenter.RolloutGuardAnnotation: "held by hand"})
	// A person's own nodes "0" budget beside karpgate's hold is judged.
	userZero := patch(t, held, `[{"op":"add","path":"/spec/disruption/budgets/0","value":{"nodes":"0"}},
		{"op":"replace","path":"/metadata/annotations/karpgate.io~1rollout-guard","value":"{\"budget\":{\"nodes\":\"0\",\"reasons\":[\"Drifted\"]},\"index\":2,\"since\":\"2026-01-05T08:00:00Z\",\"reason\":\"incident 42\",\"by\":\"freeze\"}"}]`)

	for _, tc := range []struct {
		name    string
		req     request
		allowed bool
	}{
		{"the guard's or a freeze's patch", request{op: admissionv1.Update, object: held, old: unheld, user: "system:serviceaccount:karpgate:karpgate"}, true},
		{"a later write of another field", request{op: admissionv1.Update, object: relabelled, old: held, user: "system:serviceaccount:flux-system:kustomize-controller"}, true},
		{"a held NodePool created from a backup", request{op: admissionv1.Create, object: held, user: "alice"}, true},
		{"a record at another index", request{op: admissionv1.Create, object: misplaced, user: "alice"}, false},
		{"a record of another budget", request{op: admissionv1.Update, object: otherBudget, old: unheld, user: "alice"}, false},
		{"a record that does not parse", request{op: admissionv1.Create, object: unreadable, user: "alice"}, false},
		{"a user's zero budget beside the hold", request{op: admissionv1.Update, object: userZero, old: held, user: "alice"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, review := post(t, hook, tc.req.body(t), "application/json")
			resp := review.Response
			if resp.Allowed != tc.allowed {
				t.Fatalf("allowed=%v, want %v: %+v", resp.Allowed, tc.allowed, resp.Result)
			}
			if tc.allowed {
				for _, w := range resp.Warnings {
					if strings.Contains(w, "KG301") {
						t.Errorf("warning about karpgate's hold: %s", w)
					}
				}
				return
			}
			if !strings.Contains(resp.Result.Message, kg301) {
				t.Errorf("denied, but not by KG301: %s", resp.Result.Message)
			}
		})
	}
}
