package lint

import (
	"context"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	k8sadmission "k8s.io/apiserver/pkg/admission"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/admissionpolicy"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/twin"
)

// Engines that judge the objects, as Report.Engine names them.
const (
	// EngineRego is karpgate's rule set, the default.
	EngineRego = "rego"
	// EngineAdmissionPolicy is the rules' CEL twins alone, as the API
	// server enforces them while karpgate is down (`--engine vap`).
	EngineAdmissionPolicy = "vap"
)

// AdmissionPolicy judges objects by the ValidatingAdmissionPolicy the
// rules' CEL twins make (policies/twin), for an engine's karpgate.yaml and
// Karpenter release, evaluated with the API server's own code
// (internal/admissionpolicy): what the API server would refuse, warn
// about or audit on its own, with karpgate down. It judges each object as
// a CREATE; a v1beta1 object as karpgate converts it to v1, which is what
// the policy sees at admission.
type AdmissionPolicy struct {
	eval *admissionpolicy.Evaluator
	// ruleAt is the rule of each validation; actionOf the action of each
	// binding.
	ruleAt   []policies.Rule
	actionOf map[string]config.Action
	cfg      *config.Config
	// Rules counts the twins judged.
	Rules int
}

// NewAdmissionPolicy builds the policy, bindings and parameters karpgate
// would install for engine, and checks that the policy compiles on the
// oldest Kubernetes it must load on.
func NewAdmissionPolicy(engine *policies.Engine) (*AdmissionPolicy, error) {
	objs, twins, err := twin.ForEngine(engine, deploy.Namespace)
	if err != nil {
		return nil, err
	}
	if err := admissionpolicy.Check(objs.Policy, admissionpolicy.OldestKubernetes); err != nil {
		return nil, fmt.Errorf("ValidatingAdmissionPolicy %s does not compile on Kubernetes %s: %w", objs.Policy.Name, admissionpolicy.OldestKubernetes, err)
	}
	a := &AdmissionPolicy{actionOf: map[string]config.Action{}, cfg: engine.Config(), Rules: len(twins)}
	// Every binding audits here, so that every failed validation is
	// recorded with its message; the API server reports only the first
	// denial.
	var bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for _, b := range objs.Bindings {
		b = b.DeepCopy()
		a.actionOf[b.Name] = config.Action(strings.ToLower(string(b.Spec.ValidationActions[0])))
		b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}
		bindings = append(bindings, b)
	}
	for _, t := range twins {
		a.ruleAt = append(a.ruleAt, t.Rule)
	}
	a.eval, err = admissionpolicy.New([]*admissionregistrationv1.ValidatingAdmissionPolicy{objs.Policy}, bindings, admissionpolicy.ConfigMapParams(objs.Params))
	return a, err
}

// Judge is what the policy says about obj, created: one finding per
// finding its messages name.
func (a *AdmissionPolicy) Judge(ctx context.Context, obj map[string]any) ([]policies.Finding, error) {
	kind, _ := obj["kind"].(string)
	resource := map[string]string{karpenter.KindNodePool: "nodepools", karpenter.KindEC2NodeClass: "ec2nodeclasses"}[kind]
	if resource == "" {
		return nil, nil // the policy, like the webhook, judges these two kinds only
	}
	if v, _ := obj["apiVersion"].(string); strings.HasSuffix(v, "/"+karpenter.V1Beta1) {
		converted, err := conversion.Convert(ctx, obj, karpenter.V1, conversion.Options{})
		if err != nil {
			// The API server refuses what does not convert, before any
			// policy; the rules' KG4xx findings say why.
			return nil, nil //nolint:nilerr // not an error of the judging
		}
		obj = converted
	}
	v, err := a.eval.Validate(ctx, admissionpolicy.Request{Object: obj, Resource: resource, Operation: k8sadmission.Create})
	if err != nil {
		return nil, err
	}
	if v.Denied {
		return nil, fmt.Errorf("the policy refused the object outright: %s", v.Message)
	}
	var out []policies.Finding
	for _, f := range v.Failures {
		if f.ExpressionIndex >= len(a.ruleAt) {
			return nil, fmt.Errorf("validation %d failed, which no twin has: %s", f.ExpressionIndex, f.Message)
		}
		r := a.ruleAt[f.ExpressionIndex]
		for _, piece := range splitFindings(r.ID, f.Message) {
			path, msg, fix := parseFinding(r.ID, piece)
			out = append(out, policies.Finding{
				RuleID: r.ID, Title: r.Title, Severity: a.cfg.SeverityFor(r.ID, r.Severity),
				Action: a.actionOf[f.Binding], Message: msg, Path: path, Fix: fix,
			})
		}
	}
	return out, nil
}

// splitFindings splits a twin's message into its findings, which it joins
// with " | " each starting with the rule ID.
func splitFindings(id, msg string) []string {
	parts := strings.Split(msg, " | "+id)
	for i := 1; i < len(parts); i++ {
		parts[i] = id + parts[i]
	}
	return parts
}

// parseFinding reads "ID path: message (fix: fix)", as policies.Finding
// writes it, back into its parts.
func parseFinding(id, s string) (path, msg, fix string) {
	rest := strings.TrimPrefix(s, id)
	if p, m, ok := strings.Cut(strings.TrimPrefix(rest, " "), ": "); ok && strings.HasPrefix(rest, " ") {
		path, rest = p, m
	} else {
		rest = strings.TrimPrefix(rest, ": ")
	}
	if i := strings.LastIndex(rest, " (fix: "); i >= 0 && strings.HasSuffix(rest, ")") {
		return path, rest[:i], rest[i+len(" (fix: ") : len(rest)-1]
	}
	return path, rest, ""
}
