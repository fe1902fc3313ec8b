package policies

import (
	"context"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies/memo"
)

// groupRules memoizes the rules that may be: every rule but the
// cross-object rules, the schema rules, which have their own query, and
// the rules that judge only some operations, since a group is evaluated
// for every operation. policies/memo groups them by their footprint; each
// rule grouped is told its group's ID, which the dispatch selections read.
func groupRules(c *ast.Compiler, catalog Catalog, cfg *config.Config) []*memo.Group {
	var candidates []memo.Candidate
	var rules []*Rule
	for i := range catalog {
		r := &catalog[i]
		if r.crossObject || r.ReportsSchema() || len(r.Operations) > 0 {
			continue
		}
		candidates = append(candidates, memo.Candidate{
			Violation: violationRules(c, *r),
			Mutates:   r.Mutates,
			Applies: func(point config.EnforcementPoint, kind string) bool {
				return cfg.Enabled(r.ID) && r.AppliesTo(kind) && r.RunsAt(point) && (!r.Mutates || point == config.Admission)
			},
		})
		rules = append(rules, r)
	}
	groups, ids := memo.Groups(c, candidates, dispatchKinds())
	for i, r := range rules {
		r.group = ids[i]
	}
	return groups
}

// violationRules are the compiled rules of r's violation set.
func violationRules(c *ast.Compiler, r Rule) []*ast.Rule {
	return c.GetRulesExact(ast.MustParseRef(r.Package).Append(ast.StringTerm("violation")))
}

// groupViolations evaluates a group's rules on an input, or reuses what
// they found for an input that agrees with it on the group's footprint
// (see memo.Memo.Violations).
func (e *Engine) groupViolations(ctx context.Context, g *memo.Group, query int, in *evalInput, now time.Time, ref string) ([]rawViolation, error) {
	return e.groupRuns.Violations(g, memo.Input{Go: in.goInput, Object: in.req.Object, Rego: in.rego}, now, func(reduced ast.Object) ([]rawViolation, error) {
		return e.violations(ctx, e.queries.groups[query], reduced, now, ref)
	})
}
