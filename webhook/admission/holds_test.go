package admission

import (
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// karpgateNow is the validating webhook's clock in these tests.
var karpgateNow = time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)

func validatorAt(t *testing.T, now time.Time, log logr.Logger) *Validator {
	return &Validator{Engines: newEngine(t, ""), Log: log, Now: func() time.Time { return now }}
}

func heldBy(record string) map[string]any {
	return withAnnotations(frozenPool(), map[string]any{karpenter.RolloutGuardAnnotation: record})
}

func recordSince(since, by string) string {
	r := `{"budget":{"nodes":"0","reasons":["Drifted"]},"index":1,"since":"` + since + `","reason":"incident 42"`
	if by != "" {
		r += `,"by":"` + by + `"`
	}
	return r + "}"
}

// TestValidatorRefusesHoldsDatedInTheFuture: a hold record or a resume
// dated past karpgate's clock (and the skew it allows) is refused with the
// annotation and the fix; one already stored is not judged again, so a
// NodePool that has one can still be written and resumed.
func TestValidatorRefusesHoldsDatedInTheFuture(t *testing.T) {
	hook := newWebhook(validatorAt(t, karpgateNow, logr.Discard()), validating, logr.Discard())
	unheld := nodePool("web", fullRef, map[string]any{"nodes": "10%"})
	forged := heldBy(recordSince("2099-01-01T00:00:00Z", "freeze"))
	for _, tt := range []struct {
		name    string
		req     request
		message string // "" means admitted; else part of the denial
	}{
		{"a freeze now", request{op: admissionv1.Update, object: heldBy(recordSince("2026-11-28T08:00:00Z", "freeze")), old: unheld}, ""},
		{"a freeze from a clock 5 minutes ahead", request{op: admissionv1.Update, object: heldBy(recordSince("2026-11-28T08:05:00Z", "freeze")), old: unheld}, ""},
		{"a freeze in 2099", request{op: admissionv1.Update, object: forged, old: unheld},
			`NodePool/web: metadata.annotations[karpgate.io/rollout-guard]: "since" is 2099-01-01T00:00:00Z, later than karpgate's clock (2026-11-28T08:00:00Z) by more than the 5m0s it allows for clocks that disagree; a hold cannot begin in the future: set "since" to the current time`},
		{"a NodePool created with a hold in 2099", request{op: admissionv1.Create, object: forged}, `"since" is 2099-01-01T00:00:00Z`},
		{"a dry run of it", request{op: admissionv1.Create, object: forged, dryRun: true}, `"since" is 2099-01-01T00:00:00Z`},
		{"a hold stored in 2099, another field written", request{op: admissionv1.Update, object: patch(t, forged, `[{"op":"replace","path":"/spec/template/metadata/labels/team","value":"b"}]`), old: forged}, ""},
		{"a hold stored in 2099, resumed now", request{op: admissionv1.Update, object: withAnnotations(unheld, map[string]any{karpenter.RolloutGuardResumedAnnotation: "2026-11-28T08:00:00Z"}), old: forged}, ""},
		{"a resume in 2099", request{op: admissionv1.Update, object: withAnnotations(unheld, map[string]any{karpenter.RolloutGuardResumedAnnotation: "2099-01-01T00:00:00Z"}), old: frozenPool()},
			"NodePool/web: metadata.annotations[karpgate.io/rollout-guard-resumed]: 2099-01-01T00:00:00Z is later than karpgate's clock"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			expectRefusal(t, hook, tt.req, tt.message)
		})
	}
}

// TestValidatorJudgesTheDeleteOfAHeldNodePool: deleting a frozen NodePool
// is refused with what holds it and how to lift it; a rollout guard's hold
// does not stop the deletion but is answered with a warning; whatever
// karpgate answers, the log names the NodePool and the user.
func TestValidatorJudgesTheDeleteOfAHeldNodePool(t *testing.T) {
	var (
		mu    sync.Mutex
		lines []string
	)
	log := funcr.New(func(_, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{})
	hook := newWebhook(validatorAt(t, karpgateNow, log), validating, logr.Discard())
	raw, err := os.ReadFile("../../docs/disruption.md")
	if err != nil {
		t.Fatal(err)
	}
	docs := string(raw)
	otherBudget := withAnnotations(nodePool("web", fullRef, map[string]any{"nodes": "10%"}, map[string]any{"nodes": "0"}),
		map[string]any{karpenter.RolloutGuardAnnotation: `{"budget":{"nodes":"0"},"index":1,"since":"2026-01-05T08:00:00Z","reason":"not karpgate's"}`})
	for _, tt := range []struct {
		name            string
		req             request
		message         string // "" means admitted; else part of the denial
		warning, logged string
	}{
		{"a frozen NodePool", request{op: admissionv1.Delete, old: frozenPool(), user: "alice"},
			"NodePool web is frozen: karpgate's freeze (since 2026-01-05T08:00:00Z: incident 42) holds its drift disruptions at zero in spec.disruption.budgets[1], and deleting the NodePool would terminate every node it has. To delete it deliberately, lift the freeze first with `karpgate resume web`, then delete it again",
			"", `"msg"="refused to delete a frozen NodePool" "nodepool"="web" "user"="alice" "dryRun"=false`},
		{"a frozen NodePool, dry run", request{op: admissionv1.Delete, old: frozenPool(), user: "alice", dryRun: true},
			"NodePool web is frozen", "", `"user"="alice" "dryRun"=true`},
		{"a NodePool the rollout guard holds", request{op: admissionv1.Delete, old: heldBy(recordSince("2026-01-05T08:00:00Z", "")), user: "system:serviceaccount:argocd:argocd-application-controller"},
			"", "NodePool web was held by the rollout guard (since 2026-01-05T08:00:00Z: incident 42); deleting it terminates its nodes",
			`"msg"="NodePool deleted while karpgate holds it" "nodepool"="web" "user"="system:serviceaccount:argocd:argocd-application-controller"`},
		{"a record that vouches for no hold", request{op: admissionv1.Delete, old: otherBudget, user: "bob"},
			"", "", `"msg"="NodePool deleted; its karpgate.io/rollout-guard record vouches for no hold" "nodepool"="web" "user"="bob"`},
		{"a NodePool karpgate does not hold", request{op: admissionv1.Delete, old: nodePool("plain", fullRef), user: "bob"}, "", "", `"nodepool"="plain"`},
		{"an EC2NodeClass", request{op: admissionv1.Delete, old: nodeClass("default", nil, "al2023@latest"), user: "bob"}, "", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			lines = nil
			mu.Unlock()
			resp := expectRefusal(t, hook, tt.req, tt.message)
			if tt.name == "a frozen NodePool" && !strings.Contains(docs, "denied the request: "+resp.Result.Message+"\n") {
				t.Errorf("docs/disruption.md does not show the refusal as it is:\n%s", resp.Result.Message)
			}
			if (tt.warning == "") != (len(resp.Warnings) == 0) || tt.warning != "" && !strings.HasPrefix(resp.Warnings[0], tt.warning) {
				t.Fatalf("warnings %q, want %q", resp.Warnings, tt.warning)
			}
			mu.Lock()
			defer mu.Unlock()
			if tt.logged == "" && len(lines) > 0 || tt.logged != "" && !containsText(lines, tt.logged) {
				t.Fatalf("log %q, want a line with %s", lines, tt.logged)
			}
		})
	}
}

// TestMutatorKeepsOnlyValidHoldsUntilResumed: the keep restores a hold the
// stored record vouches for, through any write but a resume, and a resume
// ends it whatever its since; a record that vouches for nothing gets no
// budget put back.
func TestMutatorKeepsOnlyValidHoldsUntilResumed(t *testing.T) {
	const (
		free = `[{"nodes":"10%"}]`
		held = `[{"nodes":"10%"},{"nodes":"0","reasons":["Drifted"]}]`
	)
	git := nodePool("web", fullRef, map[string]any{"nodes": "10%"})
	resume := withAnnotations(git, map[string]any{karpenter.RolloutGuardResumedAnnotation: "2026-11-28T08:00:00Z"})
	forged := heldBy(recordSince("2099-01-01T00:00:00Z", "freeze"))
	stale := withAnnotations(nodePool("web", fullRef, map[string]any{"nodes": "10%"}), map[string]any{karpenter.RolloutGuardAnnotation: freezeRecord})
	otherBudget := withAnnotations(nodePool("web", fullRef, map[string]any{"nodes": "10%"}, map[string]any{"nodes": "0"}),
		map[string]any{karpenter.RolloutGuardAnnotation: `{"budget":{"nodes":"0"},"index":1,"since":"2026-01-05T08:00:00Z","reason":"not karpgate's","by":"freeze"}`})
	for _, tt := range []struct {
		name        string
		old, write  map[string]any
		wantBudgets string
	}{
		{"a hold since 2099, Git's version replaced", forged, git, held},
		{"a hold since 2099, resumed now", forged, resume, free},
		{"a freeze, resumed", frozenPool(), resume, free},
		{"a record whose budget is gone, Git's version replaced", stale, git, free},
		{"a record of another budget, Git's version replaced", otherBudget, git, free},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stored, _ := mutateAs(t, request{op: admissionv1.Update, object: tt.write, old: tt.old, user: "system:serviceaccount:argocd:argocd-application-controller"})
			if got := budgetsOf(stored); got != tt.wantBudgets {
				t.Fatalf("budgets %s, want %s", got, tt.wantBudgets)
			}
			_, recorded := stringAnnotations(stored)[karpenter.RolloutGuardAnnotation]
			if recorded != (tt.wantBudgets == held) {
				t.Fatalf("record kept: %v", recorded)
			}
		})
	}
}

// expectRefusal posts req and checks the verdict: allowed when message is
// "", else refused with a message that contains it.
func expectRefusal(t *testing.T, hook http.Handler, req request, message string) *admissionv1.AdmissionResponse {
	t.Helper()
	_, review := post(t, hook, req.body(t), "application/json")
	resp := review.Response
	if resp.Allowed != (message == "") {
		t.Fatalf("allowed=%v: %+v", resp.Allowed, resp.Result)
	}
	if message != "" && !strings.Contains(resp.Result.Message, message) {
		t.Fatalf("message:\n%s\nwant it to contain:\n%s", resp.Result.Message, message)
	}
	return resp
}
