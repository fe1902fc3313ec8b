package lint

import (
	"context"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/policies"
)

// storingStage is a stage that can also render the object as the API
// server would store it (the SchemaStage), for Options.KeepStored.
type storingStage interface {
	Stage
	checkStored(ctx context.Context, obj *manifest.Object) ([]policies.Finding, *yaml.Node, error)
}

// schemaRuleIDs are the IDs of the rules under policies/rules/schema.
func schemaRuleIDs(rules policies.Catalog) map[string]bool {
	ids := map[string]bool{}
	for _, r := range rules {
		if r.ReportsSchema() {
			ids[r.ID] = true
		}
	}
	return ids
}

// foldSchemaFindings leaves out a schema finding (a rule under
// policies/rules/schema) when a karpgate rule already reports the same
// field at least as strictly: that rule says the same thing with
// Karpenter's runtime behaviour and a fix, and one problem should read as
// one finding. The verdict cannot change, since the rule that stays denies
// whenever the schema finding would have. Waived findings are never
// folded, nor do they fold others.
func foldSchemaFindings(schemaRules map[string]bool, findings []policies.Finding) []policies.Finding {
	schemaRule := func(id string) bool { return schemaRules[id] }
	if !slices.ContainsFunc(findings, func(f policies.Finding) bool { return schemaRule(f.RuleID) }) {
		return findings
	}
	coveredByRule := func(f policies.Finding) bool {
		for _, g := range findings {
			if !g.Waived && !schemaRule(g.RuleID) && g.Path == f.Path && (g.Action == config.Deny || f.Action != config.Deny) {
				return true
			}
		}
		return false
	}
	out := findings[:0:0]
	for _, f := range findings {
		if f.Waived || !schemaRule(f.RuleID) || !coveredByRule(f) {
			out = append(out, f)
		}
	}
	return out
}
