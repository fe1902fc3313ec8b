package admission

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/policies/waiver"
)

var stamp = time.Date(2026, 1, 5, 8, 30, 0, 0, time.UTC)

func withAnnotations(obj map[string]any, annotations map[string]any) map[string]any {
	var out map[string]any
	raw, _ := json.Marshal(obj)
	_ = json.Unmarshal(raw, &out)
	out["metadata"].(map[string]any)["annotations"] = annotations
	return out
}

// mutateAs sends req to the mutating webhook and returns the object as the
// API server would store it, and the warnings.
func mutateAs(t *testing.T, req request) (map[string]any, []string) {
	t.Helper()
	h := newWebhook(&Mutator{Engines: newEngine(t, ""), Log: logr.Discard(), Now: func() time.Time { return stamp }}, mutating, logr.Discard())
	_, review := post(t, h, req.body(t), "application/json")
	if !review.Response.Allowed {
		t.Fatalf("the mutating webhook refused: %+v", review.Response.Result)
	}
	if review.Response.Patch == nil {
		return req.object, review.Response.Warnings
	}
	return patch(t, req.object, string(review.Response.Patch)), review.Response.Warnings
}

func annotationOf(obj map[string]any, key string) (string, bool) {
	v, ok := obj["metadata"].(map[string]any)["annotations"].(map[string]any)[key]
	s, _ := v.(string)
	return s, ok
}

func TestMutatorRecordsWhoSetEachWaiver(t *testing.T) {
	plain := nodeClass("default", nil, "al2023@v20240807")
	added := withAnnotations(plain, map[string]any{"karpgate.io/waive-KG102": "dev account"})
	stored, warnings := mutateAs(t, request{op: admissionv1.Update, object: added, old: plain, user: "alice@example.com"})
	record, _ := annotationOf(stored, waiver.RecordAnnotation)
	if want := `{"KG102":{"user":"alice@example.com","at":"2026-01-05T08:30:00Z"}}`; record != want {
		t.Fatalf("record %q, want %q", record, want)
	}
	if !containsText(warnings, "karpgate recorded alice@example.com as the author of the waiver of KG102") {
		t.Errorf("warnings %q", warnings)
	}

	// Another write leaves the waiver as it was and forges the record:
	// the stored record stays.
	forged := withAnnotations(plain, map[string]any{"karpgate.io/waive-KG102": "dev account", waiver.RecordAnnotation: `{"KG102":{"user":"mallory","at":"2026-01-01T00:00:00Z"}}`})
	again, warnings := mutateAs(t, request{op: admissionv1.Update, object: forged, old: stored, user: "mallory"})
	if got, _ := annotationOf(again, waiver.RecordAnnotation); got != record {
		t.Errorf("after a forged write the record is %q, want %q", got, record)
	}
	if len(warnings) != 0 {
		t.Errorf("restoring the record warns: %q", warnings)
	}

	// A GitOps apply that omits the record (it never had it): restored.
	restored, _ := mutateAs(t, request{op: admissionv1.Update, object: added, old: stored, user: "system:serviceaccount:argocd:argocd-application-controller"})
	if got, _ := annotationOf(restored, waiver.RecordAnnotation); got != record {
		t.Errorf("an apply without the record left %q, want %q", got, record)
	}

	// Removing the waiver removes its entry.
	gone, _ := mutateAs(t, request{op: admissionv1.Update, object: withAnnotations(plain, map[string]any{waiver.RecordAnnotation: record}), old: stored, user: "bob"})
	if _, present := annotationOf(gone, waiver.RecordAnnotation); present {
		t.Errorf("the record outlived the waiver")
	}
}

func containsText(list []string, s string) bool {
	for _, l := range list {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

const freezeRecord = `{"budget":{"nodes":"0","reasons":["Drifted"]},"index":1,"since":"2026-01-05T08:00:00Z","reason":"incident 42","by":"freeze"}`

func frozenPool() map[string]any {
	np := nodePool("web", fullRef, map[string]any{"nodes": "10%"}, map[string]any{"nodes": "0", "reasons": []any{"Drifted"}})
	return withAnnotations(np, map[string]any{karpenter.RolloutGuardAnnotation: freezeRecord})
}

func budgetsOf(obj map[string]any) string {
	raw, _ := json.Marshal(obj["spec"].(map[string]any)["disruption"].(map[string]any)["budgets"])
	return string(raw)
}

// TestMutatorKeepsAFreezeAGitOpsApplyWouldDrop: the NodePool's Git
// version, without the hold budget, is written while a freeze holds it; the
// stored object keeps the hold. A resume ends it.
func TestMutatorKeepsAFreezeAGitOpsApplyWouldDrop(t *testing.T) {
	const held = `[{"nodes":"10%"},{"nodes":"0","reasons":["Drifted"]}]`
	git := nodePool("web", fullRef, map[string]any{"nodes": "10%"})
	for _, tt := range []struct {
		name  string
		write map[string]any
	}{
		{"server-side apply (the record kept)", withAnnotations(git, map[string]any{karpenter.RolloutGuardAnnotation: freezeRecord})},
		{"replace (the record dropped too)", git},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, dryRun := range []bool{true, false} {
				stored, warnings := mutateAs(t, request{op: admissionv1.Update, object: tt.write, old: frozenPool(), user: "system:serviceaccount:flux-system:kustomize-controller", dryRun: dryRun})
				if got := budgetsOf(stored); got != held {
					t.Fatalf("dry run %v: budgets %s, want %s", dryRun, got, held)
				}
				if got, _ := annotationOf(stored, karpenter.RolloutGuardAnnotation); got != freezeRecord {
					t.Errorf("record %s", got)
				}
				if !containsText(warnings, "karpgate kept its freeze of drift in spec.disruption.budgets[1] (since 2026-01-05T08:00:00Z: incident 42); only `karpgate resume web` lifts it") {
					t.Errorf("warnings %q", warnings)
				}
			}
		})
	}
	resumed := withAnnotations(git, map[string]any{karpenter.RolloutGuardResumedAnnotation: "2026-01-05T09:00:00Z"})
	stored, _ := mutateAs(t, request{op: admissionv1.Update, object: resumed, old: frozenPool(), user: "alice"})
	if got := budgetsOf(stored); got != `[{"nodes":"10%"}]` {
		t.Errorf("after a resume: budgets %s", got)
	}
}

// TestMutatorKeepsTheHoldWhenRulesCannotBeEvaluated: the hold does not
// depend on the policies.
func TestMutatorKeepsTheHoldWhenRulesCannotBeEvaluated(t *testing.T) {
	m := &Mutator{Engines: newEngine(t, ""), Log: logr.Discard(), Now: func() time.Time { return stamp }}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := ctrladmission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "1", Operation: admissionv1.Update, UserInfo: authenticationv1.UserInfo{Username: "bob"}}}
	req.Kind.Kind = "NodePool"
	req.Object.Raw = mustJSON(t, nodePool("web", fullRef))
	req.OldObject.Raw = mustJSON(t, frozenPool())
	resp := m.Handle(ctx, req)
	if !resp.Allowed || len(resp.Patches) == 0 && resp.Patch == nil {
		t.Fatalf("allowed=%v patch=%s warnings=%q", resp.Allowed, resp.Patch, resp.Warnings)
	}
	if got := budgetsOf(patch(t, nodePool("web", fullRef), string(resp.Patch))); got != `[{"nodes":"10%"},{"nodes":"0","reasons":["Drifted"]}]` {
		t.Errorf("budgets %s", got)
	}
}

// TestValidatorJudgesWaiversByWhoWritesThem: with approvers named, an
// unnamed user's new waiver is denied (KG006), an approver's admitted.
func TestValidatorJudgesWaiversByWhoWritesThem(t *testing.T) {
	a := newAdmission(t, "waivers:\n  approvers:\n    groups: [platform]\n")
	plain := nodeClass("default", nil, "al2023@latest")
	waived := withAnnotations(plain, map[string]any{"karpgate.io/waive-KG102": "dev account"})
	got := a.write(t, request{op: admissionv1.Update, object: waived, old: plain, user: "mallory", groups: []string{"system:authenticated"}}, true)
	if got.allowed || !strings.Contains(got.message, "KG006 metadata.annotations[karpgate.io/waive-KG102]: mallory may not add or change the waiver for KG102") {
		t.Fatalf("mallory: %s", got.message)
	}
	if got := a.write(t, request{op: admissionv1.Update, object: waived, old: plain, user: "alice", groups: []string{"platform"}}, true); !got.allowed {
		t.Fatalf("an approver was refused: %s", got.message)
	}
}

// TestAuditFindingsAreNeverShownAtAdmission: a rule whose admission action
// is audit neither denies nor warns.
func TestAuditFindingsAreNeverShownAtAdmission(t *testing.T) {
	obj := nodeClass("default", production, "al2023@latest")
	for _, tt := range []struct {
		config   string
		allowed  bool
		warnings int
	}{
		{"", false, 0},
		{"rules:\n  KG101: {actions: {admission: audit}}\n  KG102: {actions: {admission: audit}}\n", true, 0},
		{"rules:\n  KG101: {actions: {admission: warn}}\n  KG102: {actions: {admission: audit}}\n", true, 1},
	} {
		_, review := post(t, NewValidatingWebhook(newEngine(t, tt.config), logr.Discard()), request{op: admissionv1.Create, object: obj}.body(t), "application/json")
		if review.Response.Allowed != tt.allowed || len(review.Response.Warnings) != tt.warnings {
			t.Errorf("%q: allowed=%v warnings=%q, want %v and %d", tt.config, review.Response.Allowed, review.Response.Warnings, tt.allowed, tt.warnings)
		}
	}
}
