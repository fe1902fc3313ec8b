package lint

import (
	"context"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/policies"
)

// Stage is one step every Karpenter object goes through. Run passes each
// object through the stages in order (the CRD schema stage, then the policy
// engine); each reads what earlier stages left on the Subject and adds its
// own. A stage must be safe for concurrent use: Run calls it from several
// goroutines at once, each with its own Subject, and it must not compile
// anything per object.
type Stage interface {
	Check(ctx context.Context, s *Subject) error
}

// Subject is one object on its way through the stages.
type Subject struct {
	// Object is the object as read, with its positions.
	Object *manifest.Object
	// Content is the object as rules reason about it: as written, or with
	// the CRD's defaults once the schema stage has run.
	Content map[string]any
	// Stored is the object as the API server would store it (defaulted,
	// unknown fields pruned); nil when no CRD judged it.
	Stored map[string]any
	// Defaults are the paths in Stored that the CRD's defaults filled in.
	Defaults []string
	// Schema is the schema stage's verdict, which the policy stage reports
	// through the rules under policies/rules/schema.
	Schema []policies.SchemaViolation
	// Inventory is the whole input, for cross-object rules.
	Inventory *policies.Inventory
	// Result is the policy stage's findings.
	Result *policies.Result
}

// policyStage evaluates the rule set at the CI enforcement point.
type policyStage struct {
	engine *policies.Engine
	// schemaRules are the rules that report the schema stage's verdict.
	schemaRules map[string]bool
}

func newPolicyStage(engine *policies.Engine) policyStage {
	st := policyStage{engine: engine, schemaRules: map[string]bool{}}
	for _, r := range engine.Catalog() {
		if r.ReportsSchema() {
			st.schemaRules[r.ID] = true
		}
	}
	return st
}

func (st policyStage) Check(ctx context.Context, s *Subject) error {
	res, err := st.engine.Evaluate(ctx, policies.Request{Object: s.Content, Point: config.CI, Inventory: s.Inventory, Schema: s.Schema})
	if err != nil {
		return err
	}
	res.Findings = st.fold(res.Findings)
	s.Result = res
	return nil
}

// fold leaves out a schema finding when a karpgate rule already reports the
// same field at least as strictly: that rule says the same thing with
// Karpenter's runtime behaviour and a fix, and one problem should read as
// one finding. The verdict cannot change, since the rule that stays
// denies whenever the schema finding would have.
func (st policyStage) fold(findings []policies.Finding) []policies.Finding {
	out := make([]policies.Finding, 0, len(findings))
	for _, f := range findings {
		if !st.schemaRules[f.RuleID] || !st.reportedByRule(findings, f) {
			out = append(out, f)
		}
	}
	return out
}

func (st policyStage) reportedByRule(findings []policies.Finding, schema policies.Finding) bool {
	for _, g := range findings {
		if !st.schemaRules[g.RuleID] && g.Path == schema.Path && (g.Action == config.Deny || schema.Action != config.Deny) {
			return true
		}
	}
	return false
}
