package sandbox

import (
	"regexp"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// regexReplaceSize: each match becomes the replacement, whose $ references
// can each bring back as much as the match. Every match adds at least the
// replacement, so counting stops one match past what the limit allows (an
// empty replacement adds nothing, however many matches there are).
func regexReplaceSize(operands []*ast.Term, limit int64, s stop) int64 {
	text, ok1 := operands[0].Value.(ast.String)
	pattern, ok2 := operands[1].Value.(ast.String)
	replacement, ok3 := operands[2].Value.(ast.String)
	if !ok1 || !ok2 || !ok3 {
		return 0
	}
	re, err := compileStoppable(string(pattern))
	if err != nil {
		return 0 // the builtin explains the pattern
	}
	refs := int64(strings.Count(string(replacement), "$"))
	most := limit/max(int64(len(replacement)), elementBytes) + 1
	n := int64(len(text))
	// Stopped, the count is short; the call itself then stops.
	matches, _ := re.FindAllStringIndex(string(text), int(most), s)
	for _, m := range matches {
		n += int64(len(replacement)) + refs*int64(m[1]-m[0])
		if n > limit {
			break
		}
	}
	return n
}

// regexSize sizes a call that makes perMatch bytes for each match of the
// pattern in text, counting at most n matches (negative: all). Counting
// runs the expression, but stops one match past what the limit allows, and
// keeps two ints a match: the calls the limit refuses cost no more than the
// ones it allows. It stops with its evaluation too (the count is then
// short, and the call itself stops).
func regexSize(pattern, text ast.Value, n int64, perMatch func(*regexp.Regexp) int64, limit int64, s stop) (int64, *regexp.Regexp) {
	p, ok1 := pattern.(ast.String)
	str, ok2 := text.(ast.String)
	if !ok1 || !ok2 {
		return 0, nil
	}
	re, err := compileStoppable(string(p))
	if err != nil {
		return 0, nil // the builtin explains the pattern
	}
	each := max(perMatch(re.re), 1)
	most := limit/each + 1
	if n >= 0 && n < most {
		most = n
	}
	matches, _ := re.FindAllStringIndex(string(str), int(most), s)
	return int64(len(matches)) * each, re.re
}

func intOperand(t *ast.Term) int64 {
	n, ok := bigOperand(t)
	if !ok || !n.IsInt64() {
		return -1
	}
	return n.Int64()
}

func oneElement(*regexp.Regexp) int64 { return elementBytes }

// regexFindSize: regex.find_n(pattern, s, n) makes a string a match.
func regexFindSize(operands []*ast.Term, limit int64, s stop) int64 {
	n, _ := regexSize(operands[0].Value, operands[1].Value, intOperand(operands[2]), oneElement, limit, s)
	return n
}

// regexSubmatchSize: regex.find_all_string_submatch_n makes, per match, a
// list of the match and every group: a pattern of 500 empty groups over a
// megabyte makes half a billion strings.
func regexSubmatchSize(operands []*ast.Term, limit int64, s stop) int64 {
	n, _ := regexSize(operands[0].Value, operands[1].Value, intOperand(operands[2]), func(re *regexp.Regexp) int64 {
		return int64(re.NumSubexp()+2) * elementBytes
	}, limit, s)
	return n
}

// regexSplitSize: a string between every two matches.
func regexSplitSize(operands []*ast.Term, limit int64, s stop) int64 {
	n, re := regexSize(operands[0].Value, operands[1].Value, -1, oneElement, limit, s)
	if re == nil {
		return 0
	}
	return n + elementBytes
}
