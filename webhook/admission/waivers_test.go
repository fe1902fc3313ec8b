package admission

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/karpgate/karpgate/policies/waiver"
)

// admission is both webhooks on one engine, called as the API server
// calls them.
type admission struct {
	mutator, validator *reviewServer
}

func newAdmission(t *testing.T, karpgateYAML string) admission {
	t.Helper()
	engines := newEngine(t, karpgateYAML)
	clock := func() time.Time { return stamp }
	return admission{
		mutator:   &reviewServer{handler: &Mutator{Engines: engines, Log: logr.Discard(), Now: clock}, webhook: mutating, log: logr.Discard()},
		validator: &reviewServer{handler: &Validator{Engines: engines, Log: logr.Discard(), Now: clock}, webhook: validating, log: logr.Discard()},
	}
}

// outcome is what the API server tells the writer.
type outcome struct {
	allowed  bool
	message  string // the denial
	warnings []string
	stored   map[string]any // the object as stored, when allowed
}

// write runs req through the mutating webhook, applies its patch, then
// asks the validating webhook; mutated false skips the mutating webhook,
// as when it fails open.
func (a admission) write(t *testing.T, req request, mutated bool) outcome {
	t.Helper()
	var warnings []string
	if mutated {
		_, review := post(t, a.mutator, req.body(t), "application/json")
		if review.Response.Patch != nil {
			req.object = patch(t, req.object, string(review.Response.Patch))
		}
		warnings = review.Response.Warnings
	}
	_, review := post(t, a.validator, req.body(t), "application/json")
	v := outcome{allowed: review.Response.Allowed, warnings: append(warnings, review.Response.Warnings...)}
	if v.allowed {
		v.stored = req.object
	} else {
		v.message = review.Response.Result.Message
	}
	return v
}

// selfWaivingPatch is the review's reproduction: one patch that takes a
// production EC2NodeClass out of production, moves it to @latest and
// waives both rules that deny it.
const selfWaivingPatch = `[
	{"op":"remove","path":"/metadata/labels/karpgate.io~1environment"},
	{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@latest"},
	{"op":"add","path":"/metadata/annotations","value":{"karpgate.io/waive-KG604":"leaving production","karpgate.io/waive-KG101":"testing AMIs"}}]`

// TestASelfWaivingWriteIsRefusedByDefault: with no approvers named, the
// write that breaks a production rule cannot also waive it; the denial
// names each rule, its waiver and the fix. The same waivers stored by a
// write of their own, earlier, waive the same change.
func TestASelfWaivingWriteIsRefusedByDefault(t *testing.T) {
	a := newAdmission(t, "")
	pinned := nodeClass("production", production, "al2023@v20240807")
	got := a.write(t, request{op: admissionv1.Update, object: patch(t, pinned, selfWaivingPatch), old: pinned, user: "mallory"}, true)
	want := "EC2NodeClass/production breaks 2 karpgate rules:\n" +
		`KG101 spec.amiSelectorTerms[0].alias: alias "al2023@latest" follows every AMI release, so each release drifts and replaces every node of this production EC2NodeClass; ` +
		`the waiver karpgate.io/waive-KG101 does not waive it, because this same write adds or changes it: on a production object, a waiver must be stored before the write it excuses ` +
		`(fix: Pin a version you have tested, such as al2023@v20240807; or add the waiver in a separate, earlier write that someone reviews, or name who may waive in karpgate.yaml (waivers.approvers))` + "\n" +
		`KG604 metadata.labels[karpgate.io/environment]: this update takes EC2NodeClass/production out of production`
	if got.allowed || !strings.HasPrefix(got.message, want) || !strings.Contains(got.message, "the waiver karpgate.io/waive-KG604 does not waive it, because this same write adds or changes it") {
		t.Fatalf("allowed=%v\n%s\nwant it to start\n%s", got.allowed, got.message, want)
	}

	// The waivers in a write of their own: nothing in it is denied.
	waivers := patch(t, pinned, `[{"op":"add","path":"/metadata/annotations","value":{"karpgate.io/waive-KG604":"leaving production","karpgate.io/waive-KG101":"testing AMIs"}}]`)
	first := a.write(t, request{op: admissionv1.Update, object: waivers, old: pinned, user: "mallory"}, true)
	if !first.allowed {
		t.Fatalf("the waivers alone: %s", first.message)
	}
	change := patch(t, first.stored, `[{"op":"remove","path":"/metadata/labels/karpgate.io~1environment"},{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@latest"}]`)
	second := a.write(t, request{op: admissionv1.Update, object: change, old: first.stored, user: "mallory"}, true)
	if !second.allowed || !containsText(second.warnings, "KG101 waived by annotation karpgate.io/waive-KG101") || !containsText(second.warnings, "KG604 waived by annotation karpgate.io/waive-KG604") {
		t.Fatalf("the change after the stored waivers: allowed=%v %s %q", second.allowed, second.message, second.warnings)
	}
}

// TestSameWriteWaivers: which writes a waiver they add or change still
// waives, by configuration and by what the stored object was.
func TestSameWriteWaivers(t *testing.T) {
	pinned := nodeClass("production", production, "al2023@v20240807")
	latest := nodeClass("production", production, "al2023@latest")
	waivedLatest := withAnnotations(latest, map[string]any{"karpgate.io/waive-KG101": "canary fleet"})
	staging := nodeClass("staging", map[string]any{"karpgate.io/environment": "staging"}, "al2023@v20240807")
	withWaiver := func(obj map[string]any, reason string) map[string]any {
		return withAnnotations(obj, map[string]any{"karpgate.io/waive-KG101": reason})
	}
	toLatest := func(obj map[string]any) map[string]any {
		return patch(t, obj, `[{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@latest"}]`)
	}
	const approvers = "waivers:\n  approvers:\n    users: [alice]\n"
	for _, tt := range []struct {
		name, config string
		req          request
		allowed      bool
		contains     string // in the denial, or in a warning when allowed
	}{
		{"@latest and its waiver in one write", "", request{op: admissionv1.Update, object: withWaiver(toLatest(pinned), "canary"), old: pinned, user: "bob"},
			false, "the waiver karpgate.io/waive-KG101 does not waive it, because this same write adds or changes it"},
		{"created with @latest and its waiver", "", request{op: admissionv1.Create, object: waivedLatest, user: "bob"},
			false, "the waiver karpgate.io/waive-KG101 does not waive it"},
		{"a stored waiver's reason changed with @latest", "", request{op: admissionv1.Update, object: withWaiver(toLatest(pinned), "new reason"), old: withWaiver(pinned, "old reason"), user: "bob"},
			false, "the waiver karpgate.io/waive-KG101 does not waive it"},
		{"a stored waiver, @latest now", "", request{op: admissionv1.Update, object: withWaiver(toLatest(pinned), "canary"), old: withWaiver(pinned, "canary"), user: "bob"},
			true, "KG101 waived by annotation karpgate.io/waive-KG101"},
		{"a waiver added to a denial that predates it", "", request{op: admissionv1.Update, object: waivedLatest, old: latest, user: "bob"},
			true, "KG101 waived by annotation karpgate.io/waive-KG101"},
		{"a waiver's reason changed, the denial it waives stored", "", request{op: admissionv1.Update, object: withWaiver(latest, "renewed"), old: waivedLatest, user: "bob"},
			true, "KG101 waived by annotation karpgate.io/waive-KG101 (\"renewed\")"},
		{"outside production", "", request{op: admissionv1.Update, object: withAnnotations(toLatest(staging), map[string]any{"karpgate.io/waive-KG102": "x"}), old: staging, user: "bob"},
			true, "KG102 waived by annotation karpgate.io/waive-KG102"},
		{"allowSameWrite", "waivers:\n  allowSameWrite: true\n", request{op: admissionv1.Update, object: withWaiver(toLatest(pinned), "canary"), old: pinned, user: "bob"},
			true, "KG101 waived by annotation karpgate.io/waive-KG101"},
		{"an approver", approvers, request{op: admissionv1.Update, object: withWaiver(toLatest(pinned), "canary"), old: pinned, user: "alice"},
			true, "KG101 waived by annotation karpgate.io/waive-KG101"},
		{"someone else, with approvers named", approvers, request{op: admissionv1.Update, object: withWaiver(toLatest(pinned), "canary"), old: pinned, user: "bob"},
			false, "KG006 metadata.annotations[karpgate.io/waive-KG101]: bob may not add or change the waiver for KG101"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := newAdmission(t, tt.config).write(t, tt.req, true)
			if got.allowed != tt.allowed {
				t.Fatalf("allowed=%v, want %v: %s %q", got.allowed, tt.allowed, got.message, got.warnings)
			}
			if where := got.message + strings.Join(got.warnings, "\n"); !strings.Contains(where, tt.contains) {
				t.Errorf("lacks %q:\n%s", tt.contains, where)
			}
		})
	}
}

// TestTheRecordIsChecked: a write whose record of who set each waiver is
// not the one the mutating webhook writes is refused; writes through both
// webhooks, and writes that carry the stored record through while the
// mutating webhook is down, are not.
func TestTheRecordIsChecked(t *testing.T) {
	a := newAdmission(t, "")
	plain := nodeClass("dev", nil, "al2023@v20240807")
	added := withAnnotations(plain, map[string]any{"karpgate.io/waive-KG102": "dev account"})
	stored := a.write(t, request{op: admissionv1.Update, object: added, old: plain, user: "alice"}, true)
	if !stored.allowed {
		t.Fatalf("a waiver through both webhooks: %s", stored.message)
	}
	record, _ := annotationOf(stored.stored, waiver.RecordAnnotation)
	forged := withAnnotations(plain, map[string]any{"karpgate.io/waive-KG102": "dev account", waiver.RecordAnnotation: `{"KG102":{"user":"ceo@example.com","at":"2026-01-05T08:30:00Z"}}`})
	for _, tt := range []struct {
		name    string
		req     request
		mutated bool
		message string // "" when allowed
	}{
		{"a forged author, the mutating webhook down", request{op: admissionv1.Update, object: forged, old: stored.stored, user: "mallory"}, false,
			"EC2NodeClass/dev: the annotation karpgate.io/waivers-set-by is not the record karpgate keeps of who set each waiver:\n" +
				`KG102: the write leaves the waiver as stored, and changes its entry to {"user":"ceo@example.com","at":"2026-01-05T08:30:00Z"} (stored: {"user":"alice","at":"2026-01-05T08:30:00Z"})` + "\n" +
				"Only karpgate's mutating webhook (mutate.karpgate.io) writes the record, on every write it sees, so it did not run on this one or another webhook changed the record after it"},
		{"a forged author on a new waiver, the mutating webhook down", request{op: admissionv1.Create, object: withAnnotations(nodeClass("new", nil, "al2023@v20240807"), map[string]any{"karpgate.io/waive-KG102": "x", waiver.RecordAnnotation: `{"KG102":{"user":"ceo@example.com","at":"2026-01-05T08:30:00Z"}}`}), user: "mallory"}, false,
			`KG102: the entry names "ceo@example.com", but the write that adds or changes the waiver is made by "mallory"`},
		{"a waiver added while the mutating webhook is down", request{op: admissionv1.Update, object: withAnnotations(plain, map[string]any{"karpgate.io/waive-KG102": "x", "karpgate.io/waive-KG103": "y", waiver.RecordAnnotation: record}), old: stored.stored, user: "bob"}, false,
			"KG102: the entry names \"alice\", but the write that adds or changes the waiver is made by \"bob\"\n" +
				"KG103: the write adds or changes the waiver, and the record has no entry for it\n" +
				"karpgate's mutating webhook (mutate.karpgate.io), which keeps the record, did not run on this write: it fails open"},
		{"the forged record through the mutating webhook: rebuilt", request{op: admissionv1.Update, object: forged, old: stored.stored, user: "mallory"}, true, ""},
		{"a controller's write carrying the record through, the mutating webhook down", request{op: admissionv1.Update, object: withAnnotations(stored.stored, map[string]any{"karpgate.io/waive-KG102": "dev account", waiver.RecordAnnotation: record, "karpenter.k8s.aws/ec2nodeclass-hash": "123"}), old: stored.stored, user: "system:serviceaccount:karpenter:karpenter"}, false, ""},
		{"a waiver removed, the mutating webhook down", request{op: admissionv1.Update, object: withAnnotations(plain, map[string]any{waiver.RecordAnnotation: record}), old: stored.stored, user: "bob"}, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := a.write(t, tt.req, tt.mutated)
			if tt.message == "" {
				if !got.allowed {
					t.Fatalf("refused: %s", got.message)
				}
				return
			}
			if got.allowed || !strings.Contains(got.message, tt.message) {
				t.Fatalf("allowed=%v\n%s\nwant it to contain\n%s", got.allowed, got.message, tt.message)
			}
		})
	}
}
