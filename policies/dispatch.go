package policies

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies/budgetfuncs"
	"github.com/karpgate/karpgate/policies/memo"
)

// queries are the engine's prepared queries, one per selection of rules.
// Each evaluates every selected rule for the object's kind at the
// enforcement point in one pass: data.karpgate.engine.dispatch.<selection>
// maps a point and a kind to the rule packages to run, so disabled rules
// and rules for other kinds, points, operations or selections cost
// nothing.
type queries struct {
	// selections are the prepared queries by selection name (the select*
	// constants).
	selections map[string]rego.PreparedEvalQuery
	// groups evaluate the rule groups, one each, which the others leave
	// out: the engine memoizes them by their footprint (see groups.go).
	groups []rego.PreparedEvalQuery
}

// The selections of dispatch, by name in data.karpgate.engine.dispatch.
// Rules that judge only some operations (custom.operations) make the
// admission selections come in two: one for a CREATE (and an offline
// evaluation), one for an UPDATE.
const (
	// selectAll is every enabled rule but the mutations: the validating
	// webhook.
	selectAll         = "all"
	selectAllOnUpdate = "allOnUpdate"
	// selectSingleObject leaves out the cross-object rules: lint's pass
	// over a stream, before it has seen the whole input.
	selectSingleObject = "singleObject"
	// selectCrossObject is only the cross-object rules: lint's pass once
	// the whole input is indexed.
	selectCrossObject = "crossObject"
	// selectSchema is only the rules that report lint's CRD schema verdict
	// (input.schema): lint evaluates them only for an object the API
	// server would refuse, and the other selections leave them out.
	selectSchema = "schema"
	// selectMutations is only the enabled admission rules that declare
	// custom.mutates, for the mutating webhook, which would otherwise
	// evaluate the whole set the validating webhook evaluates right after.
	selectMutations         = "mutations"
	selectMutationsOnUpdate = "mutationsOnUpdate"
	// selectStored is what the audit of stored objects evaluates besides
	// the groups and the cross-object rules: the rules that can judge an
	// object nobody is writing (Rule.JudgesStoredObjects).
	selectStored = "stored"
)

// selectionFor is the selection Evaluate runs for req (besides the
// groups): the mutating webhook's, lint's single-object pass, or the
// validating webhook's, each for the request's operation.
func selectionFor(req Request) string {
	update := req.Operation == Update
	switch {
	case req.MutationsOnly && update:
		return selectMutationsOnUpdate
	case req.MutationsOnly:
		return selectMutations
	case req.Stored:
		return selectStored
	case req.SkipCrossObject:
		return selectSingleObject // lint: there is no UPDATE offline
	case update:
		return selectAllOnUpdate
	}
	return selectAll
}

// findingsQuery looks the rules up by the object's kind; a kind of a
// Karpenter group no rule names (NodeOverlay) gets the rules for every kind
// (dispatchAnyKind), which is how lint reports its schema verdict.
func findingsQuery(selection string) string {
	return fmt.Sprintf(`byKind := data.karpgate.engine.dispatch.%s[input.enforcementPoint]; pkg := object.get(byKind, input.object.kind, byKind[%q])[_]; v := data.karpgate.rules[pkg].violation[_]`, selection, dispatchAnyKind)
}

// dispatchAnyKind keys the rules that apply to every kind ("*" in
// custom.kinds) in the dispatch table.
const dispatchAnyKind = "*"

// selections says which rules each selection holds; a rule is selected at
// a point for a kind only if it is also enabled, applies to the kind, runs
// at the point and, when it mutates, the point is admission.
func selections(groups []*memo.Group) map[string]func(Rule) bool {
	// Mutation rules run only through the mutation selections and groups:
	// lint and the validating webhook have nothing to do with a patch.
	validating := func(r Rule) bool { return !r.Mutates && r.group == "" && !r.ReportsSchema() }
	single := func(r Rule) bool { return validating(r) && !r.crossObject }
	mutating := func(r Rule) bool { return r.Mutates && r.group == "" }
	s := map[string]func(Rule) bool{
		selectAll:               func(r Rule) bool { return validating(r) && r.Judges(Create) },
		selectAllOnUpdate:       func(r Rule) bool { return validating(r) && r.Judges(Update) },
		selectSingleObject:      func(r Rule) bool { return single(r) && r.Judges(Create) },
		selectCrossObject:       func(r Rule) bool { return !r.Mutates && r.crossObject && r.Judges(Create) },
		selectSchema:            func(r Rule) bool { return !r.Mutates && r.ReportsSchema() && r.Judges(Create) },
		selectMutations:         func(r Rule) bool { return mutating(r) && r.Judges(Create) },
		selectMutationsOnUpdate: func(r Rule) bool { return mutating(r) && r.Judges(Update) },
		selectStored:            func(r Rule) bool { return single(r) && r.JudgesStoredObjects() },
	}
	for _, g := range groups {
		s[g.ID] = func(r Rule) bool { return r.group == g.ID }
	}
	return s
}

func prepareQueries(ctx context.Context, compiler *ast.Compiler, store storage.Store, budgets *budgetfuncs.Cache, groups []*memo.Group) (queries, error) {
	prepare := func(q string) (rego.PreparedEvalQuery, error) {
		regoOpts := append([]func(*rego.Rego){rego.Compiler(compiler), rego.Store(store), rego.Query(q)}, budgetfuncs.RegoOptions(budgets)...)
		prepared, err := rego.New(regoOpts...).PrepareForEval(ctx)
		if err != nil {
			return prepared, fmt.Errorf("preparing the policy query: %w", err)
		}
		return prepared, nil
	}
	qs := queries{selections: map[string]rego.PreparedEvalQuery{}}
	for _, name := range []string{selectAll, selectAllOnUpdate, selectSingleObject, selectCrossObject, selectSchema, selectMutations, selectMutationsOnUpdate, selectStored} {
		q, err := prepare(findingsQuery(name))
		if err != nil {
			return qs, err
		}
		qs.selections[name] = q
	}
	qs.groups = make([]rego.PreparedEvalQuery, len(groups))
	for i, g := range groups {
		var err error
		if qs.groups[i], err = prepare(findingsQuery(g.ID)); err != nil {
			return qs, err
		}
	}
	return qs, nil
}

// newStore holds the user's data plus data.karpgate: the configuration the
// rules read and the engine's dispatch table.
func newStore(set *policySet, cfg *config.Config, groups []*memo.Group, judged release.Judged) (storage.Store, dispatchTable, error) {
	cfgJSON, err := toJSONValue(cfg)
	if err != nil {
		return nil, nil, err
	}
	dispatch := map[string]any{}
	selected := dispatchTable{}
	for name, inSelection := range selections(groups) {
		byPoint := map[string]any{}
		for _, point := range config.EnforcementPoints {
			byKind := map[string]any{}
			for _, kind := range dispatchKinds() {
				keys := []any{}
				for _, r := range set.catalog {
					if inSelection(r) && (!r.Mutates || point == config.Admission) && cfg.Enabled(r.ID) && r.AppliesTo(kind) && r.RunsAt(point) {
						keys = append(keys, r.key)
					}
				}
				byKind[kind] = keys
				selected.note(name, point, kind, len(keys))
			}
			byPoint[string(point)] = byKind
		}
		dispatch[name] = byPoint
	}
	ids := map[string]any{}
	for _, r := range set.catalog {
		ids[r.ID] = true // an object, so rules look IDs up instead of scanning
	}
	data := map[string]any{}
	for k, v := range set.data {
		data[k] = v
	}
	data["karpgate"] = map[string]any{
		"config":    cfgJSON,
		"karpenter": judged.Data(),
		"engine":    map[string]any{"dispatch": dispatch, "rule_ids": ids, "unwaivable": unwaivable(set.catalog, cfg.Waivable)},
	}
	return inmem.NewFromObjectWithOpts(data, inmem.OptRoundTripOnWrite(false), inmem.OptReturnASTValuesOnRead(true)), selected, nil
}

// dispatchKinds are the kinds the dispatch table has rules for: the ones
// karpgate knows, and dispatchAnyKind.
func dispatchKinds() []string {
	kinds := []string{dispatchAnyKind}
	for _, k := range karpenter.Kinds {
		kinds = append(kinds, k.Kind)
	}
	return kinds
}

// dispatchKind is the dispatch table's key for an object of apiVersion
// and kind: its kind when the table has an entry of its own, the rules
// for every kind for a rule-only kind (NodeOverlay,
// karpenter.RuleOnlyKinds), as findingsQuery looks them up, so that lint
// and the webhooks evaluate them for it alike, and no key at all (no
// rules) for any other kind.
func dispatchKind(apiVersion, kind string) string {
	if _, ok := karpenter.KindOf(kind); ok {
		return kind
	}
	if _, ok := karpenter.LookupRuleOnlyKind(apiVersion, kind); ok {
		return dispatchAnyKind
	}
	return ""
}

// dispatchTable says which selections have rules to run, by selection,
// enforcement point and kind: a query whose selection is empty would find
// nothing, and the engine does not pay OPA's cost of a query to learn it.
type dispatchTable map[string]map[config.EnforcementPoint]map[string]bool

func (d dispatchTable) note(selection string, point config.EnforcementPoint, kind string, rules int) {
	if rules == 0 {
		return
	}
	if d[selection] == nil {
		d[selection] = map[config.EnforcementPoint]map[string]bool{}
	}
	if d[selection][point] == nil {
		d[selection][point] = map[string]bool{}
	}
	d[selection][point][kind] = true
}

// has reports whether the selection has rules for the kind at the point.
func (d dispatchTable) has(selection string, point config.EnforcementPoint, kind string) bool {
	return d[selection][point][kind]
}

func toJSONValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

// classifyRules marks the rules that read input.inventory, through any rule
// or function they use, and groups the rules memoized by their footprint
// (see groups.go). It reports whether a cross-object rule is a user rule,
// so that cross-object evaluation must keep whole objects. Reading all of
// input (a bare `input`) counts as reading the inventory.
func classifyRules(c *ast.Compiler, catalog Catalog, cfg *config.Config, memoize bool) (groups []*memo.Group, userRuleReadsInventory bool) {
	for i := range catalog {
		r := &catalog[i]
		r.crossObject = memo.ReadsInventory(c, violationRules(c, *r))
		if r.crossObject && !r.Builtin {
			userRuleReadsInventory = true
		}
	}
	if memoize {
		groups = groupRules(c, catalog, cfg)
	}
	return groups, userRuleReadsInventory
}
