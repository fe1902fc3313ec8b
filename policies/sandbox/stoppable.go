package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/builtins"
)

// OPA checks for cancellation between expressions; inside one builtin call
// it does not. The builtins whose one call can take far longer than its
// operands are large, regular expressions and globs, are replaced here by
// implementations that stop with their evaluation: its context's end sets
// the budget's stop flag, and the call returns within a rune's work with
// an error that ends the evaluation (see stoppableRegexp). Nothing is left
// running: a call runs on its evaluation's goroutine, in its evaluation
// slot. Every other builtin takes time in proportion to what it is given,
// which the size limits bound, and also runs to its end (a parse of the
// largest document the limits let through takes milliseconds).
//
// Each replacement answers as OPA's implementation does; it hands any call
// it does not handle itself (a wrong operand type, a pattern that does not
// compile, a call outside karpgate's evaluations) to that implementation,
// which then gives OPA's own errors. regex.template_match builds its
// expression inside OPA, where karpgate cannot reach it, so policies may
// not call it (capabilities.go).
var stoppableBuiltins = map[string]func(name string, original topdown.BuiltinFunc) topdown.BuiltinFunc{
	ast.RegexMatch.Name:                 regexMatch,
	ast.RegexMatchDeprecated.Name:       regexMatch,
	ast.RegexFind.Name:                  regexFind,
	ast.RegexFindAllStringSubmatch.Name: regexFindAllStringSubmatch,
	ast.RegexSplit.Name:                 regexSplit,
	ast.RegexReplace.Name:               regexReplace,
	ast.GlobMatch.Name:                  globMatch,
}

// stoppableCalls counts the calls of stoppable builtins in progress, and
// stoppedCalls those that were stopped, for the tests that show a call
// does not outlive its evaluation.
var stoppableCalls, stoppedCalls atomic.Int64

// counted is the outermost wrapper of a stoppable builtin: it counts the
// call, sizing included (sizing a regular expression's result runs it).
func counted(_ string, f topdown.BuiltinFunc) topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		stoppableCalls.Add(1)
		defer stoppableCalls.Add(-1)
		return f(bctx, operands, iter)
	}
}

// stopOf is the flag that stops a call: the evaluation's budget's; nil
// outside karpgate's evaluations.
func stopOf(bctx topdown.BuiltinContext) stop {
	if b := budgetOf(bctx); b != nil {
		return &b.cancelled
	}
	return nil
}

// wasStopped is the error that ends the evaluation of a stopped call; Eval
// reports the reason its context ended.
func wasStopped(bctx topdown.BuiltinContext, name string) error {
	stoppedCalls.Add(1)
	return halt(bctx, fmt.Errorf("a call of %s was still running when the evaluation ran out of time; it stopped", name))
}

// patternCall is what the regular expression builtins read from their
// operands: the pattern at index pattern, compiled, the text at index text,
// and the flag that stops the call. ok is false when OPA's implementation
// answers instead: outside karpgate's evaluations, for an operand that is
// not a string, or for a pattern that does not compile.
func patternCall(bctx topdown.BuiltinContext, operands []*ast.Term, pattern, text int) (re *stoppableRegexp, value string, s stop, ok bool) {
	s = stopOf(bctx)
	p, pOK := operands[pattern].Value.(ast.String)
	v, vOK := operands[text].Value.(ast.String)
	if s == nil || !pOK || !vOK {
		return nil, "", nil, false
	}
	re, err := compileStoppable(string(p))
	if err != nil {
		return nil, "", nil, false
	}
	return re, string(v), s, true
}

// regexMatch is regex.match(pattern, value) and re_match.
func regexMatch(name string, original topdown.BuiltinFunc) topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		re, text, s, ok := patternCall(bctx, operands, 0, 1)
		if !ok {
			return original(bctx, operands, iter)
		}
		matched, err := re.MatchString(text, s)
		if err != nil {
			return wasStopped(bctx, name)
		}
		return iter(ast.InternedTerm(matched))
	}
}

// errLeftToOPA hands a call to OPA's implementation, which explains the
// operands it refuses.
var errLeftToOPA = errors.New("left to OPA")

// findAll runs the pattern of operands[0] over the text of operands[1],
// at most n matches (operands[2]); the error is errLeftToOPA or
// errStopped.
func findAll(bctx topdown.BuiltinContext, operands []*ast.Term) (text string, matches [][]int, err error) {
	re, text, s, ok := patternCall(bctx, operands, 0, 1)
	n, nErr := builtins.IntOperand(operands[2].Value, 3)
	if !ok || nErr != nil {
		return "", nil, errLeftToOPA
	}
	matches, err = re.FindAllStringSubmatchIndex(text, n, s)
	return text, matches, err
}

// regexFind is regex.find_n(pattern, value, n): the matches.
func regexFind(name string, original topdown.BuiltinFunc) topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		text, matches, err := findAll(bctx, operands)
		switch {
		case errors.Is(err, errLeftToOPA):
			return original(bctx, operands, iter)
		case err != nil:
			return wasStopped(bctx, name)
		}
		out := make([]*ast.Term, len(matches))
		for i, m := range matches {
			out[i] = ast.StringTerm(text[m[0]:m[1]])
		}
		return iter(ast.ArrayTerm(out...))
	}
}

// regexFindAllStringSubmatch is regex.find_all_string_submatch_n(pattern,
// value, n): each match with its groups, "" for a group that took no part.
func regexFindAllStringSubmatch(name string, original topdown.BuiltinFunc) topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		text, matches, err := findAll(bctx, operands)
		switch {
		case errors.Is(err, errLeftToOPA):
			return original(bctx, operands, iter)
		case err != nil:
			return wasStopped(bctx, name)
		}
		out := make([]*ast.Term, len(matches))
		for i, m := range matches {
			groups := make([]*ast.Term, len(m)/2)
			for j := range groups {
				part := ""
				if m[2*j] >= 0 {
					part = text[m[2*j]:m[2*j+1]]
				}
				groups[j] = ast.StringTerm(part)
			}
			out[i] = ast.ArrayTerm(groups...)
		}
		return iter(ast.ArrayTerm(out...))
	}
}

// regexSplit is regex.split(pattern, value).
func regexSplit(name string, original topdown.BuiltinFunc) topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		re, text, s, ok := patternCall(bctx, operands, 0, 1)
		if !ok {
			return original(bctx, operands, iter)
		}
		parts, err := re.Split(text, s)
		if err != nil {
			return wasStopped(bctx, name)
		}
		out := make([]*ast.Term, len(parts))
		for i, p := range parts {
			out[i] = ast.StringTerm(p)
		}
		return iter(ast.ArrayTerm(out...))
	}
}

// regexReplace is regex.replace(value, pattern, replacement), whose
// replacement expands $1 and ${name}; an unchanged value is the operand
// itself, as OPA answers.
func regexReplace(name string, original topdown.BuiltinFunc) topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		re, base, s, ok := patternCall(bctx, operands, 1, 0)
		replacement, rOK := operands[2].Value.(ast.String)
		if !ok || !rOK {
			return original(bctx, operands, iter)
		}
		matches, err := re.FindAllStringSubmatchIndex(base, -1, s)
		if err != nil {
			return wasStopped(bctx, name)
		}
		var b strings.Builder
		last := 0
		for _, m := range matches {
			b.WriteString(base[last:m[0]])
			b.Write(re.re.ExpandString(nil, string(replacement), base, m))
			last = m[1]
		}
		b.WriteString(base[last:])
		if out := b.String(); out != base {
			return iter(ast.InternedTerm(out))
		}
		return iter(operands[0])
	}
}

// globMatch is glob.match(pattern, delimiters, value): delimiters null for
// none, [] for ".", else one-character strings.
func globMatch(name string, original topdown.BuiltinFunc) topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		s := stopOf(bctx)
		pattern, ok1 := operands[0].Value.(ast.String)
		value, ok2 := operands[2].Value.(ast.String)
		separators, ok3 := globSeparators(operands[1].Value)
		// The glob library reads bytes where the regexp package reads
		// U+FFFD: text that is not UTF-8 stays with it.
		if s == nil || !ok1 || !ok2 || !ok3 || !utf8.ValidString(string(pattern)) || !utf8.ValidString(string(value)) {
			return original(bctx, operands, iter)
		}
		re, ok, err := compileStoppableGlob(string(pattern), separators)
		if err != nil || !ok {
			return original(bctx, operands, iter)
		}
		matched, err := re.MatchString(string(value), s)
		if err != nil {
			return wasStopped(bctx, name)
		}
		return iter(ast.InternedTerm(matched))
	}
}

// globSeparators reads glob.match's delimiters as OPA does; ok is false
// for operands OPA refuses.
func globSeparators(v ast.Value) ([]rune, bool) {
	switch v := v.(type) {
	case ast.Null:
		return nil, true
	case *ast.Array:
		if v.Len() == 0 {
			return []rune{'.'}, true
		}
		out := make([]rune, 0, v.Len())
		for i := range v.Len() {
			s, ok := v.Elem(i).Value.(ast.String)
			if !ok || utf8.RuneCountInString(string(s)) != 1 {
				return nil, false
			}
			r, _ := utf8.DecodeRuneInString(string(s))
			out = append(out, r)
		}
		return out, true
	}
	return nil, false
}
