package admission

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpgate/karpgate/config"
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
	// (by more than holdrecord.MaxSkew); nil means time.Now.
	Now func() time.Time
}

func (v *Validator) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
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
	engine := v.Engines.Engine()
	start := time.Now()
	res, err := engine.Evaluate(ctx, r.request())
	var before *policies.Result
	if err == nil && r.oldObject != nil && res.Denied() {
		before, err = engine.Evaluate(ctx, policies.Request{Object: r.oldObject, Point: config.Admission})
	}
	evaluationSeconds.WithLabelValues(validating).Observe(time.Since(start).Seconds())
	if err != nil {
		countRequest(validating, r, verdictError)
		v.Log.Error(err, "evaluation failed", "object", r.ref, "operation", r.operation)
		return ctrladmission.Errored(http.StatusInternalServerError, evaluationError(r, err, "the validating webhook fails closed, so the request is refused"))
	}
	denials, warnings := judge(r, res, before, v.Twins)
	if len(denials) > 0 {
		countRequest(validating, r, verdictDenied)
		return ctrladmission.Denied(denialMessage(r.ref, denials)).WithWarnings(warnings...)
	}
	countRequest(validating, r, verdictAllowed)
	return ctrladmission.Allowed("").WithWarnings(warnings...)
}

// judge sorts findings into denials and warnings; the engine leaves
// mutation rules to the mutating webhook. before holds the old object's
// findings on an UPDATE that has denials; twins, when set, the rules
// whose warnings the API server already gives.
func judge(r review, res *policies.Result, before *policies.Result, twins Twins) (denials []policies.Finding, warnings []string) {
	existing := map[string]bool{}
	if before != nil {
		for _, f := range before.Denials() {
			existing[grandfatherKey(f, r.oldObject)] = true
		}
	}
	for _, f := range res.Findings {
		switch {
		case f.Action == config.Deny && existing[grandfatherKey(f, r.object)]:
			warnings = append(warnings, grandfathered(f))
			countFinding(validating, r, f.RuleID, actionGrandfathered)
		case f.Action == config.Deny:
			denials = append(denials, f)
			countFinding(validating, r, f.RuleID, actionDeny)
		case f.Action == config.Audit:
			// Recorded, never shown: the audit of stored objects reports it.
			countFinding(validating, r, f.RuleID, actionAudit)
		case twins != nil && twins.Covered(f.RuleID, config.Warn):
			// The policy's Warn binding shows it; kubectl shows it once.
			countFinding(validating, r, f.RuleID, actionTwin)
		default:
			warnings = append(warnings, warning(f))
			countFinding(validating, r, f.RuleID, actionWarn)
		}
	}
	for _, f := range res.Waived {
		warnings = append(warnings, waived(f))
		countFinding(validating, r, f.RuleID, actionWaived)
	}
	return denials, warnings
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
