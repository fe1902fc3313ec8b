package twins

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/admissionpolicy"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/twin"
	"github.com/karpgate/karpgate/policies/waiver"
	"github.com/karpgate/karpgate/webhook/admission"
)

// now is the engine's clock: waivers "until" a later day are active.
var now = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// harness judges requests both ways for one karpgate.yaml and release.
type harness struct {
	name      string
	engine    *policies.Engine
	validator *admission.Validator
	eval      *admissionpolicy.Evaluator
	// gate denies every request the policy's match conditions let
	// through: those the API server hands karpgate's webhook and policy.
	gate  *admissionpolicy.Evaluator
	twins []twin.Twin
	// ruleAt is the rule of each validation; actionOf the action of each
	// binding, by name.
	ruleAt   []string
	actionOf map[string]string
	// actions is each twinned rule's action at admission, "" when off.
	actions map[string]string
}

func newHarness(t testing.TB, name, karpgateYAML string, judged release.Judged) *harness {
	t.Helper()
	cfg, err := config.Parse("karpgate.yaml", []byte(karpgateYAML))
	if err != nil {
		t.Fatal(err)
	}
	e, err := policies.New(context.Background(), policies.Options{Config: cfg, Karpenter: &judged, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	objs, twins, err := twin.ForEngine(e, deploy.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	// Every binding audits, so that each failed validation of each binding
	// is recorded with its message (the API server reports only the first
	// denial); TestRealBindings checks the real actions.
	var bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	h := &harness{name: name, engine: e, twins: twins, actionOf: map[string]string{}, actions: map[string]string{}}
	for _, b := range objs.Bindings {
		b = b.DeepCopy()
		h.actionOf[b.Name] = strings.ToLower(string(b.Spec.ValidationActions[0]))
		b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}
		bindings = append(bindings, b)
	}
	if h.eval, err = admissionpolicy.New([]*admissionregistrationv1.ValidatingAdmissionPolicy{objs.Policy}, bindings, admissionpolicy.ConfigMapParams(objs.Params)); err != nil {
		t.Fatal(err)
	}
	gate := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "reaches-karpgate"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: objs.Policy.Spec.MatchConstraints, MatchConditions: objs.Policy.Spec.MatchConditions,
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "reaches karpgate"}},
		}}
	gateBinding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "reaches-karpgate"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: gate.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
	if h.gate, err = admissionpolicy.New([]*admissionregistrationv1.ValidatingAdmissionPolicy{gate}, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{gateBinding}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tw := range twins {
		h.ruleAt = append(h.ruleAt, tw.ID())
		if cfg.Enabled(tw.ID()) {
			h.actions[tw.ID()] = string(cfg.ActionFor(tw.ID(), tw.Rule.DefaultAction(config.Admission), config.Admission))
		}
	}
	h.validator = &admission.Validator{Engines: admission.Static(e), Log: logr.Discard(), Now: func() time.Time { return now }}
	return h
}

// request is one admission request, objects as the API server stores them.
type request struct {
	name        string
	op          admissionv1.Operation
	object, old map[string]any
	user        string
	groups      []string
}

// outcome is what one engine said, per twinned rule: the message of the
// rule's findings at its action, "" for none.
type outcome map[string]string

// rego is what the validating webhook answers for r, per rule: denial
// lines, warnings, and the findings it only audits (which the engine
// returns and the webhook counts).
func (h *harness) rego(t testing.TB, r request) outcome {
	t.Helper()
	req := admissionv1.AdmissionRequest{
		UID: types.UID("3c4b1d2e-0000-4000-8000-000000000001"), Kind: metav1.GroupVersionKind{Kind: kindOf(r.object)},
		Name: nameOf(r.object), Operation: r.op, DryRun: ptrFalse(),
		UserInfo: authenticationv1.UserInfo{Username: r.user, Groups: r.groups},
		Object:   runtime.RawExtension{Raw: mustJSON(t, r.object)},
	}
	if r.old != nil {
		req.OldObject = runtime.RawExtension{Raw: mustJSON(t, r.old)}
	}
	resp := h.validator.Handle(context.Background(), ctrladmission.Request{AdmissionRequest: req})
	if resp.Result != nil && resp.Result.Code >= 500 {
		t.Fatalf("%s: the webhook failed: %s", r.name, resp.Result.Message)
	}
	var denials []string
	if !resp.Allowed {
		lines := strings.Split(resp.Result.Message, "\n")
		denials = lines[1:] // after "<Kind>/<name> breaks N karpgate rules:"
	}
	res, err := h.engine.Evaluate(context.Background(), policies.Request{
		Object: r.object, OldObject: r.old, Operation: policies.Operation(r.op), Point: config.Admission,
		UserInfo: &policies.UserInfo{Username: r.user, Groups: r.groups},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := outcome{}
	for _, tw := range h.twins {
		id := tw.ID()
		var lines []string
		switch h.actions[id] {
		case "deny":
			lines = ofRule(id, denials)
		case "warn":
			for _, w := range ofRule(id, resp.Warnings) {
				if !strings.HasPrefix(w, id+" waived by annotation ") {
					lines = append(lines, w)
				}
			}
		case "audit":
			for _, f := range res.Audits() {
				if f.RuleID == id {
					lines = append(lines, strings.Join(strings.Fields(f.String()), " "))
				}
			}
		}
		if len(lines) > 0 {
			out[id] = apiServerMessage(tw, strings.Join(lines, " | "))
		}
	}
	return out
}

// apiServerMessage is what the API server makes of a twin's message: it
// trims it, and says the rule's static message instead of one too long.
func apiServerMessage(tw twin.Twin, msg string) string {
	msg = strings.TrimSpace(msg)
	if len(msg) > celconfig.MaxEvaluatedMessageExpressionSizeBytes {
		return twin.StaticMessage(tw.Rule)
	}
	return msg
}

func ofRule(id string, lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, id+" ") || strings.HasPrefix(l, id+":") {
			out = append(out, l)
		}
	}
	return out
}

// policy is what the twins' bindings record for r, per rule.
func (h *harness) policy(t testing.TB, r request) (outcome, error) {
	t.Helper()
	v, err := h.eval.Validate(context.Background(), policyRequest(r))
	if err != nil {
		return nil, err
	}
	if v.Denied {
		return nil, fmt.Errorf("the policy refused the request outright: %s", v.Message)
	}
	out := outcome{}
	for _, f := range v.Failures {
		if f.ExpressionIndex >= len(h.ruleAt) {
			return nil, fmt.Errorf("a failure of validation %d, which no twin has: %s", f.ExpressionIndex, f.Message)
		}
		id := h.ruleAt[f.ExpressionIndex]
		if got, want := h.actionOf[f.Binding], h.actions[id]; got != want {
			return nil, fmt.Errorf("%s failed under binding %s (%s) though its action is %q: %s", id, f.Binding, got, want, f.Message)
		}
		if prev, dup := out[id]; dup {
			return nil, fmt.Errorf("%s failed twice: %q and %q", id, prev, f.Message)
		}
		out[id] = f.Message
	}
	return out, nil
}

// reaches reports whether the match conditions of karpgate's webhook and
// policy (webhookconfig.MatchConditions) hand r to them.
func (h *harness) reaches(t testing.TB, r request) bool {
	t.Helper()
	v, err := h.gate.Validate(context.Background(), policyRequest(r))
	if err != nil {
		t.Fatal(err)
	}
	return v.Denied
}

// policyRequest is r as the API server hands it to a policy.
func policyRequest(r request) admissionpolicy.Request {
	op := k8sadmission.Create
	if r.op == admissionv1.Update {
		op = k8sadmission.Update
	}
	return admissionpolicy.Request{
		Object: r.object, OldObject: r.old, Resource: resourceOf(r.object), Operation: op,
		User: &user.DefaultInfo{Name: r.user, Groups: r.groups},
	}
}

func resourceOf(obj map[string]any) string {
	switch kindOf(obj) {
	case "NodePool":
		return "nodepools"
	case "EC2NodeClass":
		return "ec2nodeclasses"
	}
	return strings.ToLower(kindOf(obj)) + "s"
}

func kindOf(obj map[string]any) string { k, _ := obj["kind"].(string); return k }

func nameOf(obj map[string]any) string {
	m, _ := obj["metadata"].(map[string]any)
	n, _ := m["name"].(string)
	return n
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ptrFalse() *bool { f := false; return &f }

// datedWaiver reports whether obj waives rule id until a date: the twins
// cannot read a clock, so such a waiver waives nothing there, and the twin
// reports what the webhook lets through as waived.
func datedWaiver(obj map[string]any, id string) bool {
	m, _ := obj["metadata"].(map[string]any)
	a, _ := m["annotations"].(map[string]any)
	s, _ := a["karpgate.io/waive-"+id].(string)
	return strings.HasPrefix(strings.TrimSpace(s), "until ")
}

// tally counts what the comparison saw.
type tally struct {
	requests, creates, updates, stricter int
	// passedOver counts the requests the match conditions keep from both.
	passedOver int
	// found counts, per rule, the requests where both engines reported it.
	found map[string]int
	diffs []string
}

// compare judges r both ways and records any difference.
func (h *harness) compare(t testing.TB, r request, tl *tally) {
	t.Helper()
	// The mutating webhook runs before both judges and writes the record
	// of who set each waiver, which the validating webhook checks and the
	// policy ignores; the old object carries the one its own write stored.
	if r.old != nil {
		r.old = withRecord(r.old, nil, "earlier@example.com")
	}
	r.object = withRecord(r.object, r.old, r.user)
	if !h.reaches(t, r) {
		// An UPDATE that changes nothing karpgate judges: the match
		// conditions, which the webhook and the policy share, keep it
		// from both.
		tl.passedOver++
		return
	}
	want := h.rego(t, r)
	got, err := h.policy(t, r)
	tl.requests++
	if r.op == admissionv1.Update {
		tl.updates++
	} else {
		tl.creates++
	}
	if err != nil {
		tl.diffs = append(tl.diffs, fmt.Sprintf("%s / %s: %v", h.name, r.name, err))
		return
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range want {
			if !yield(id) {
				return
			}
		}
		for id := range got {
			if _, seen := want[id]; !seen && !yield(id) {
				return
			}
		}
	})
	for _, id := range ids {
		w, g := want[id], got[id]
		switch {
		case w == g:
			tl.found[id]++
		case w == "" && datedWaiver(r.object, id):
			tl.stricter++ // the twin ignored a dated waiver, as documented
		default:
			tl.diffs = append(tl.diffs, fmt.Sprintf("%s / %s: %s (%s)\n  rego:   %q\n  policy: %q", h.name, r.name, id, h.actions[id], w, g))
		}
	}
}

// withRecord is obj with the record of who set each waiver that karpgate's
// mutating webhook writes for a write of obj over old by user.
func withRecord(obj, old map[string]any, user string) map[string]any {
	record := waiver.NextRecord(obj, old, user, now).Encode()
	if record == "" {
		return obj
	}
	return edit(obj, func(m map[string]any) { field(field(m, "metadata"), "annotations")[waiver.RecordAnnotation] = record })
}
