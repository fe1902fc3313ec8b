package policies

import (
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
)

// checkRulesDefineViolation refuses a rule package without a violation
// rule: it would load, pass every test and never report anything.
func checkRulesDefineViolation(c *ast.Compiler, catalog Catalog) error {
	for _, r := range catalog {
		ref := ast.MustParseRef(r.Package).Append(ast.StringTerm("violation"))
		if len(c.GetRulesExact(ref)) == 0 {
			return fmt.Errorf("%s: rule %s (%s) defines no `violation contains ...` rule, so it can never report", r.File, r.ID, r.Package)
		}
	}
	return nil
}

// checkPatchesDeclared refuses a rule whose violation is an object literal
// with a "patch" key (the usual way to return a mutation) but that does not
// declare custom.mutates, which the mutating webhook selects rules by. It
// reads the modules as parsed: compiling rewrites head terms into variables.
func checkPatchesDeclared(modules map[string]*ast.Module, catalog Catalog) error {
	byPackage := map[string]Rule{}
	for _, r := range catalog {
		byPackage[r.Package] = r
	}
	for _, m := range modules {
		r, isRule := byPackage[m.Package.Path.String()]
		if !isRule || r.Mutates {
			continue
		}
		for _, rule := range m.Rules {
			if rule.Head.Name.String() != "violation" && rule.Head.Ref().String() != "violation" {
				continue
			}
			if rule.Head.Key == nil {
				continue
			}
			if obj, ok := rule.Head.Key.Value.(ast.Object); ok && obj.Get(ast.StringTerm("patch")) != nil {
				return fmt.Errorf("%s: rule %s returns a \"patch\" but does not declare `mutates: true` under custom in its METADATA, so the mutating webhook would never run it", r.File, r.ID)
			}
		}
	}
	return nil
}
