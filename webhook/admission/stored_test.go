package admission

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/policies/waiver"
)

// asV1Beta1 is a stored v1 object as the API server hands it to a v1beta1
// client: converted by karpgate's conversion, restore record and all.
func asV1Beta1(t testing.TB, obj map[string]any) map[string]any {
	t.Helper()
	out, err := conversion.Convert(context.Background(), obj, karpenter.V1Beta1, conversion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withRecord adds a record to obj's karpgate.io/restore-v1 annotation, as
// any client can; converted and original are JSON, "" for absent.
func withRecord(t testing.TB, obj map[string]any, path []any, converted, original string) map[string]any {
	t.Helper()
	out := patch(t, obj, `[]`)
	meta := out["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	payload := map[string]any{"records": []any{}}
	if raw, ok := annotations[karpenter.RestoreV1Annotation].(string); ok {
		if err := json.Unmarshal([]byte(raw), &payload); err != nil {
			t.Fatal(err)
		}
	}
	record := map[string]any{"path": path}
	if converted != "" {
		record["converted"] = json.RawMessage(converted)
	}
	if original != "" {
		record["original"] = json.RawMessage(original)
	}
	payload["records"] = append(payload["records"].([]any), record)
	annotations[karpenter.RestoreV1Annotation] = string(mustJSON(t, payload))
	return out
}

func renamed(t testing.TB, obj map[string]any, name string) map[string]any {
	return patch(t, obj, `[{"op":"replace","path":"/metadata/name","value":"`+name+`"}]`)
}

// TestV1Beta1WritesAreJudgedAsStored: the API server stores a v1beta1
// write as the v1 object karpgate's conversion makes of it, restore
// records applied. The validating webhook judges that object too, and
// refuses a record that would store a judged value the write does not
// show, unless the stored object holds it already.
func TestV1Beta1WritesAreJudgedAsStored(t *testing.T) {
	// The waiver records below are dated at this clock, so that the check
	// of who set a waiver (waiver.CheckRecord) passes and the restore
	// record is what is judged.
	clock := func() time.Time { return time.Date(2026, 1, 6, 8, 1, 0, 0, time.UTC) }
	hook := newWebhook(&Validator{Engines: newEngine(t, ""), Log: logr.Discard(), Now: clock}, validating, logr.Discard())

	// A pinned production EC2NodeClass with a v1-only field: its v1beta1
	// view carries an honest record that gives spec.kubelet back.
	pinned := nodeClass("production", production, "al2023@v20240807")
	pinned["spec"].(map[string]any)["kubelet"] = map[string]any{"maxPods": int64(110)}
	pinned = withAnnotations(pinned, map[string]any{"example.com/owner": "web"})
	pinnedBeta := asV1Beta1(t, pinned)
	// The reproductions: the v1beta1 body stays pinned, a record
	// swaps the alias for @latest, or adds a waiver.
	forgedLatest := withRecord(t, pinnedBeta, []any{"spec", "amiSelectorTerms"}, `[{"alias":"al2023@v20240807"}]`, `[{"alias":"al2023@latest"}]`)
	forgedWaiver := withRecord(t, pinnedBeta, []any{"metadata", "annotations", "karpgate.io/waive-KG101"}, "", `"tested elsewhere"`)
	// Budget reasons exist only in v1; the record keeps a nodes "0"
	// budget to Underutilized, without which it would hold drift (KG301).
	reasons := nodePool("reasons", fullRef, map[string]any{"nodes": "0", "reasons": []any{"Underutilized"}})
	reasonsBeta := asV1Beta1(t, reasons)
	// A family without selector terms is @latest once stored as v1.
	familyOnly := patch(t, asV1Beta1(t, nodeClass("family-only", production, "al2023@latest")), `[]`)
	// The stored object's waiver record, and a write that adds a waiver
	// (the mutating webhook has recorded its author) with a record that
	// would put the old waiver record back.
	waived := withAnnotations(pinned, map[string]any{"karpgate.io/waive-KG102": "dev", waiver.RecordAnnotation: `{"KG102":{"user":"alice","at":"2026-01-05T08:00:00Z"}}`})
	waivedBeta := asV1Beta1(t, waived)
	moreWaivers := patch(t, waivedBeta, `[{"op":"add","path":"/metadata/annotations/karpgate.io~1waive-KG109","value":"ssm parameter of our own"},
		{"op":"replace","path":"/metadata/annotations/karpgate.io~1waivers-set-by","value":"{\"KG102\":{\"user\":\"alice\",\"at\":\"2026-01-05T08:00:00Z\"},\"KG109\":{\"user\":\"mallory\",\"at\":\"2026-01-06T08:00:00Z\"}}"}]`)
	undoneRecord := withRecord(t, moreWaivers, []any{"metadata", "annotations", waiver.RecordAnnotation},
		`"{\"KG102\":{\"user\":\"alice\",\"at\":\"2026-01-05T08:00:00Z\"},\"KG109\":{\"user\":\"mallory\",\"at\":\"2026-01-06T08:00:00Z\"}}"`,
		`"{\"KG102\":{\"user\":\"alice\",\"at\":\"2026-01-05T08:00:00Z\"}}"`)
	unreadable := withAnnotations(pinnedBeta, map[string]any{karpenter.RestoreV1Annotation: "{not json"})

	const v1beta1Warning = "KG401 apiVersion: EC2NodeClass is v1beta1"
	tests := []struct {
		name    string
		req     request
		allowed bool
		// message: substrings of the denial; warnings: prefixes, in order.
		message  []string
		warnings []string
	}{
		{
			name:    "honest round trip: read as v1beta1, written back unchanged",
			req:     request{op: admissionv1.Update, object: pinnedBeta, old: pinnedBeta},
			allowed: true, warnings: []string{v1beta1Warning},
		},
		{
			name:    "honest round trip with an unrelated edit",
			req:     request{op: admissionv1.Update, object: patch(t, pinnedBeta, `[{"op":"add","path":"/metadata/labels/team","value":"web"}]`), old: pinnedBeta},
			allowed: true, warnings: []string{v1beta1Warning},
		},
		{
			name: "a forged record smuggles @latest into a new production EC2NodeClass",
			req:  request{op: admissionv1.Create, object: renamed(t, forgedLatest, "production-forged")},
			message: []string{
				"EC2NodeClass/production-forged cannot be stored as written:\n",
				"karpgate.io/restore-v1 records[1] at spec.amiSelectorTerms: it would store a value this write does not show, and the rules judge the stored object differently with it: adds KG101 (deny) at spec.amiSelectorTerms[0].alias",
				"(fix: remove this record, or the whole annotation, and write what you mean in the v1beta1 fields, or apply the object as karpenter.k8s.aws/v1;",
			},
			warnings: []string{v1beta1Warning},
		},
		{
			name:     "a forged record smuggles @latest into a stored production EC2NodeClass",
			req:      request{op: admissionv1.Update, object: forgedLatest, old: pinnedBeta},
			message:  []string{"karpgate.io/restore-v1 records[1] at spec.amiSelectorTerms: it would store a value this write does not show", "adds KG101 (deny)"},
			warnings: []string{v1beta1Warning},
		},
		{
			name: "a forged record smuggles a waiver",
			req:  request{op: admissionv1.Update, object: forgedWaiver, old: pinnedBeta},
			message: []string{`karpgate.io/restore-v1 records[1] at metadata.annotations[karpgate.io/waive-KG101]: it would store annotation karpgate.io/waive-KG101 "tested elsewhere", where this write has none; ` +
				"a restore record may not set karpgate.io/ labels or annotations or what makes an object production"},
			warnings: []string{v1beta1Warning},
		},
		{
			name: "a record that gives back what is stored is honoured on UPDATE",
			req:  request{op: admissionv1.Update, object: reasonsBeta, old: reasonsBeta},
			// KG301 is the v1beta1 body's: without reasons, nodes "0" holds drift.
			allowed: true, warnings: []string{"KG301 spec.disruption.budgets[0]", "KG401 apiVersion: NodePool is v1beta1"},
		},
		{
			name:     "the same record on CREATE restores nothing stored",
			req:      request{op: admissionv1.Create, object: renamed(t, reasonsBeta, "reasons-copy")},
			message:  []string{"karpgate.io/restore-v1 records[1] at spec.disruption.budgets[0]: it would store a value this write does not show, and the rules judge the stored object differently with it: removes KG301 (warn) at spec.disruption.budgets[0]"},
			warnings: []string{"KG301 spec.disruption.budgets[0]", "KG401 apiVersion: NodePool is v1beta1"},
		},
		{
			name:     "a record may not undo the mutating webhook's waiver record",
			req:      request{op: admissionv1.Update, object: undoneRecord, old: waivedBeta, user: "mallory"},
			message:  []string{"at metadata.annotations[karpgate.io/waivers-set-by]: it would store annotation karpgate.io/waivers-set-by"},
			warnings: []string{v1beta1Warning},
		},
		{
			name:     "a family without selector terms is @latest as stored",
			req:      request{op: admissionv1.Create, object: familyOnly},
			message:  []string{"EC2NodeClass/family-only breaks 1 karpgate rule:\n" + `KG101 spec.amiFamily: as stored (karpenter.k8s.aws/v1) spec.amiSelectorTerms[0].alias: alias "al2023@latest" follows every AMI release`},
			warnings: []string{v1beta1Warning},
		},
		{
			name:     "a restore annotation the conversion cannot read",
			req:      request{op: admissionv1.Update, object: unreadable, old: pinnedBeta},
			message:  []string{"EC2NodeClass/production cannot be stored as written:\nkarpgate cannot convert it to v1, as the API server must to store it: metadata.annotations[karpgate.io/restore-v1]: not valid JSON"},
			warnings: []string{v1beta1Warning},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, review := post(t, hook, tt.req.body(t), "application/json")
			resp := review.Response
			if resp.Allowed != tt.allowed {
				t.Fatalf("allowed = %v, want %v: %+v\nwarnings %q", resp.Allowed, tt.allowed, resp.Result, resp.Warnings)
			}
			for _, want := range tt.message {
				if !strings.Contains(resp.Result.Message, want) {
					t.Errorf("denial:\n%s\nlacks:\n%s", resp.Result.Message, want)
				}
			}
			if len(resp.Warnings) != len(tt.warnings) {
				t.Fatalf("warnings:\n%s\nwant %d", strings.Join(resp.Warnings, "\n"), len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if !strings.HasPrefix(resp.Warnings[i], w) {
					t.Errorf("warning %d:\n%s\nwant prefix:\n%s", i, resp.Warnings[i], w)
				}
			}
		})
	}
}

// TestStoredFindingsAreReportedOnce: a finding both forms have is one
// line, in the terms of the object as sent.
func TestStoredFindingsAreReportedOnce(t *testing.T) {
	hook := NewValidatingWebhook(newEngine(t, ""), logr.Discard())
	beta := asV1Beta1(t, nodePool("weekend", fullRef, weekendFreeze))
	allowed, denied, warnings := verdict(t, hook, request{op: admissionv1.Create, object: beta})
	if allowed || !slices.Equal(denied, []string{"KG201"}) || !slices.Equal(warnings, []string{warnings[0]}) || !strings.HasPrefix(warnings[0], "KG401") {
		t.Fatalf("allowed %v, denied by %v, warnings %q; want one KG201 denial and the KG401 warning", allowed, denied, warnings)
	}
}

// TestMutatorKeepsWhatIsStored: a v1 write can carry a
// karpgate.io/restore-v1beta1 record that dresses the object's v1beta1
// view with a hold record storage does not hold. A v1beta1 write of that
// view must not make the mutating webhook restore the hold: what it keeps
// comes from the stored object.
func TestMutatorKeepsWhatIsStored(t *testing.T) {
	stored := nodePool("web", fullRef, map[string]any{"nodes": "10%"})
	stored = withAnnotations(stored, map[string]any{"example.com/owner": "web", karpenter.RestoreV1Beta1Annotation: string(mustJSON(t, map[string]any{"records": []any{
		map[string]any{"path": []any{"metadata", "annotations", karpenter.RolloutGuardAnnotation}, "original": strings.ReplaceAll(freezeRecord, `"index":1`, `"index":0`)},
	}}))})
	view := asV1Beta1(t, stored)
	if _, ok := annotationOf(view, karpenter.RolloutGuardAnnotation); !ok {
		t.Fatal("the test's view carries no hold record")
	}
	// The client writes the view back without the hold record.
	written := patch(t, view, `[{"op":"remove","path":"/metadata/annotations/karpgate.io~1rollout-guard"}]`)
	got, warnings := mutateAs(t, request{op: admissionv1.Update, object: written, old: view})
	if budgetsOf(got) != `[{"nodes":"10%"}]` {
		t.Fatalf("budgets %s after the write (warnings %q); want the stored budgets, no hold", budgetsOf(got), warnings)
	}
	if v, ok := annotationOf(got, karpenter.RolloutGuardAnnotation); ok {
		t.Fatalf("the mutating webhook restored a hold record storage never held: %s", v)
	}
}
