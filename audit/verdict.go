package audit

import (
	"context"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
)

// Point is the enforcement point stored objects are judged at: its actions
// are those of the admission webhook, which the object's next write meets.
const Point = config.Admission

// Verdict is what the rules say about one stored object.
type Verdict struct {
	APIVersion, Kind, Name, UID string
	// Findings are the active findings, whatever their action (deny, warn
	// or audit); Waived the findings an annotation waived; Passed the
	// rules that judge objects of this kind and found nothing. Each is
	// ordered by rule ID.
	Findings []policies.Finding
	Waived   []policies.Finding
	Passed   []policies.Rule
}

// Judge evaluates one stored object, as of now, with the cross-object rules
// reading inv (nil: they are left out).
func Judge(ctx context.Context, e *policies.Engine, inv *policies.Inventory, object map[string]any, now time.Time) (Verdict, error) {
	v := Verdict{}
	v.APIVersion, _ = object["apiVersion"].(string)
	v.Kind, _ = object["kind"].(string)
	metadata, _ := object["metadata"].(map[string]any)
	v.Name, _ = metadata["name"].(string)
	v.UID, _ = metadata["uid"].(string)
	res, err := e.Evaluate(ctx, policies.Request{Object: object, Point: Point, Stored: true, Now: now})
	if err != nil {
		return v, err
	}
	v.Findings, v.Waived = res.Findings, res.Waived
	if inv != nil && e.HasCrossObjectRules(v.Kind, Point) {
		subject, err := e.NewSubject(object)
		if err != nil {
			return v, err
		}
		cross, err := e.EvaluateCrossObject(ctx, subject, inv, now, Point)
		if err != nil {
			return v, err
		}
		v.Findings = append(v.Findings, cross.Findings...)
		v.Waived = append(v.Waived, cross.Waived...)
		policies.SortFindings(v.Findings)
		policies.SortFindings(v.Waived)
	}
	found := map[string]bool{}
	for _, f := range v.Findings {
		found[f.RuleID] = true
	}
	for _, f := range v.Waived {
		found[f.RuleID] = true
	}
	for _, r := range e.StoredObjectRules(v.Kind, Point) {
		if !found[r.ID] && (inv != nil || !e.IsCrossObject(r.ID)) {
			v.Passed = append(v.Passed, r)
		}
	}
	return v, nil
}

// Denials are the findings whose action is deny.
func (v Verdict) Denials() []policies.Finding {
	var out []policies.Finding
	for _, f := range v.Findings {
		if f.Action == config.Deny {
			out = append(out, f)
		}
	}
	return out
}
