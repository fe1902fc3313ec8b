package twin

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/webhookconfig"
	"github.com/karpgate/karpgate/policies"
)

// Spec is what the twins make of karpgate's ValidatingAdmissionPolicy:
// its variables, one validation per twin in rule ID order, and the audit
// annotation listing the rules that found something. The policy itself
// (match constraints, parameters, bindings) is internal/webhookconfig's.
type Spec = webhookconfig.PolicyCEL

// RulesAnnotation is the key of the audit annotation that lists, per
// binding, the rules whose twins found something in a request: the API
// server writes it to the audit log as "<policy>/rules".
const RulesAnnotation = "rules"

// The variables every twin reads: each object's own production verdict
// and the request's, which is production when the old or the new object
// is (policies' environmentOf).
var productionVariables = []admissionregistrationv1.Variable{
	{Name: "objectProduction", Expression: "@isProduction(object)"},
	{Name: "oldObjectProduction", Expression: "oldObject != null && @isProduction(oldObject)"},
	{Name: "production", Expression: "variables.objectProduction || variables.oldObjectProduction"},
}

// NewSpec writes the policy's CEL for twins. Each twin's findings are a
// variable named for its rule (kg101); its validation holds when the
// list is empty and says what the webhook would say:
//
//	KG101 spec.amiSelectorTerms[0].alias: alias "al2023@latest" follows ... (fix: Pin ...)
//
// one finding after another, joined by " | ". A twin applies only
// through the binding whose parameters give its rule the binding's action
// (Params), to the kinds and operations its rule judges, unless the object
// waives the rule; on UPDATE, a denial the old object already had is left
// out, as the webhook grandfathers it.
func NewSpec(twins []Twin) (Spec, error) {
	x, err := newExpander()
	if err != nil {
		return Spec{}, err
	}
	var s Spec
	shared, err := x.sharedVariables()
	if err != nil {
		return Spec{}, err
	}
	s.Variables = append(s.Variables, shared...)
	add := func(name, expr string) error {
		out, err := x.expand(expr)
		if err != nil {
			return fmt.Errorf("variable %s: %w", name, err)
		}
		s.Variables = append(s.Variables, admissionregistrationv1.Variable{Name: name, Expression: out})
		return nil
	}
	for _, v := range productionVariables {
		if err := add(v.Name, v.Expression); err != nil {
			return Spec{}, err
		}
	}
	var found []string
	for _, t := range twins {
		r := t.Rule
		name := VariableName(r.ID)
		active := activeWhen(r, "object")
		if grandfathered(r) {
			// The body is written once and judges both objects: the new
			// one (side 0), and on a denying UPDATE the old one alone, as
			// the webhook does to grandfather a denial it already had.
			both := fmt.Sprintf(`%s ? [0, 1].map(side, side == 0 || (params.data.action == 'deny' && oldObject != null && %s)
  ? [side == 0 ? object : oldObject].map(o, [side == 0 ? variables.production : variables.oldObjectProduction].map(prod, %s)[0])[0]
  : []) : [[], []]`, active, activeWhen(r, "oldObject"), t.Body)
			if err := add(name+"Sides", both); err != nil {
				return Spec{}, err
			}
			if err := add(name, fmt.Sprintf("@sortFindings(variables.%[1]sSides[0].filter(f, !variables.%[1]sSides[1].exists(g, g.path == f.path && g.value == f.value)))", name)); err != nil {
				return Spec{}, err
			}
		} else if err := add(name, fmt.Sprintf("%s ? @sortFindings([0].map(side, [object].map(o, [variables.production].map(prod, %s)[0])[0])[0]) : []", active, t.Body)); err != nil {
			return Spec{}, err
		}
		message, err := x.expand(messageExpression(r))
		if err != nil {
			return Spec{}, err
		}
		s.Validations = append(s.Validations, admissionregistrationv1.Validation{
			Expression:        fmt.Sprintf("size(variables.%s) == 0", name),
			Message:           StaticMessage(r),
			MessageExpression: message,
			Reason:            ptrTo(metav1.StatusReasonForbidden),
		})
		found = append(found, fmt.Sprintf("(size(variables.%s) > 0 ? ['%s'] : [])", name, r.ID))
	}
	if len(found) > 0 {
		s.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{
			Key: RulesAnnotation,
			ValueExpression: fmt.Sprintf("[%s].map(ids, size(ids) == 0 ? '' : params.data.action + ': ' + ids.join(', '))[0]",
				strings.Join(found, " + ")),
		}}
	}
	return s, nil
}

// sharedVariables are the values of the shared helpers (lib.cel's
// shared(...) helpers) for the request's object and old object, in name
// order; a twin reads them instead of computing them anew.
func (x *expander) sharedVariables() ([]admissionregistrationv1.Variable, error) {
	var names []string
	for name, h := range x.helpers {
		if h.shared {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	x.inline = true
	defer func() { x.inline = false }()
	var out []admissionregistrationv1.Variable
	for _, name := range names {
		body, err := x.expand("@" + name + "(_object)")
		if err != nil {
			return nil, fmt.Errorf("shared helper %s: %w", name, err)
		}
		out = append(out, admissionregistrationv1.Variable{Name: name,
			Expression: fmt.Sprintf("[object, oldObject].map(_object, _object == null ? %s : %s)", x.helpers[name].none, body)})
	}
	return out, nil
}

// VariableName is the policy variable holding rule id's findings: kg101.
func VariableName(id string) string { return strings.ToLower(id) }

// grandfathered reports whether the webhook lets an UPDATE keep a denial
// of r that the old object had: it evaluates the old object alone, so
// only rules that judge an object as created can have found it there.
func grandfathered(r policies.Rule) bool { return r.Judges(policies.Create) && len(r.Operations) == 0 }

// activeWhen is when a twin judges the object named by subject (object,
// or oldObject for what the webhook's grandfathering evaluates): its rule
// has this binding's action, subject is of a kind the rule judges, the
// request is of an operation it judges, and subject does not waive it.
func activeWhen(r policies.Rule, subject string) string {
	conds := []string{
		"has(params.data)",
		fmt.Sprintf("'rule.%[1]s' in params.data && params.data['rule.%[1]s'] == params.data.action", r.ID),
	}
	if !r.AppliesTo("*") {
		conds = append(conds, fmt.Sprintf("%s.kind in %s", subject, celStrings(r.Kinds)))
	}
	if len(r.Operations) > 0 {
		ops := make([]string, len(r.Operations))
		for i, o := range r.Operations {
			ops[i] = string(o)
		}
		conds = append(conds, fmt.Sprintf("request.operation in %s", celStrings(ops)))
	}
	if r.Waivable {
		conds = append(conds, fmt.Sprintf("!(!('unwaivable.%s' in params.data) && @waived(%s, '%s') && !%s)", r.ID, subject, r.ID, sameWriteWaiver(r.ID)))
	}
	return "(" + strings.Join(conds, " && ") + ")"
}

// sameWriteWaiver is true when the write adds or changes the object's
// waiver of rule id, and the webhook then lets that waiver excuse no
// denial (webhook/admission sameWriteWaiver): on a production object,
// unless karpgate.yaml's waivers.allowSameWrite says otherwise (the
// parameter waivers.sameWrite). The webhook then waives only a denial the
// old object had, waived or not: so a twin then judges the object as if
// it had no waiver, and the old object too, for the grandfathering.
func sameWriteWaiver(id string) string {
	key := celString(karpenter.WaiverAnnotationPrefix + id)
	unchanged := fmt.Sprintf("(oldObject != null && has(oldObject.metadata.annotations) && %[1]s in oldObject.metadata.annotations && "+
		"has(object.metadata.annotations) && %[1]s in object.metadata.annotations && "+
		"oldObject.metadata.annotations[%[1]s] == object.metadata.annotations[%[1]s])", key)
	return fmt.Sprintf("(params.data.action == 'deny' && variables.production && !('waivers.sameWrite' in params.data) && !%s)", unchanged)
}

// messageExpression formats a twin's findings as policies.Finding.String
// does, each made one line as the webhook makes it (oneLine). A denial
// whose waiver the same write added says so, and how to waive instead, as
// the webhook says it (webhook/admission notWaived).
func messageExpression(r policies.Rule) string {
	fixOf := "f.fix"
	if r.Fix != "" {
		fixOf = fmt.Sprintf("(f.fix == '' ? %s : f.fix)", celString(r.Fix))
	}
	msg, fix := "f.msg", fmt.Sprintf("(%[1]s == '' ? '' : ' (fix: ' + %[1]s + ')')", fixOf)
	if r.Waivable {
		annotation := karpenter.WaiverAnnotationPrefix + r.ID
		notWaived := fmt.Sprintf("(!('unwaivable.%s' in params.data) && @waived(object, '%s') && %s)", r.ID, r.ID, sameWriteWaiver(r.ID))
		const alternative = "add the waiver in a separate, earlier write that someone reviews, or name who may waive in karpgate.yaml (waivers.approvers)"
		msg = fmt.Sprintf("f.msg + (%s ? %s : '')", notWaived, celString("; the waiver "+annotation+" does not waive it, because this same write adds or changes it: on a production object, a waiver must be stored before the write it excuses"))
		fix = fmt.Sprintf("(%[1]s ? ' (fix: ' + (%[2]s == '' ? %[3]s : (%[2]s.endsWith('.') ? %[2]s.substring(0, size(%[2]s) - 1) : %[2]s) + %[4]s) + ')' : %[5]s)",
			notWaived, fixOf, celString(strings.ToUpper(alternative[:1])+alternative[1:]), celString("; or "+alternative), fix)
	}
	return fmt.Sprintf("variables.%s.map(f, @oneLine('%s' + (f.path == '' ? '' : ' ' + f.path) + ': ' + %s + %s)).join(' | ')",
		VariableName(r.ID), r.ID, msg, fix)
}

// StaticMessage is what the API server says when a twin's message cannot
// be written (an error in messageExpression, or a message longer than the
// API server allows): the rule and its default fix.
func StaticMessage(r policies.Rule) string {
	msg := r.ID + ": " + r.Title
	if r.Fix != "" {
		msg += " (fix: " + r.Fix + ")"
	}
	return strings.Join(strings.Fields(msg), " ")
}

// celString writes s as a CEL string literal.
func celString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s) + "'"
}

func celStrings(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = celString(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

func ptrTo[T any](v T) *T { return &v }
