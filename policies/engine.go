package policies

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies/budgetfuncs"
	"github.com/karpgate/karpgate/policies/memo"
	"github.com/karpgate/karpgate/policies/sandbox"
	"github.com/karpgate/karpgate/policies/waiver"
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
	// Limits bound each evaluation; zero fields mean sandbox.DefaultLimits.
	Limits sandbox.Limits
	// Pool bounds the evaluations running at once, shared with the other
	// engines given the same pool; nil means a pool of the engine's own
	// (sandbox.NewPool(0)).
	Pool *sandbox.Pool
	// Karpenter is the Karpenter version objects are judged by; the rules
	// read its facts as data.karpgate.karpenter. nil means the newest
	// release karpgate knows, whose CRDs the binary links.
	Karpenter *release.Judged
	// Namespaces are the packages of --policy modules read as conftest
	// policies (conftest's --namespace, globs allowed); nil means
	// DefaultNamespaces. See conftest.go.
	Namespaces []string
	// SkipCostCheck leaves out the load-time cost check on sample objects:
	// for a caller that has run it already, in a process of its own (karpgate
	// serve, so that a policy that allocates without bound costs a child
	// process and not the replica answering the webhooks).
	SkipCostCheck bool

	// evaluateEveryRuleEveryTime turns off the rule groups' memo, for tests
	// that compare with it.
	evaluateEveryRuleEveryTime bool
}

// Engine evaluates the compiled rule set. It is immutable after New and
// safe for concurrent use; to apply a new configuration or new policies,
// build a new Engine and swap it in.
type Engine struct {
	// karpenter is the version the rules judge by.
	karpenter release.Judged
	cfg       *config.Config
	catalog   Catalog
	byKey     map[string]Rule
	queries   queries
	// selected says which of the queries' selections have rules for a
	// kind at a point; the others are not evaluated.
	selected dispatchTable
	// wholeObjects: a --policy rule reads input.inventory, so cross-object
	// evaluation keeps whole objects; see CrossObjectPaths.
	wholeObjects bool
	now          func() time.Time
	// budgets is shared by the budget builtins of every query.
	budgets *budgetfuncs.Cache
	// groups are the rules memoized by their footprint, and groupRuns
	// what they found; see groups.go.
	groups    []*memo.Group
	groupRuns *memo.Memo[[]rawViolation]
	limits    sandbox.Limits
	pool      *sandbox.Pool
	// storedRules and crossKinds answer StoredObjectRules and
	// HasCrossObjectRules, which callers ask once per object, by point and
	// kind.
	storedRules map[config.EnforcementPoint]map[string][]Rule
	crossKinds  map[config.EnforcementPoint]map[string]bool
	// conftest are the rules of policies in conftest's layout, which
	// EvaluateDocument runs; their entries are in catalog too.
	conftest conftestQueries
}

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
	conftestCatalog, err := conftestRules(set.modules, set.userFiles, opts.Namespaces)
	if err != nil {
		return nil, err
	}
	lookup := func(id string) (Rule, bool) {
		if r, ok := set.catalog.Lookup(id); ok {
			return r, true
		}
		i := slices.IndexFunc(conftestCatalog, func(r Rule) bool { return r.ID == id })
		if i < 0 {
			return Rule{}, false
		}
		return conftestCatalog[i], true
	}
	if err := cfg.CheckRuleIDs(func(id string) bool { _, ok := lookup(id); return ok }, func(id string) bool { r, _ := lookup(id); return r.Waivable }); err != nil {
		return nil, err
	}
	if err := checkPatchesDeclared(set.modules, set.catalog); err != nil {
		return nil, err
	}
	compiler, err := sandbox.Compile(set.modules, budgetfuncs.Declarations())
	if err != nil {
		return nil, err
	}
	if err := checkRulesDefineViolation(compiler, set.catalog); err != nil {
		return nil, err
	}
	groups, wholeObjects := classifyRules(compiler, set.catalog, cfg, !opts.evaluateEveryRuleEveryTime)
	judged := release.ForRelease(release.Newest(), true, "linked CRDs")
	if opts.Karpenter != nil {
		judged = *opts.Karpenter
	}
	store, selected, err := newStore(set, cfg, groups, judged)
	if err != nil {
		return nil, err
	}
	budgets := budgetfuncs.NewCacheFor(budget.ReasonsNamed(judged.Facts.Schema.BudgetReasons))
	qs, err := prepareQueries(ctx, compiler, store, budgets, groups)
	if err != nil {
		return nil, err
	}
	conftest, err := prepareConftest(ctx, compiler, store, budgets, conftestCatalog)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		karpenter: judged,
		cfg:       cfg, catalog: set.catalog, byKey: map[string]Rule{}, queries: qs, selected: selected, wholeObjects: wholeObjects, now: opts.Now,
		budgets: budgets, groups: groups, groupRuns: memo.New[[]rawViolation](budgets), limits: opts.Limits.WithDefaults(),
		pool: opts.Pool, conftest: conftest,
	}
	if e.pool == nil {
		e.pool = sandbox.NewPool(0)
	}
	if e.now == nil {
		e.now = time.Now
	}
	for _, r := range set.catalog {
		e.byKey[r.key] = r
	}
	e.indexByKind()
	// The conftest rules join the catalog (for --list-rules and the formats
	// that describe rules) only now: dispatch, grouping, the kind index and
	// the checks above are for karpgate's own rules.
	e.catalog = slices.SortedStableFunc(slices.Values(append(slices.Clip(set.catalog), conftestCatalog...)), func(a, b Rule) int { return strings.Compare(a.ID, b.ID) })
	if opts.SkipCostCheck {
		return e, nil
	}
	if err := e.checkCost(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// Pool is the pool the engine's evaluations take their slots from.
func (e *Engine) Pool() *sandbox.Pool { return e.pool }

// Karpenter is the Karpenter version the engine judges objects by.
func (e *Engine) Karpenter() release.Judged { return e.karpenter }

// Catalog returns every rule, built-in and user, ordered by ID.
func (e *Engine) Catalog() Catalog { return e.catalog }

// StoredObjectRules are the enabled rules that judge a stored object of
// kind at point (see Rule.JudgesStoredObjects), ordered by ID: what the
// audit of stored objects reports as passed when they find nothing.
func (e *Engine) StoredObjectRules(kind string, point config.EnforcementPoint) []Rule {
	return e.storedRules[point][kind]
}

func (e *Engine) indexByKind() {
	e.storedRules = map[config.EnforcementPoint]map[string][]Rule{}
	e.crossKinds = map[config.EnforcementPoint]map[string]bool{}
	for _, point := range config.EnforcementPoints {
		e.storedRules[point] = map[string][]Rule{}
		e.crossKinds[point] = map[string]bool{}
		for _, k := range karpenter.Kinds {
			for _, r := range e.catalog {
				if !e.cfg.Enabled(r.ID) || !r.AppliesTo(k.Kind) || !r.RunsAt(point) {
					continue
				}
				if r.JudgesStoredObjects() {
					e.storedRules[point][k.Kind] = append(e.storedRules[point][k.Kind], r)
				}
				if r.crossObject && !r.Mutates {
					e.crossKinds[point][k.Kind] = true
				}
			}
		}
	}
}

// Config returns the configuration the engine was built with.
func (e *Engine) Config() *config.Config { return e.cfg }

// Handles reports whether the engine has rules for objects of this
// apiVersion and kind; callers skip (and count) everything else.
func Handles(apiVersion, kind string) bool {
	_, _, ok := karpenter.LookupKind(apiVersion, kind)
	return ok
}

// Now is the engine's clock: the instant time-dependent rules judge by
// when a request does not pin one.
func (e *Engine) Now() time.Time { return e.now() }

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
	now := req.Now
	if now.IsZero() {
		now = e.now()
	}
	in := e.newEvalInput(req, point, now)
	ref := objectRef(req.Object)
	apiVersion, _ := req.Object["apiVersion"].(string)
	kind, _ := req.Object["kind"].(string)
	kind = dispatchKind(apiVersion, kind)
	selection := selectionFor(req)
	var vs []rawViolation
	if e.selected.has(selection, point, kind) {
		input, _, err := in.rego()
		if err != nil {
			return nil, err
		}
		if vs, err = e.violations(ctx, e.queries.selections[selection], input, now, ref); err != nil {
			return nil, err
		}
	}
	for i, g := range e.groups {
		if g.Mutates != req.MutationsOnly || !g.Applies[point][kind] {
			continue
		}
		groupVs, err := e.groupViolations(ctx, g, i, in, now, ref)
		if err != nil {
			return nil, err
		}
		vs = append(vs, groupVs...)
	}
	return e.result(vs, point, in.waivers)
}

// rawViolation is one member of a rule's violation set, as evaluated.
type rawViolation struct {
	key string // the rule package's last segment
	v   any
}

// violations evaluates one prepared query.
func (e *Engine) violations(ctx context.Context, query rego.PreparedEvalQuery, input ast.Value, now time.Time, ref string) ([]rawViolation, error) {
	rs, err := sandbox.Eval(ctx, e.pool, query, input, now, e.limits)
	if err != nil {
		return nil, fmt.Errorf("evaluating %s: %w", ref, err)
	}
	vs := make([]rawViolation, 0, len(rs))
	for _, r := range rs {
		key, _ := r.Bindings["pkg"].(string)
		vs = append(vs, rawViolation{key: key, v: r.Bindings["v"]})
	}
	return vs, nil
}

// result turns violations into findings, with the object's waivers applied.
func (e *Engine) result(vs []rawViolation, point config.EnforcementPoint, waivers []waiver.Waiver) (*Result, error) {
	res := &Result{}
	for _, v := range vs {
		rule, ok := e.byKey[v.key]
		if !ok {
			continue
		}
		f, err := e.finding(rule, v.v, point)
		if err != nil {
			return nil, err
		}
		if w, waived := e.waiverFor(rule, waivers); waived {
			f.Waived, f.WaiverReason, f.WaiverUntil, f.WaiverSetBy = true, w.Reason, w.Until, w.SetBy
			res.Waived = append(res.Waived, f)
			continue
		}
		res.Findings = append(res.Findings, f)
	}
	SortFindings(res.Findings)
	SortFindings(res.Waived)
	return res, nil
}

func (e *Engine) finding(rule Rule, v any, point config.EnforcementPoint) (Finding, error) {
	got, err := decodeViolation(v)
	if err != nil || got.Msg == "" {
		raw, _ := json.Marshal(v)
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

// SortFindings orders one object's findings as Evaluate returns them; see
// CompareFindings.
func SortFindings(fs []Finding) { slices.SortStableFunc(fs, CompareFindings) }

// CompareFindings orders findings by rule ID, then path, then message, then
// fix:
// callers that merge findings from several evaluations or stages sort them
// with it, so the order never depends on which ran first.
func CompareFindings(a, b Finding) int {
	return cmp.Or(strings.Compare(a.RuleID, b.RuleID), strings.Compare(a.Path, b.Path), strings.Compare(a.Message, b.Message), strings.Compare(a.Fix, b.Fix))
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

// ReportSchema turns what the API server would refuse about an object
// (found offline by lint's CRD schema stage) into findings: the rules under
// rules/schema/ each report one class of violation from input.schema, so
// that their actions, severities and waivers are configured like any
// rule's. Only those rules run; Evaluate leaves them out.
func (e *Engine) ReportSchema(ctx context.Context, object map[string]any, vs []SchemaViolation) (*Result, error) {
	if len(vs) == 0 {
		return &Result{}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	in, _, err := e.input(Request{Object: object}, config.CI)
	if err != nil {
		return nil, err
	}
	schema, err := schemaValue(vs)
	if err != nil {
		return nil, fmt.Errorf("%s: schema verdict: %w", objectRef(object), err)
	}
	in.Insert(ast.StringTerm("schema"), ast.NewTerm(schema))
	ref := objectRef(object)
	found, err := e.violations(ctx, e.queries.selections[selectSchema], in, e.now(), ref)
	if err != nil {
		return nil, err
	}
	return e.result(found, config.CI, readWaivers(object, e.now()))
}
