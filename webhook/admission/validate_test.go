package admission

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpgate/karpgate/config"
)

func TestValidatingWebhook(t *testing.T) {
	hook := NewValidatingWebhook(newEngine(t, ""), logr.Discard())
	pinned := nodeClass("production", production, "al2023@v20240807")
	latestProd := nodeClass("production-latest", production, "al2023@latest")
	latestDev := nodeClass("dev", nil, "al2023@latest")
	frozen := nodePool("weekend", fullRef, weekendFreeze)
	waivedLatest := patch(t, latestProd, `[{"op":"add","path":"/metadata/annotations","value":{"karpgate.io/waive-KG101":"canary fleet, rolled by hand"}}]`)
	beingDeleted := patch(t, frozen, `[{"op":"add","path":"/metadata/deletionTimestamp","value":"2024-06-05T12:00:00Z"}]`)
	configMap := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}

	tests := []struct {
		name    string
		req     request
		allowed bool
		// message is the whole denial; warnings must match in order, by
		// prefix, and be all there is.
		message  string
		warnings []string
	}{
		{
			name: "pinned production alias", req: request{op: admissionv1.Create, object: pinned}, allowed: true,
		},
		{
			name: "@latest in production", req: request{op: admissionv1.Create, object: latestProd},
			message: "EC2NodeClass/production-latest breaks 1 karpgate rule:\n" +
				`KG101 spec.amiSelectorTerms[0].alias: alias "al2023@latest" follows every AMI release, so each release drifts and replaces every node of this production EC2NodeClass (fix: Pin a version you have tested, such as al2023@v20240807)`,
		},
		{
			name: "@latest in production, dry run", req: request{op: admissionv1.Create, object: latestProd, dryRun: true},
			message: "EC2NodeClass/production-latest breaks 1 karpgate rule:\n" +
				`KG101 spec.amiSelectorTerms[0].alias: alias "al2023@latest" follows every AMI release, so each release drifts and replaces every node of this production EC2NodeClass (fix: Pin a version you have tested, such as al2023@v20240807)`,
		},
		{
			name: "@latest outside production", req: request{op: admissionv1.Create, object: latestDev}, allowed: true,
			warnings: []string{`KG102 spec.amiSelectorTerms[0].alias: alias "al2023@latest" follows every AMI release: each release drifts and replaces every node of this EC2NodeClass (fix: Pin a version you have tested, such as al2023@v20240807)`},
		},
		{
			// The waiver is stored: a write that adds one is in waivers_test.go.
			name: "waived @latest in production", req: request{op: admissionv1.Update, object: patch(t, waivedLatest, `[{"op":"add","path":"/metadata/labels/team","value":"web"}]`), old: waivedLatest}, allowed: true,
			warnings: []string{`KG101 waived by annotation karpgate.io/waive-KG101 ("canary fleet, rolled by hand") at spec.amiSelectorTerms[0].alias: alias "al2023@latest" follows every AMI release`},
		},
		{
			name: "budget schedule Karpenter cannot parse", req: request{op: admissionv1.Create, object: frozen},
			message: "NodePool/weekend breaks 1 karpgate rule:\n" +
				`KG201 spec.disruption.budgets[0].schedule: "0 9 * * sat-sun" is not a valid cron: beginning of range (6) beyond end of range (0): sat-sun; the API server accepts it, then Karpenter allows zero voluntary disruptions of this NodePool for every reason (fix: Use "0 9 * * sat,sun".)`,
		},
		{
			name: "update that introduces the broken schedule",
			req:  request{op: admissionv1.Update, object: frozen, old: nodePool("weekend", fullRef)},
			message: "NodePool/weekend breaks 1 karpgate rule:\n" +
				`KG201 spec.disruption.budgets[0].schedule: "0 9 * * sat-sun"`,
		},
		{
			name:    "update of an object that already broke the rule",
			req:     request{op: admissionv1.Update, object: patch(t, frozen, `[{"op":"add","path":"/metadata/labels","value":{"owner":"x"}}]`), old: frozen},
			allowed: true,
			warnings: []string{
				`KG201 spec.disruption.budgets[0].schedule: "0 9 * * sat-sun" is not a valid cron`,
			},
		},
		{
			name:    "update that drifts every node",
			req:     request{op: admissionv1.Update, object: patch(t, nodePool("p", fullRef), `[{"op":"replace","path":"/spec/template/metadata/labels/team","value":"b"}]`), old: nodePool("p", fullRef)},
			allowed: true,
			warnings: []string{
				"KG601 spec.template.metadata.labels: this update changes spec.template.metadata.labels, which Karpenter hashes: every node of NodePool/p drifts and is replaced, as fast as its Drifted budgets allow (fix: If replacing every node",
			},
		},
		{
			name:    "update that switches to @latest",
			req:     request{op: admissionv1.Update, object: latestDev, old: nodeClass("dev", nil, "al2023@v20240807")},
			allowed: true,
			warnings: []string{
				`KG102 spec.amiSelectorTerms[0].alias: alias "al2023@latest" follows every AMI release`,
				`KG602 spec.amiSelectorTerms[0].alias: this update switches the AMI selection to "al2023@latest": every node of EC2NodeClass/dev drifts now`,
			},
		},
		{
			// The mutating webhook did not run: its finding is not repeated
			// here, the rule the mutation would have satisfied denies.
			name: "nodeClassRef without group and kind",
			req:  request{op: admissionv1.Create, object: nodePool("ref", map[string]any{"name": "default"})},
			message: "NodePool/ref breaks 1 karpgate rule:\n" +
				"KG404 spec.template.spec.nodeClassRef: spec.template.spec.nodeClassRef has no group or kind, which v1 requires (fix: Add group: karpenter.k8s.aws and kind: EC2NodeClass)",
		},
		{name: "not a Karpenter kind", req: request{op: admissionv1.Create, object: configMap}, allowed: true},
		{name: "delete", req: request{op: admissionv1.Delete, old: latestProd}, allowed: true},
		{
			name: "finalizer removal while deleting (the match conditions keep it away; called anyway, it is grandfathered)",
			req:  request{op: admissionv1.Update, object: beingDeleted, old: beingDeleted}, allowed: true,
			warnings: []string{`KG201 spec.disruption.budgets[0].schedule: "0 9 * * sat-sun" is not a valid cron`},
		},
		{
			name: "spec change while deleting",
			req:  request{op: admissionv1.Update, object: patch(t, beingDeleted, `[{"op":"replace","path":"/spec/disruption/budgets/0/schedule","value":"0 9 * * mon-sun"}]`), old: beingDeleted},
			message: "NodePool/weekend breaks 1 karpgate rule:\n" +
				`KG201 spec.disruption.budgets[0].schedule: "0 9 * * mon-sun"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, review := post(t, hook, tt.req.body(t), "application/json")
			resp := review.Response
			if code != http.StatusOK || resp.UID != "b6c1e3a0-0d6a-4c5e-9a57-4a2bd1f6a001" {
				t.Fatalf("HTTP %d, uid %q", code, resp.UID)
			}
			if resp.Allowed != tt.allowed {
				t.Fatalf("allowed = %v, want %v: %+v", resp.Allowed, tt.allowed, resp.Result)
			}
			if !tt.allowed {
				if resp.Result.Code != http.StatusForbidden || !strings.HasPrefix(resp.Result.Message, tt.message) {
					t.Errorf("denial %d:\n%s\nwant prefix:\n%s", resp.Result.Code, resp.Result.Message, tt.message)
				}
			}
			if len(resp.Warnings) != len(tt.warnings) {
				t.Fatalf("warnings:\n%s\nwant %d", strings.Join(resp.Warnings, "\n"), len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if !strings.HasPrefix(resp.Warnings[i], w) || strings.Contains(resp.Warnings[i], "\n") {
					t.Errorf("warning %d:\n%s\nwant one line starting with:\n%s", i, resp.Warnings[i], w)
				}
			}
		})
	}
}

func TestGrandfatheredWarningSaysWhy(t *testing.T) {
	hook := NewValidatingWebhook(newEngine(t, ""), logr.Discard())
	frozen := nodePool("weekend", fullRef, weekendFreeze)
	relabelled := patch(t, frozen, `[{"op":"add","path":"/metadata/labels","value":{"owner":"x"}}]`)
	_, review := post(t, hook, request{op: admissionv1.Update, object: relabelled, old: frozen}.body(t), "application/json")
	if w := review.Response.Warnings; len(w) != 1 || !strings.HasSuffix(w[0], "[present before this update, so it does not block it; fix it when you can]") {
		t.Fatalf("warnings %q", w)
	}
}

func TestDecisionsAreCounted(t *testing.T) {
	hook := NewValidatingWebhook(newEngine(t, ""), logr.Discard())
	latestProd := nodeClass("production-latest", production, "al2023@latest")
	tests := []struct {
		dryRun bool
		label  string
	}{{false, "false"}, {true, "true"}}
	for _, tt := range tests {
		decisions := findingsTotal.WithLabelValues(validating, "KG101", actionDeny, tt.label)
		requests := requestsTotal.WithLabelValues(validating, "EC2NodeClass", "CREATE", verdictDenied, tt.label)
		beforeDecisions, beforeRequests := testutil.ToFloat64(decisions), testutil.ToFloat64(requests)
		post(t, hook, request{op: admissionv1.Create, object: latestProd, dryRun: tt.dryRun}.body(t), "application/json")
		if got := testutil.ToFloat64(decisions) - beforeDecisions; got != 1 {
			t.Errorf("dry_run=%s: karpgate_admission_decisions_total{rule=KG101,action=deny} rose by %v, want 1", tt.label, got)
		}
		if got := testutil.ToFloat64(requests) - beforeRequests; got != 1 {
			t.Errorf("dry_run=%s: karpgate_admission_requests_total{verdict=denied} rose by %v, want 1", tt.label, got)
		}
	}
}

func TestEvaluationErrorsFailClosed(t *testing.T) {
	v := &Validator{Engines: newEngine(t, ""), Log: logr.Discard()}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := ctrladmission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "1", Operation: admissionv1.Create}}
	req.Object.Raw = mustJSON(t, nodeClass("dev", nil, "al2023@v20240807"))
	resp := v.Handle(ctx, req)
	if resp.Allowed || resp.Result.Code != http.StatusInternalServerError ||
		!strings.Contains(resp.Result.Message, "karpgate could not evaluate EC2NodeClass/dev") ||
		!strings.Contains(resp.Result.Message, "the validating webhook fails closed, so the request is refused") {
		t.Fatalf("got %+v", resp.Result)
	}
	if !slices.Equal(resp.Warnings, nil) {
		t.Fatalf("unexpected warnings %v", resp.Warnings)
	}
}

// verdict posts one request and returns whether it was allowed, the
// denial's rule IDs in order and the warnings.
func verdict(t *testing.T, hook http.Handler, req request) (allowed bool, denied []string, warnings []string) {
	t.Helper()
	_, review := post(t, hook, req.body(t), "application/json")
	resp := review.Response
	if !resp.Allowed {
		for _, line := range strings.Split(resp.Result.Message, "\n")[1:] {
			id, _, _ := strings.Cut(line, " ")
			denied = append(denied, id)
		}
	}
	return resp.Allowed, denied, resp.Warnings
}

// TestAuthorCannotSwitchOffProductionRules is the review's first
// reproduction: one patch that removes karpgate.io/environment and moves
// the alias to @latest was admitted with a warning, because production
// came from the new object alone. The old object's verdict now counts
// too, and taking an object out of production needs a waiver (KG604).
func TestAuthorCannotSwitchOffProductionRules(t *testing.T) {
	hook := NewValidatingWebhook(newEngine(t, "amis:\n  approvedAliasVersions:\n    al2023: [v20240807]\n"), logr.Discard())
	pinned := nodeClass("production", production, "al2023@v20240807")
	// A waiver added in a write of its own: one added with the label's
	// removal does not waive it (waivers_test.go).
	waivedKG604 := withAnnotations(pinned, map[string]any{"karpgate.io/waive-KG604": "moved to the batch cluster, ticket OPS-12"})
	tests := []struct {
		name     string
		old      map[string]any // nil: pinned
		object   map[string]any
		allowed  bool
		denied   []string
		warnings []string
	}{
		{
			name:   "label removed and @latest in one patch",
			object: patch(t, pinned, `[{"op":"remove","path":"/metadata/labels"},{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@latest"}]`),
			denied: []string{"KG101", "KG604"},
		},
		{
			name:   "label set to staging and an unapproved version",
			object: patch(t, pinned, `[{"op":"replace","path":"/metadata/labels/karpgate.io~1environment","value":"staging"},{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@v20991231"}]`),
			denied: []string{"KG108", "KG604"},
		},
		{
			name:   "label removed alone",
			object: patch(t, pinned, `[{"op":"remove","path":"/metadata/labels"}]`),
			denied: []string{"KG604"},
		},
		{
			name:     "label removed with a waiver stored before",
			old:      waivedKG604,
			object:   patch(t, waivedKG604, `[{"op":"remove","path":"/metadata/labels"}]`),
			allowed:  true,
			warnings: []string{`KG604 waived by annotation karpgate.io/waive-KG604 ("moved to the batch cluster, ticket OPS-12") at metadata.labels[karpgate.io/environment]`},
		},
		{
			name:   "a waiver of KG604 does not waive KG101",
			old:    waivedKG604,
			object: patch(t, waivedKG604, `[{"op":"remove","path":"/metadata/labels"},{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@latest"}]`),
			denied: []string{"KG101"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := tt.old
			if old == nil {
				old = pinned
			}
			allowed, denied, warnings := verdict(t, hook, request{op: admissionv1.Update, object: tt.object, old: old})
			if allowed != tt.allowed || !slices.Equal(denied, tt.denied) {
				t.Fatalf("allowed %v, denied by %v; want %v, %v (warnings %q)", allowed, denied, tt.allowed, tt.denied, warnings)
			}
			for i, w := range tt.warnings {
				if i >= len(warnings) || !strings.HasPrefix(warnings[i], w) {
					t.Errorf("warnings %q, want %q", warnings, tt.warnings)
				}
			}
		})
	}
}

// TestGrandfatheringIsKeyedByValue is the review's second reproduction:
// an unapproved alias admitted before the approved list existed could be
// moved to another unapproved version with a "grandfathered" warning. A
// denial the old object had lets an update through only while the value
// it is about stays the same.
func TestGrandfatheringIsKeyedByValue(t *testing.T) {
	hook := NewValidatingWebhook(newEngine(t, "amis:\n  approvedAliasVersions:\n    al2023: [v20240807]\n"), logr.Discard())
	old := nodeClass("production", production, "al2023@v20240101")
	swapped := patch(t, old, `[{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@v20991231"}]`)
	allowed, denied, warnings := verdict(t, hook, request{op: admissionv1.Update, object: swapped, old: old})
	if allowed || !slices.Equal(denied, []string{"KG108"}) {
		t.Fatalf("the swap: allowed %v, denied by %v, warnings %q; want a KG108 denial", allowed, denied, warnings)
	}

	relabelled := patch(t, old, `[{"op":"add","path":"/metadata/labels/team","value":"web"}]`)
	allowed, _, warnings = verdict(t, hook, request{op: admissionv1.Update, object: relabelled, old: old})
	if !allowed || len(warnings) != 1 || !strings.HasPrefix(warnings[0], `KG108 spec.amiSelectorTerms[0].alias: alias "al2023@v20240101"`) || !strings.Contains(warnings[0], "[present before this update") {
		t.Fatalf("an update that leaves the alias alone: allowed %v, warnings %q; want it grandfathered", allowed, warnings)
	}
}

// twinsOf covers the rules it lists, at the action given.
type twinsOf map[string]config.Action

func (c twinsOf) Covered(rule string, action config.Action) bool { return c[rule] == action }

// A warning the API server's Warn twin gives is not given again, and is
// counted as left to the twin; a warning no twin covers, and a denial,
// stay the webhook's.
func TestWarningsLeftToTheirTwins(t *testing.T) {
	latestDev := nodeClass("dev", nil, "al2023@latest")
	latestProd := nodeClass("production-latest", production, "al2023@latest")
	tests := []struct {
		name         string
		twins        twinsOf
		object       map[string]any
		warnings     int
		allowed      bool
		leftToTwin   float64
		leftRuleName string
	}{
		{"no twins: the webhook warns", nil, latestDev, 1, true, 0, "KG102"},
		{"a Warn twin of KG102: it warns instead", twinsOf{"KG102": config.Warn}, latestDev, 0, true, 1, "KG102"},
		{"a twin of another rule: the webhook warns", twinsOf{"KG110": config.Warn}, latestDev, 1, true, 0, "KG102"},
		{"a denial stays the webhook's, whatever twins say", twinsOf{"KG101": config.Warn}, latestProd, 0, false, 0, "KG101"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &Validator{Engines: newEngine(t, ""), Log: logr.Discard()}
			if tt.twins != nil {
				v.Twins = tt.twins
			}
			left := findingsTotal.WithLabelValues(validating, tt.leftRuleName, actionTwin, "false")
			before := testutil.ToFloat64(left)
			_, review := post(t, ValidatingWebhook(v), request{op: admissionv1.Create, object: tt.object}.body(t), "application/json")
			if review.Response.Allowed != tt.allowed || len(review.Response.Warnings) != tt.warnings {
				t.Fatalf("allowed %v, warnings %q; want allowed %v and %d warnings", review.Response.Allowed, review.Response.Warnings, tt.allowed, tt.warnings)
			}
			if got := testutil.ToFloat64(left) - before; got != tt.leftToTwin {
				t.Errorf("decisions{rule=%s,action=twin} rose by %v, want %v", tt.leftRuleName, got, tt.leftToTwin)
			}
		})
	}
}
