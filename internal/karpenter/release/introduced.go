package release

import "slices"

// Introduced says, per kind of fact, in which known release line each value
// first appeared: {"budgetReasons": {"Unhealthy": "v1.15"}, ...}. Values
// the oldest known release already has are left out. Messages use it to
// say "Unhealthy is new in Karpenter v1.15" to a cluster judged as older.
func Introduced() map[string]map[string]string {
	out := map[string]map[string]string{
		"budgetReasons":         {},
		"consolidationPolicies": {},
		"requirementOperators":  {},
		"aliasFamilies":         {},
		"kinds":                 {},
		"ec2NodeClassFields":    {},
		"nodePoolFields":        {},
		"amiSelectorTermFields": {},
	}
	k := Known()
	for i, r := range k {
		if i == 0 {
			continue
		}
		prev := k[:i]
		s := r.Facts.Schema
		note := func(kind string, values []string, before func(SchemaFacts) []string) {
			for _, v := range values {
				if _, seen := out[kind][v]; seen {
					continue
				}
				if !slices.ContainsFunc(prev, func(p Release) bool { return slices.Contains(before(p.Facts.Schema), v) }) {
					out[kind][v] = r.Version.MinorString()
				}
			}
		}
		note("budgetReasons", s.BudgetReasons, func(p SchemaFacts) []string { return p.BudgetReasons })
		note("consolidationPolicies", s.ConsolidationPolicies, func(p SchemaFacts) []string { return p.ConsolidationPolicies })
		note("requirementOperators", s.RequirementOperators, func(p SchemaFacts) []string { return p.RequirementOperators })
		note("aliasFamilies", familyNames(s), familyNames)
		note("kinds", kindNames(s), kindNames)
		// A line without a provider module states no EC2NodeClass field;
		// only lines that state them take part.
		if s.EC2NodeClassFields != nil {
			note("ec2NodeClassFields", s.EC2NodeClassFields, func(p SchemaFacts) []string { return p.EC2NodeClassFields })
			note("amiSelectorTermFields", s.AMISelectorTermFields, func(p SchemaFacts) []string { return p.AMISelectorTermFields })
		}
		note("nodePoolFields", s.NodePoolFields, func(p SchemaFacts) []string { return p.NodePoolFields })
	}
	return out
}

func familyNames(s SchemaFacts) []string {
	names := make([]string, len(s.AliasFamilies))
	for i, a := range s.AliasFamilies {
		names[i] = a.Family
	}
	return names
}

func kindNames(s SchemaFacts) []string {
	names := make([]string, len(s.Kinds))
	for i, k := range s.Kinds {
		names[i] = k.Kind
	}
	return names
}
