package policies

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Rule is one catalog entry, read from the METADATA annotation of its Rego
// package:
//
//	# METADATA
//	# title: "@latest AMI alias in production"
//	# description: Why it matters, in a sentence or two.
//	# custom:
//	#   id: KG101
//	#   severity: deny
//	#   kinds: [EC2NodeClass]
//	#   fix: Pin the alias to a tested version, such as al2023@v20240807.
//	package karpgate.rules.ami_latest_production
//
// An optional custom.points list ([admission]) restricts a rule to some
// enforcement points: rules that compare an UPDATE with the old object, or
// that mutate, mean nothing to lint. An optional custom.operations list
// ([UPDATE]) restricts it to some admission operations, so that a rule
// about what an update changes costs a CREATE nothing. A rule whose
// violations carry a "patch" declares custom.mutates: true, so that the
// mutating webhook runs it, and only it, without evaluating the whole rule
// set.
type Rule struct {
	ID          string        `json:"id"`
	Title       string        `json:"title"`
	Description string        `json:"description,omitempty"`
	Severity    config.Action `json:"severity"`
	// Kinds the rule applies to; "*" means every Karpenter kind.
	Kinds []string `json:"kinds"`
	// Points are the enforcement points the rule runs at; empty means all.
	Points []config.EnforcementPoint `json:"points,omitempty"`
	// Operations are the admission operations the rule judges (CREATE,
	// UPDATE); empty means both. Offline evaluation judges an object as a
	// CREATE.
	Operations []Operation `json:"operations,omitempty"`
	// Mutates marks a rule whose violations carry JSON patches
	// (custom.mutates: true). The mutating webhook evaluates only these.
	Mutates bool `json:"mutates,omitempty"`
	// Actions are built-in per-point defaults that differ from Severity
	// (custom.actions: {admission: warn}); configuration overrides them.
	Actions map[config.EnforcementPoint]config.Action `json:"actions,omitempty"`
	Fix     string                                    `json:"fix,omitempty"`
	// Waivable is false for the rules about waivers themselves.
	Waivable bool `json:"waivable"`
	// Package is the rule's Rego package, e.g. data.karpgate.rules.ami_latest_production.
	Package string `json:"package"`
	// Namespace is set for a rule of a policy in conftest's layout: its
	// package without "data." (main); see conftest.go.
	Namespace string `json:"namespace,omitempty"`
	// Builtin is false for rules loaded with --policy.
	Builtin bool   `json:"builtin"`
	File    string `json:"file"`
	// TwinFile is the CEL twin beside a built-in rule (rules/ami/latest.cel
	// beside rules/ami/latest.rego), which policies/twin makes a
	// validation of karpgate's ValidatingAdmissionPolicy; "" when the rule
	// has none. NoTwin says why not (custom.noTwin), for policies/README.md.
	TwinFile string `json:"-"`
	NoTwin   string `json:"-"`

	key string // the package's last segment, used to dispatch evaluation
	// crossObject: the rule reads input.inventory. group: the rule group
	// it is memoized with, or "" (see groups.go). Set when compiling.
	crossObject bool
	group       string
}

// Catalog is every rule the engine knows, ordered by ID.
type Catalog []Rule

// Lookup finds a rule by ID.
func (c Catalog) Lookup(id string) (Rule, bool) {
	i, ok := slices.BinarySearchFunc(c, id, func(r Rule, id string) int { return strings.Compare(r.ID, id) })
	if !ok {
		return Rule{}, false
	}
	return c[i], true
}

// AppliesTo reports whether r evaluates objects of kind.
func (r Rule) AppliesTo(kind string) bool {
	return slices.Contains(r.Kinds, "*") || slices.Contains(r.Kinds, kind)
}

// DefaultAction is r's action at point before any configuration.
func (r Rule) DefaultAction(point config.EnforcementPoint) config.Action {
	if a, ok := r.Actions[point]; ok {
		return a
	}
	return r.Severity
}

// ReportsSchema reports whether r is one of the built-in rules under
// rules/schema/, which report lint's CRD schema verdict (input.schema)
// rather than judging the object themselves.
func (r Rule) ReportsSchema() bool {
	return r.Builtin && strings.HasPrefix(r.key, schemaRulePrefix)
}

// schemaRulePrefix starts the package name of the rules in rules/schema/.
const schemaRulePrefix = "schema_"

// JudgesStoredObjects reports whether r can find anything in an object
// that is not being written: it is neither a mutation, nor a rule about a
// request (custom.operations: what an UPDATE changes, who writes), nor one
// that reports lint's CRD schema verdict.
func (r Rule) JudgesStoredObjects() bool {
	return !r.Mutates && len(r.Operations) == 0 && !r.ReportsSchema()
}

// RunsAt reports whether r is evaluated at point.
func (r Rule) RunsAt(point config.EnforcementPoint) bool {
	return len(r.Points) == 0 || slices.Contains(r.Points, point)
}

// Judges reports whether r is evaluated for a request of op; an offline
// evaluation (no operation) is a CREATE.
func (r Rule) Judges(op Operation) bool {
	if op == "" {
		op = Create
	}
	return len(r.Operations) == 0 || slices.Contains(r.Operations, op)
}

// judgedOperations are the operations a rule may name in custom.operations:
// the admission operations karpgate's webhooks are called for.
var judgedOperations = []Operation{Create, Update}

// rulesPackage is where every rule package lives, built-in or user.
var rulesPackage = ast.MustParseRef("data.karpgate.rules")

var ruleIDPattern = regexp.MustCompile(`^[A-Z][A-Z0-9]*[0-9]+$`)

// builtinIDPrefix is reserved for karpgate's own rules.
const builtinIDPrefix = "KG"

// ruleFromModule reads the catalog entry of a rule package. It returns
// ok=false for modules outside data.karpgate.rules (libraries, tests).
func ruleFromModule(file string, m *ast.Module, builtin bool) (r Rule, ok bool, err error) {
	path := m.Package.Path
	if !path.HasPrefix(rulesPackage) {
		return Rule{}, false, nil
	}
	fail := func(format string, args ...any) (Rule, bool, error) {
		return Rule{}, false, fmt.Errorf("%s: package %s: %s", file, path, fmt.Sprintf(format, args...))
	}
	if len(path) != len(rulesPackage)+1 {
		return fail("a rule package must sit directly under data.karpgate.rules, like data.karpgate.rules.team_tags")
	}
	var a *ast.Annotations
	for _, candidate := range m.Annotations {
		if candidate.Scope == "package" || candidate.Scope == "subpackages" {
			a = candidate
		}
	}
	if a == nil {
		return fail("a rule package needs a METADATA annotation with title and custom id, severity, kinds and fix")
	}
	r = Rule{
		Title:       a.Title,
		Description: strings.TrimSpace(a.Description),
		Package:     path.String(),
		Builtin:     builtin,
		File:        file,
		Waivable:    true,
		key:         string(path[len(path)-1].Value.(ast.String)),
	}
	custom := a.Custom
	r.ID, _ = custom["id"].(string)
	r.Fix, _ = custom["fix"].(string)
	r.Fix = strings.TrimSpace(r.Fix)
	if raw, present := custom["noTwin"]; present {
		reason, isString := raw.(string)
		if !isString || strings.TrimSpace(reason) == "" {
			return fail("custom.noTwin must say why the rule has no CEL twin")
		}
		r.NoTwin = strings.TrimSpace(reason)
	}
	severity, _ := custom["severity"].(string)
	if w, present := custom["waivable"]; present {
		b, isBool := w.(bool)
		if !isBool {
			return fail("custom.waivable must be true or false")
		}
		r.Waivable = b
	}
	kinds, _ := custom["kinds"].([]any)
	for _, k := range kinds {
		s, _ := k.(string)
		if s != "*" && !isKarpenterKind(s) {
			if isRuleOnlyKind(s) {
				return fail(`custom.kinds: %q: only the rules for every kind judge %ss; list kinds: ["*"] and test input.object.kind == %q`, s, s, s)
			}
			return fail("custom.kinds: %q is not a Karpenter kind (NodePool, NodeClaim, EC2NodeClass) or *", k)
		}
		r.Kinds = append(r.Kinds, s)
	}
	if raw, present := custom["points"]; present {
		points, _ := raw.([]any)
		if len(points) == 0 {
			return fail("custom.points must list enforcement points (ci, admission), or be left out to run everywhere")
		}
		for _, p := range points {
			s, _ := p.(string)
			point, err := config.ParseEnforcementPoint(s)
			if err != nil {
				return fail("custom.points: %v", err)
			}
			r.Points = append(r.Points, point)
		}
	}
	if raw, present := custom["operations"]; present {
		operations, _ := raw.([]any)
		if len(operations) == 0 {
			return fail("custom.operations must list admission operations (CREATE, UPDATE), or be left out to judge both")
		}
		for _, o := range operations {
			s, _ := o.(string)
			if !slices.Contains(judgedOperations, Operation(s)) {
				return fail("custom.operations: %q is not an operation karpgate judges; use CREATE or UPDATE", o)
			}
			r.Operations = append(r.Operations, Operation(s))
		}
	}
	if m, present := custom["mutates"]; present {
		b, isBool := m.(bool)
		if !isBool {
			return fail("custom.mutates must be true or false")
		}
		r.Mutates = b
	}
	if raw, present := custom["actions"]; present {
		actions, isMap := raw.(map[string]any)
		if !isMap || len(actions) == 0 {
			return fail("custom.actions must map enforcement points (ci, admission) to deny, warn or audit")
		}
		r.Actions = map[config.EnforcementPoint]config.Action{}
		for p, a := range actions {
			point, err := config.ParseEnforcementPoint(p)
			if err != nil {
				return fail("custom.actions: %v", err)
			}
			s, _ := a.(string)
			action, err := config.ParseAction(s)
			if err != nil {
				return fail("custom.actions.%s: %v", p, err)
			}
			r.Actions[point] = action
		}
	}
	switch {
	case !ruleIDPattern.MatchString(r.ID):
		return fail("custom.id %q must be letters then digits, like ACME101", r.ID)
	case builtin != strings.HasPrefix(r.ID, builtinIDPrefix):
		return fail("custom.id %q: the %s prefix is reserved for karpgate's built-in rules", r.ID, builtinIDPrefix)
	case r.Title == "":
		return fail("the METADATA annotation needs a title")
	case len(r.Kinds) == 0:
		return fail("custom.kinds must list the kinds the rule checks")
	}
	if r.Severity, err = config.ParseAction(severity); err != nil {
		return fail("custom.severity: %v", err)
	}
	return r, true, nil
}

func isKarpenterKind(kind string) bool {
	return slices.ContainsFunc(karpenter.Kinds, func(k karpenter.Kind) bool { return k.Kind == kind })
}

// isRuleOnlyKind: kind is one of karpenter.RuleOnlyKinds, which the engine
// judges by the rules for every kind (dispatchKind) and so a rule does not
// name.
func isRuleOnlyKind(kind string) bool {
	return slices.ContainsFunc(karpenter.RuleOnlyKinds, func(k karpenter.Kind) bool { return k.Kind == kind })
}
