package admission

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/go-logr/logr"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/internal/valuekey"
	"github.com/karpgate/karpgate/policies"
)

// Engines hands out the engine to evaluate with. Hot reload swaps it
// between requests; one request uses one engine from start to end.
type Engines interface {
	Engine() *policies.Engine
}

// Static is an Engines that always hands out the same engine, for callers
// that do not reload.
func Static(engine *policies.Engine) Engines { return static{engine} }

type static struct{ engine *policies.Engine }

func (s static) Engine() *policies.Engine { return s.engine }

// Validator answers the validating webhook.
type Validator struct {
	Engines Engines
	// Twins, when set, says which rules the API server's
	// ValidatingAdmissionPolicy enforces itself (policies/twinsync): a
	// warning its Warn binding gives is not given again.
	Twins Twins
	Log   logr.Logger
	// Now is karpgate's clock, which hold records may not be dated after
	// (by more than holdrecord.MaxSkew) and the record of who set a waiver
	// is checked against (waiver.CheckRecord); nil means time.Now.
	Now func() time.Time
}

// Twins says whether the API server enforces rule's CEL twin with action
// as karpgate would write it.
//
// The webhook and the policy never both deny: the API server runs
// ValidatingAdmissionPolicies before validating webhooks and stops at the
// first refusal, so a denial by a twin never reaches the webhook, and a
// denial the webhook gives is one no twin gave (a rule without a twin, or
// a difference the differential test of test/twins would catch). Warnings
// have no such order: both would show, so the webhook leaves a covered
// Warn twin's findings to the policy.
type Twins interface {
	Covered(rule string, action config.Action) bool
}

func (v *Validator) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

var _ ctrladmission.Handler = (*Validator)(nil)

// Handle evaluates one request; see the package documentation.
func (v *Validator) Handle(ctx context.Context, req ctrladmission.Request) ctrladmission.Response {
	r, skip, err := decode(req)
	switch {
	case err != nil:
		countRequest(validating, r, verdictError)
		return ctrladmission.Errored(http.StatusBadRequest, err)
	case skip:
		countRequest(validating, r, verdictSkipped)
		return ctrladmission.Allowed("")
	case r.operation == policies.Delete:
		return v.deleteHeld(r)
	}
	if refusal := refuseHoldDates(r, v.now()); refusal != nil {
		countRequest(validating, r, verdictDenied)
		return *refusal
	}
	// The record is karpgate's own, whatever the rules: checked first.
	if refusal := recordRefusal(r, v.now()); refusal != "" {
		countRequest(validating, r, verdictDenied)
		return ctrladmission.Denied(refusal)
	}
	engine := v.Engines.Engine()
	start := time.Now()
	lines, refusals, err := v.judgeForms(ctx, engine, r)
	evaluationSeconds.WithLabelValues(validating).Observe(time.Since(start).Seconds())
	if err != nil {
		countRequest(validating, r, verdictError)
		v.Log.Error(err, "evaluation failed", "object", r.ref, "operation", r.operation)
		return ctrladmission.Errored(http.StatusInternalServerError, evaluationError(r, err, "the validating webhook fails closed, so the request is refused"))
	}
	denials, warnings := render(r, lines, v.Twins)
	if len(denials) > 0 || len(refusals) > 0 {
		countRequest(validating, r, verdictDenied)
		return ctrladmission.Denied(refusalMessage(r.ref, refusals, denials)).WithWarnings(warnings...)
	}
	countRequest(validating, r, verdictAllowed)
	return ctrladmission.Allowed("").WithWarnings(warnings...)
}

// judgeForms judges the object as the client sent it and, for a v1beta1
// write, as the API server will store it (stored.go), and merges the two
// verdicts. refusals are the restore records the write may not carry.
func (v *Validator) judgeForms(ctx context.Context, engine *policies.Engine, r review) (lines []verdictLine, refusals []string, err error) {
	now := engine.Now() // one instant for every evaluation of the request
	sent := form{object: r.object, oldObject: r.oldObject}
	if lines, err = judgeForm(ctx, engine, r, sent, now); err != nil || !judgedAsStored(r) {
		return lines, nil, err
	}
	stored, err := asStored(ctx, engine, r, now)
	var convErr *conversion.Error
	if errors.As(err, &convErr) {
		// The API server's conversion, the same code, would fail as well.
		return lines, []string{oneLine(fmt.Sprintf("karpgate cannot convert it to v1, as the API server must to store it: %v", convErr.Err))}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if stored.oldObject == nil && r.oldObject != nil {
		v.Log.Info("the old object does not convert to v1; its stored form is judged without it", "object", r.ref)
	}
	storedLines, err := judgeForm(ctx, engine, r, stored.form, now)
	if err != nil {
		return nil, nil, err
	}
	return mergeForms(lines, storedLines, r.object, stored.apiVersion), stored.refusals, nil
}

// form is one shape of what a request writes: the object and old object as
// the client sent them, or as they will be stored.
type form struct {
	object, oldObject map[string]any
}

// verdictLine is one finding and what it does to the request.
type verdictLine struct {
	finding policies.Finding
	action  string // actionDeny, actionGrandfathered, actionWarn, actionAudit or actionWaived
}

// judgeForm evaluates one form and sorts its findings; the engine leaves
// mutation rules to the mutating webhook. On an UPDATE with denials or
// same-write waivers (see sameWriteWaiver), the old object of the same form
// is evaluated too: a denial it already had is grandfathered, and such a
// waiver waives only a denial the old object had too, denied or waived.
func judgeForm(ctx context.Context, engine *policies.Engine, r review, f form, now time.Time) ([]verdictLine, error) {
	req := r.request()
	req.Object, req.OldObject, req.Now = f.object, f.oldObject, now
	res, err := engine.Evaluate(ctx, req)
	if err != nil {
		return nil, err
	}
	written := r
	written.object, written.oldObject = f.object, f.oldObject
	sameWrite := sameWriteWaiver(engine.Config(), written)
	existing, had := map[string]bool{}, map[string]bool{}
	if f.oldObject != nil && (res.Denied() || slices.ContainsFunc(res.Waived, sameWrite)) {
		before, err := engine.Evaluate(ctx, policies.Request{Object: f.oldObject, Point: config.Admission, Now: now})
		if err != nil {
			return nil, err
		}
		for _, d := range before.Denials() {
			existing[grandfatherKey(d, f.oldObject)] = true
			had[grandfatherKey(d, f.oldObject)] = true
		}
		for _, w := range before.Waived {
			if w.Action == config.Deny {
				had[grandfatherKey(w, f.oldObject)] = true
			}
		}
	}
	lines := make([]verdictLine, 0, len(res.Findings)+len(res.Waived))
	for _, finding := range res.Findings {
		action := actionWarn
		switch {
		case finding.Action == config.Deny && existing[grandfatherKey(finding, f.object)]:
			action = actionGrandfathered
		case finding.Action == config.Deny:
			action = actionDeny
		case finding.Action == config.Audit:
			action = actionAudit
		}
		lines = append(lines, verdictLine{finding, action})
	}
	for _, finding := range res.Waived {
		if sameWrite(finding) && !had[grandfatherKey(finding, f.object)] {
			lines = append(lines, verdictLine{notWaived(finding), actionDeny})
			continue
		}
		lines = append(lines, verdictLine{finding, actionWaived})
	}
	return lines, nil
}

// render counts each line and turns it into a denial or a warning. Audit
// findings are only counted: the audit of stored objects reports them;
// twins, when set, the rules whose warnings the API server already gives.
func render(r review, lines []verdictLine, twins Twins) (denials []policies.Finding, warnings []string) {
	for _, l := range lines {
		if l.action == actionWarn && twins != nil && twinned(r) && twins.Covered(l.finding.RuleID, config.Warn) {
			// The policy's Warn binding shows it; kubectl shows it once.
			countFinding(validating, r, l.finding.RuleID, actionTwin)
			continue
		}
		countFinding(validating, r, l.finding.RuleID, l.action)
		switch l.action {
		case actionDeny:
			denials = append(denials, l.finding)
		case actionGrandfathered:
			warnings = append(warnings, grandfathered(l.finding))
		case actionWaived:
			warnings = append(warnings, waived(l.finding))
		case actionWarn:
			warnings = append(warnings, warning(l.finding))
		}
	}
	policies.SortFindings(denials)
	return denials, warnings
}

// twinned reports whether the ValidatingAdmissionPolicy judges r's kind
// too: it matches the kinds karpgate has rules of its own for, not the
// rule-only ones (NodeOverlay), whose warnings only the webhook gives.
func twinned(r review) bool {
	_, ok := karpenter.KindOf(r.kind)
	return ok
}

func evaluationError(r review, err error, consequence string) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("karpgate could not evaluate %s within the request timeout (--request-timeout); %s", r.ref, consequence)
	}
	return fmt.Errorf("karpgate could not evaluate %s: %w; %s", r.ref, err, consequence)
}

// grandfatherKey is what a denial must share with one the old object had
// to be let through: the rule, the path and the value at that path. Rule
// and path alone would let an update swap one grandfathered value for
// another (an unapproved alias for a newer unapproved alias) with only a
// warning. A finding about the whole object (no path) is keyed by its
// message instead, since every update changes the object somewhere.
func grandfatherKey(f policies.Finding, object map[string]any) string {
	key := f.RuleID + "\x00" + f.Path + "\x00"
	if f.Path == "" {
		return key + "message\x00" + f.Message
	}
	value, found := fieldValue(object, f.Path)
	if !found {
		return key + "absent"
	}
	var enc valuekey.Encoder
	encoded, ok := enc.AppendGo(nil, value)
	if !ok {
		return key + "message\x00" + f.Message
	}
	return key + "value\x00" + string(encoded)
}

// fieldValue is the value at a finding's field path in a decoded object.
func fieldValue(object map[string]any, path string) (any, bool) {
	var v any = object
	for _, seg := range manifest.ParseFieldPath(path) {
		switch c := v.(type) {
		case map[string]any:
			if seg.IsIndex {
				return nil, false
			}
			next, ok := c[seg.Key]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			if !seg.IsIndex || seg.Index < 0 || seg.Index >= len(c) {
				return nil, false
			}
			v = c[seg.Index]
		default:
			return nil, false
		}
	}
	return v, true
}
