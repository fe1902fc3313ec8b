package policies

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies/budgetfuncs"
	"github.com/karpgate/karpgate/policies/sandbox"
)

// Policies in conftest's layout load unchanged next to karpgate's own: a
// --policy module whose package matches one of Options.Namespaces ("main"
// by default, globs as conftest's --namespace takes them) and that defines
// deny, violation or warn rules (or deny_<name> and so on) is a conftest
// policy. Its rules see each document as written, as conftest's input, and
// every document of the input, Karpenter kind or not. Their values are
// sets or arrays of strings or of objects with a string msg; deny and
// violation deny, warn warns. An exception rule returning rule names
// (without the deny_/violation_/warn_ prefix, "" for the bare rules)
// excepts those rules for the document, as conftest does; karpgate reports
// what they would have found as waived.

// DefaultNamespaces are the conftest namespaces read when Options leaves
// them out: conftest's own default.
var DefaultNamespaces = []string{"main"}

// conftest's rule names, as its policy engine matches them.
var (
	conftestWarning = regexp.MustCompile(`^warn(_[a-zA-Z0-9]+)*$`)
	conftestFailure = regexp.MustCompile(`^(deny|violation)(_[a-zA-Z0-9]+)*$`)
)

// conftestExceptionRule is the rule name conftest reads exceptions from.
const conftestExceptionRule = "exception"

// conftestRules finds the conftest rules among the user's modules: one
// catalog entry per namespace and rule name, however many bodies define it.
func conftestRules(modules map[string]*ast.Module, userFiles []string, namespaces []string) (Catalog, error) {
	if namespaces == nil {
		namespaces = DefaultNamespaces
	}
	for _, ns := range namespaces {
		if _, err := path.Match(ns, ""); err != nil {
			return nil, fmt.Errorf("--namespace %q: %w", ns, err)
		}
	}
	var found Catalog
	for _, file := range userFiles {
		m := modules[file]
		if strings.HasSuffix(file, "_test.rego") || m.Package.Path.HasPrefix(rulesPackage) {
			continue
		}
		ns := strings.TrimPrefix(m.Package.Path.String(), "data.")
		if !slices.ContainsFunc(namespaces, func(pattern string) bool { ok, _ := path.Match(pattern, ns); return ok }) {
			continue
		}
		for _, rule := range m.Rules {
			head, ok := rule.Head.Ref()[0].Value.(ast.Var)
			if !ok {
				continue
			}
			name := string(head)
			severity := config.Warn
			switch {
			case conftestFailure.MatchString(name):
				severity = config.Deny
			case !conftestWarning.MatchString(name):
				continue
			}
			if rule.Head.Key == nil && rule.Head.Value != nil && rule.Head.Value.Equal(ast.BooleanTerm(true)) {
				return nil, fmt.Errorf("%s:%d: %s.%s is a boolean rule (`%s if`), which reports nothing; conftest rules return messages: write `%s contains msg if`", file, rule.Location.Row, ns, name, name, name)
			}
			id := ns + "." + name
			if slices.ContainsFunc(found, func(r Rule) bool { return r.ID == id }) {
				continue
			}
			found = append(found, Rule{
				ID: id, Title: "conftest rule data." + id, Severity: severity, Kinds: []string{"*"},
				Package: "data." + ns, Namespace: ns, File: file, key: name,
			})
		}
	}
	return found, nil
}

// conftestQueries are the prepared queries of the conftest rules, by
// namespace.
type conftestQueries struct {
	namespaces []conftestNamespace
}

type conftestNamespace struct {
	name  string
	rules []conftestQuery
	// exceptions queries data.<ns>.exception; nil when it is not defined.
	exceptions *rego.PreparedEvalQuery
}

type conftestQuery struct {
	rule  Rule
	query rego.PreparedEvalQuery
}

func prepareConftest(ctx context.Context, compiler *ast.Compiler, store storage.Store, budgets *budgetfuncs.Cache, rules Catalog) (conftestQueries, error) {
	var qs conftestQueries
	prepare := func(q string) (rego.PreparedEvalQuery, error) {
		opts := append([]func(*rego.Rego){rego.Compiler(compiler), rego.Store(store), rego.Query(q)}, budgetfuncs.RegoOptions(budgets)...)
		return rego.New(opts...).PrepareForEval(ctx)
	}
	for _, r := range rules {
		i := slices.IndexFunc(qs.namespaces, func(n conftestNamespace) bool { return n.name == r.Namespace })
		if i < 0 {
			n := conftestNamespace{name: r.Namespace}
			ref := ast.MustParseRef("data." + r.Namespace).Append(ast.StringTerm(conftestExceptionRule))
			if len(compiler.GetRulesExact(ref)) > 0 {
				q, err := prepare(ref.String())
				if err != nil {
					return qs, fmt.Errorf("preparing %s: %w", ref, err)
				}
				n.exceptions = &q
			}
			qs.namespaces = append(qs.namespaces, n)
			i = len(qs.namespaces) - 1
		}
		q, err := prepare(r.Package + "." + r.key)
		if err != nil {
			return qs, fmt.Errorf("preparing %s.%s: %w", r.Package, r.key, err)
		}
		qs.namespaces[i].rules = append(qs.namespaces[i].rules, conftestQuery{rule: r, query: q})
	}
	return qs, nil
}

// HasDocumentRules reports whether policies in conftest's layout are
// loaded: they judge every document of the input, not only Karpenter's
// kinds, through EvaluateDocument.
func (e *Engine) HasDocumentRules() bool { return len(e.conftest.namespaces) > 0 }

// EvaluateDocument runs the conftest rules on one document as written (no
// defaults, no conversion): conftest's input. Findings of excepted rules
// come back waived, naming the exception.
func (e *Engine) EvaluateDocument(ctx context.Context, document map[string]any) (*Result, error) {
	if !e.HasDocumentRules() {
		return &Result{}, nil
	}
	input, err := ast.InterfaceToValue(document)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", objectRef(document), err)
	}
	now := e.now()
	res := &Result{}
	for _, n := range e.conftest.namespaces {
		excepted := map[string]bool{}
		if n.exceptions != nil {
			rs, err := sandbox.Eval(ctx, e.pool, *n.exceptions, input, now, e.limits)
			if err != nil {
				return nil, fmt.Errorf("evaluating data.%s.exception on %s: %w", n.name, objectRef(document), err)
			}
			for _, name := range exceptedNames(rs) {
				excepted[name] = true
			}
		}
		for _, q := range n.rules {
			if !e.cfg.Enabled(q.rule.ID) {
				continue
			}
			rs, err := sandbox.Eval(ctx, e.pool, q.query, input, now, e.limits)
			if err != nil {
				return nil, fmt.Errorf("evaluating %s on %s: %w", q.rule.ID, objectRef(document), err)
			}
			messages, err := conftestMessages(q.rule, rs)
			if err != nil {
				return nil, err
			}
			exceptionName := conftestExceptionName(q.rule.key)
			for _, msg := range messages {
				f := Finding{
					RuleID: q.rule.ID, Title: q.rule.Title, Package: n.name, Message: msg,
					Severity: e.cfg.SeverityFor(q.rule.ID, q.rule.Severity),
					Action:   e.cfg.ActionFor(q.rule.ID, q.rule.Severity, config.CI),
				}
				if excepted[exceptionName] {
					f.Waived = true
					f.WaiverReason = fmt.Sprintf("data.%s.exception names %q", n.name, exceptionName)
					res.Waived = append(res.Waived, f)
					continue
				}
				res.Findings = append(res.Findings, f)
			}
		}
	}
	SortFindings(res.Findings)
	SortFindings(res.Waived)
	return res, nil
}

// conftestExceptionName is the name an exception lists a rule by: its name
// without the deny_, violation_ or warn_ prefix, "" for the bare rules.
func conftestExceptionName(rule string) string {
	for _, prefix := range []string{"deny", "violation", "warn"} {
		if rule == prefix {
			return ""
		}
		if rest, ok := strings.CutPrefix(rule, prefix+"_"); ok {
			return rest
		}
	}
	return rule
}

// exceptedNames reads data.<ns>.exception: a set of lists of rule names.
func exceptedNames(rs rego.ResultSet) []string {
	var names []string
	for _, r := range rs {
		for _, e := range r.Expressions {
			outer, _ := e.Value.([]any)
			for _, inner := range outer {
				list, _ := inner.([]any)
				for _, name := range list {
					if s, ok := name.(string); ok {
						names = append(names, s)
					}
				}
			}
		}
	}
	return names
}

// conftestMessages reads a rule's value as conftest does: a set or array
// of strings, or of objects whose msg is a string.
func conftestMessages(rule Rule, rs rego.ResultSet) ([]string, error) {
	var messages []string
	for _, r := range rs {
		for _, e := range r.Expressions {
			values, ok := e.Value.([]any)
			if !ok {
				continue // undefined or not a collection: conftest reports nothing either
			}
			for _, v := range values {
				switch v := v.(type) {
				case string:
					messages = append(messages, v)
				case map[string]any:
					msg, ok := v["msg"].(string)
					if !ok {
						raw, _ := json.Marshal(v)
						return nil, fmt.Errorf("%s: rule %s returned an object without a string msg, which conftest also refuses: %s", rule.File, rule.ID, raw)
					}
					messages = append(messages, msg)
				}
			}
		}
	}
	return messages, nil
}
