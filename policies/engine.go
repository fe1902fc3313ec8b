package policies

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Options configure an Engine.
type Options struct {
	// Config is karpgate.yaml; nil means config.Default().
	Config *config.Config
	// PolicyDirs and DataDirs are the --policy and --data folders.
	PolicyDirs []string
	DataDirs   []string
	// Now is the clock for time-dependent rules (budget windows); nil
	// means time.Now. Tests and `lint --now` pin it.
	Now func() time.Time
}

// Engine evaluates the compiled rule set. It is immutable after New and
// safe for concurrent use; to apply a new configuration or new policies,
// build a new Engine and swap it in.
type Engine struct {
	cfg     *config.Config
	catalog Catalog
	byKey   map[string]Rule
	query   rego.PreparedEvalQuery
	// mutations runs only the rules that return patches, for the mutating
	// webhook, which would otherwise evaluate the whole set the validating
	// webhook evaluates right after it.
	mutations rego.PreparedEvalQuery
	now       func() time.Time
}

// findingsQuery evaluates every enabled rule that applies to the object's
// kind at the enforcement point in one pass: data.karpgate.engine.dispatch
// maps a point and a kind to the rule packages to run, so disabled rules and
// rules for other kinds or points cost nothing.
const findingsQuery = `pkg := data.karpgate.engine.dispatch[input.enforcementPoint][input.object.kind][_]; v := data.karpgate.rules[pkg].violation[_]`

// mutationsQuery is findingsQuery over the enabled admission rules that
// declare custom.mutates; findingsQuery never runs those.
const mutationsQuery = `pkg := data.karpgate.engine.mutations[input.object.kind][_]; v := data.karpgate.rules[pkg].violation[_]`

// New loads, checks and compiles the built-in rules with the user's
// policies and data.
func New(ctx context.Context, opts Options) (*Engine, error) {
	cfg := opts.Config
	if cfg == nil {
		cfg = config.Default()
	}
	set, err := loadPolicySet(opts.PolicyDirs, opts.DataDirs, false)
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckRuleIDs(func(id string) bool { _, ok := set.catalog.Lookup(id); return ok }); err != nil {
		return nil, err
	}
	if err := checkPatchesDeclared(set.modules, set.catalog); err != nil {
		return nil, err
	}
	compiler, err := compile(set.modules)
	if err != nil {
		return nil, err
	}
	if err := checkRulesDefineViolation(compiler, set.catalog); err != nil {
		return nil, err
	}
	store, err := newStore(set, cfg)
	if err != nil {
		return nil, err
	}
	prepare := func(q string) (rego.PreparedEvalQuery, error) {
		regoOpts := append([]func(*rego.Rego){rego.Compiler(compiler), rego.Store(store), rego.Query(q)}, builtinOptions()...)
		prepared, err := rego.New(regoOpts...).PrepareForEval(ctx)
		if err != nil {
			return prepared, fmt.Errorf("preparing the policy query: %w", err)
		}
		return prepared, nil
	}
	query, err := prepare(findingsQuery)
	if err != nil {
		return nil, err
	}
	mutations, err := prepare(mutationsQuery)
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, catalog: set.catalog, byKey: map[string]Rule{}, query: query, mutations: mutations, now: opts.Now}
	if e.now == nil {
		e.now = time.Now
	}
	for _, r := range set.catalog {
		e.byKey[r.key] = r
	}
	return e, nil
}

// newCompiler is a compiler with karpgate's restricted capabilities.
func newCompiler() *ast.Compiler {
	return ast.NewCompiler().
		WithCapabilities(capabilities()).
		WithDefaultRegoVersion(ast.RegoV1).
		WithEnablePrintStatements(true)
}

// compile compiles modules with karpgate's restricted capabilities.
func compile(modules map[string]*ast.Module) (*ast.Compiler, error) {
	c := newCompiler()
	if c.Compile(modules); c.Failed() {
		return nil, explainCompileErrors(c.Errors)
	}
	return c, nil
}

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

// newStore holds the user's data plus data.karpgate: the configuration the
// rules read and the engine's dispatch table.
func newStore(set *policySet, cfg *config.Config) (storage.Store, error) {
	cfgJSON, err := toJSONValue(cfg)
	if err != nil {
		return nil, err
	}
	dispatch := map[string]any{}
	mutations := map[string]any{}
	ids := map[string]any{}
	for _, point := range config.EnforcementPoints {
		byKind := map[string]any{}
		for _, k := range karpenter.Kinds {
			var keys []any
			for _, r := range set.catalog {
				// Mutation rules run only through mutationsQuery: lint and
				// the validating webhook have nothing to do with a patch.
				if !r.Mutates && cfg.Enabled(r.ID) && r.AppliesTo(k.Kind) && r.RunsAt(point) {
					keys = append(keys, r.key)
				}
			}
			byKind[k.Kind] = keys
		}
		dispatch[string(point)] = byKind
	}
	for _, k := range karpenter.Kinds {
		var keys []any
		for _, r := range set.catalog {
			if r.Mutates && cfg.Enabled(r.ID) && r.AppliesTo(k.Kind) && r.RunsAt(config.Admission) {
				keys = append(keys, r.key)
			}
		}
		mutations[k.Kind] = keys
	}
	for _, r := range set.catalog {
		ids[r.ID] = true // an object, so rules look IDs up instead of scanning
	}
	data := map[string]any{}
	for k, v := range set.data {
		data[k] = v
	}
	data["karpgate"] = map[string]any{
		"config": cfgJSON,
		"engine": map[string]any{"dispatch": dispatch, "mutations": mutations, "rule_ids": ids},
	}
	return inmem.NewFromObjectWithOpts(data, inmem.OptRoundTripOnWrite(false), inmem.OptReturnASTValuesOnRead(true)), nil
}

func toJSONValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

// Catalog returns every rule, built-in and user, ordered by ID.
func (e *Engine) Catalog() Catalog { return e.catalog }

// Config returns the configuration the engine was built with.
func (e *Engine) Config() *config.Config { return e.cfg }

// Handles reports whether the engine has rules for objects of this
// apiVersion and kind; callers skip (and count) everything else.
func Handles(apiVersion, kind string) bool {
	_, _, ok := karpenter.LookupKind(apiVersion, kind)
	return ok
}

// Evaluate runs every enabled rule for the object's kind in one query.
func (e *Engine) Evaluate(ctx context.Context, req Request) (*Result, error) {
	// OPA notices cancellation only between steps; a request whose deadline
	// has already passed should not start.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	point := req.Point
	if point == "" {
		point = config.CI
	}
	input, err := e.input(req, point)
	if err != nil {
		return nil, err
	}
	query := e.query
	if req.MutationsOnly {
		query = e.mutations
	}
	rs, err := query.Eval(ctx, rego.EvalParsedInput(input), rego.EvalTime(e.now()))
	if err != nil {
		return nil, fmt.Errorf("evaluating %s: %w", objectRef(req.Object), err)
	}
	waivers := waiversOf(req.Object)
	res := &Result{}
	for _, r := range rs {
		key, _ := r.Bindings["pkg"].(string)
		rule, ok := e.byKey[key]
		if !ok {
			continue
		}
		f, err := e.finding(rule, r.Bindings["v"], point)
		if err != nil {
			return nil, err
		}
		if reason, waived := waivers[rule.ID]; waived && rule.Waivable {
			f.Waived, f.WaiverReason = true, reason
			res.Waived = append(res.Waived, f)
			continue
		}
		res.Findings = append(res.Findings, f)
	}
	sortFindings(res.Findings)
	sortFindings(res.Waived)
	return res, nil
}

func (e *Engine) input(req Request, point config.EnforcementPoint) (ast.Value, error) {
	object, err := ast.InterfaceToValue(req.Object)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", objectRef(req.Object), err)
	}
	in := ast.NewObject(
		ast.Item(ast.StringTerm("object"), ast.NewTerm(object)),
		ast.Item(ast.StringTerm("operation"), ast.StringTerm(string(req.Operation))),
		ast.Item(ast.StringTerm("enforcementPoint"), ast.StringTerm(string(point))),
		ast.Item(ast.StringTerm("production"), ast.BooleanTerm(e.cfg.IsProduction(req.Object))),
	)
	if req.OldObject != nil {
		old, err := ast.InterfaceToValue(req.OldObject)
		if err != nil {
			return nil, fmt.Errorf("%s: old object: %w", objectRef(req.Object), err)
		}
		in.Insert(ast.StringTerm("oldObject"), ast.NewTerm(old))
	}
	if req.Inventory != nil {
		in.Insert(ast.StringTerm("inventory"), ast.NewTerm(req.Inventory.value))
	}
	if len(req.Schema) > 0 {
		schema, err := schemaValue(req.Schema)
		if err != nil {
			return nil, fmt.Errorf("%s: schema verdict: %w", objectRef(req.Object), err)
		}
		in.Insert(ast.StringTerm("schema"), ast.NewTerm(schema))
	}
	return in, nil
}

// violation is what a rule's `violation` set holds.
type violation struct {
	Msg   string           `json:"msg"`
	Path  string           `json:"path"`
	Fix   string           `json:"fix"`
	Patch []PatchOperation `json:"patch"`
}

func (e *Engine) finding(rule Rule, v any, point config.EnforcementPoint) (Finding, error) {
	var got violation
	raw, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(raw, &got)
	}
	if err != nil || got.Msg == "" {
		return Finding{}, fmt.Errorf("%s: rule %s: a violation must be an object with a string msg and optional path, fix and patch; got %s", rule.File, rule.ID, raw)
	}
	if len(got.Patch) > 0 && !rule.Mutates {
		return Finding{}, fmt.Errorf("%s: rule %s returned a patch but does not declare `mutates: true` under custom in its METADATA", rule.File, rule.ID)
	}
	f := Finding{
		RuleID:   rule.ID,
		Title:    rule.Title,
		Severity: e.cfg.SeverityFor(rule.ID, rule.Severity),
		Action:   e.cfg.ActionFor(rule.ID, rule.DefaultAction(point), point),
		Message:  got.Msg,
		Path:     got.Path,
		Fix:      got.Fix,
		Patch:    got.Patch,
	}
	if f.Fix == "" {
		f.Fix = rule.Fix
	}
	return f, nil
}

func sortFindings(fs []Finding) {
	slices.SortFunc(fs, func(a, b Finding) int {
		if c := strings.Compare(a.RuleID, b.RuleID); c != 0 {
			return c
		}
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
}

func objectRef(o map[string]any) string {
	kind, _ := o["kind"].(string)
	metadata, _ := o["metadata"].(map[string]any)
	name, _ := metadata["name"].(string)
	if name == "" {
		name = "<unnamed>"
	}
	return kind + "/" + name
}
