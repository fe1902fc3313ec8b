package sandbox

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// The builtins whose output can be far larger than their input: each call
// is sized from its operands before it runs, and refused above
// Limits.MaxBuiltinBytes. OPA offers no per-call allocation limit of its
// own (only cancellation, which it checks inside numbers.range alone), but
// it lets a program replace a builtin's implementation; karpgate wraps
// these in every evaluation of the process, lint included, so a policy
// means the same in CI as at admission.
var sizedBuiltins = map[string]func(operands []*ast.Term, limit int64) int64{
	ast.NumbersRange.Name:           rangeSize(false),
	ast.NumbersRangeStep.Name:       rangeSize(true),
	ast.BitsShiftLeft.Name:          shiftSize,
	ast.Sprintf.Name:                sprintfSize,
	ast.Concat.Name:                 concatSize,
	ast.Replace.Name:                replaceSize,
	ast.ReplaceN.Name:               replaceNSize,
	ast.RegexReplace.Name:           regexReplaceSize,
	ast.JSONMarshal.Name:            marshalSize(1),
	ast.JSONMarshalWithOptions.Name: marshalSize(1),
	ast.YAMLMarshal.Name:            marshalSize(2),
}

// elementBytes is what one element of a generated collection costs: the
// pointer the collection holds (small numbers are shared).
const elementBytes = 8

// chargedBuiltins make a new string or collection about as large as their
// input: each call is cheap, but a loop of them is not, so what they make
// is charged to the evaluation (Limits.MaxEvaluationBytes) after the call.
var chargedBuiltins = []string{
	ast.Upper.Name, ast.Lower.Name, ast.Trim.Name, ast.TrimLeft.Name, ast.TrimRight.Name, ast.TrimPrefix.Name,
	ast.TrimSuffix.Name, ast.TrimSpace.Name, ast.StringReverse.Name, ast.Split.Name, ast.SplitN.Name,
	ast.RegexSplit.Name, ast.RegexFind.Name, ast.FormatInt.Name, ast.Base64Encode.Name, ast.Base64Decode.Name,
	ast.Base64UrlEncode.Name, ast.Base64UrlEncodeNoPad.Name, ast.Base64UrlDecode.Name, ast.HexEncode.Name,
	ast.HexDecode.Name, ast.URLQueryEncode.Name, ast.URLQueryDecode.Name, ast.URLQueryEncodeObject.Name,
	ast.JSONUnmarshal.Name, ast.YAMLUnmarshal.Name, ast.ArrayConcat.Name, ast.ArrayFlatten.Name,
	ast.Union.Name, ast.Intersection.Name, ast.ObjectUnion.Name, ast.ObjectUnionN.Name, ast.Sort.Name,
	ast.JSONPatch.Name, ast.WalkBuiltin.Name,
}

func init() {
	wrap := func(name string, f func(string, topdown.BuiltinFunc) topdown.BuiltinFunc) {
		original, decl := topdown.GetBuiltin(name), ast.BuiltinMap[name]
		if original == nil || decl == nil {
			panic("sandbox: OPA has no builtin " + name)
		}
		topdown.RegisterBuiltinFunc(name, f(name, original))
		// OPA hands most builtins no context, to save memory; the wrapper
		// needs the evaluation's budget from it.
		decl.CanSkipBctx = false
	}
	for name, size := range sizedBuiltins {
		wrap(name, func(name string, original topdown.BuiltinFunc) topdown.BuiltinFunc {
			return limitedBuiltin(name, size, original)
		})
	}
	for _, name := range chargedBuiltins {
		wrap(name, chargedBuiltin)
	}
}

// budgetOf is the evaluation's budget, nil outside karpgate's engine.
func budgetOf(bctx topdown.BuiltinContext) *evalBudget {
	if bctx.Cancel == nil {
		return nil
	}
	b, _ := bctx.Cancel.(*evalBudget)
	return b
}

// halt stops the evaluation with err. An ordinary builtin error would only
// make the expression undefined, and a deny rule silent.
func halt(bctx topdown.BuiltinContext, err error) error {
	return topdown.Halt{Err: &topdown.Error{Code: topdown.BuiltinErr, Message: err.Error(), Location: bctx.Location}}
}

func chargedBuiltin(name string, original topdown.BuiltinFunc) topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		b := budgetOf(bctx)
		if b == nil {
			return original(bctx, operands, iter)
		}
		return original(bctx, operands, func(out *ast.Term) error {
			if err := b.charge(name, shallowSize(out)); err != nil {
				return halt(bctx, err)
			}
			return iter(out)
		})
	}
}

// shallowSize is what a builtin's result cost to make: a string's bytes, a
// collection's pointers (its elements are mostly the input's, shared).
func shallowSize(t *ast.Term) int64 {
	switch v := t.Value.(type) {
	case ast.String:
		return int64(len(v))
	case ast.Number:
		return int64(len(v))
	case *ast.Array:
		return elementBytes * int64(v.Len())
	case ast.Set:
		return elementBytes * int64(v.Len())
	case ast.Object:
		return 2 * elementBytes * int64(v.Len())
	}
	return elementBytes
}

func limitedBuiltin(name string, size func([]*ast.Term, int64) int64, original topdown.BuiltinFunc) topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		limit := DefaultLimits.MaxBuiltinBytes
		b := budgetOf(bctx)
		if b != nil {
			limit = b.limits.MaxBuiltinBytes
		}
		n := size(operands, limit)
		if n > limit {
			err := fmt.Errorf("%w: %s would produce about %d bytes, over the %d-byte limit for one builtin call", ErrTooExpensive, name, n, limit)
			if b != nil {
				b.exceed(err)
			}
			return halt(bctx, err)
		}
		if b != nil {
			if err := b.charge(name, n); err != nil {
				return halt(bctx, err)
			}
		}
		return original(bctx, operands, iter)
	}
}

func bigOperand(t *ast.Term) (*big.Int, bool) {
	n, ok := t.Value.(ast.Number)
	if !ok {
		return nil, false
	}
	i, ok := new(big.Int).SetString(string(n), 10)
	return i, ok
}

// rangeSize: numbers.range(a, b) and numbers.range_step(a, b, step) make
// |b-a|/step+1 numbers. (Operands end with the call's output term.)
func rangeSize(stepped bool) func([]*ast.Term, int64) int64 {
	return func(operands []*ast.Term, _ int64) int64 {
		a, okA := bigOperand(operands[0])
		b, okB := bigOperand(operands[1])
		if !okA || !okB {
			return 0 // the builtin explains bad operands
		}
		count := new(big.Int).Abs(new(big.Int).Sub(b, a))
		if stepped {
			step, ok := bigOperand(operands[2])
			if !ok || step.Sign() <= 0 {
				return 0
			}
			count.Quo(count, step)
		}
		count.Add(count, big.NewInt(1)).Mul(count, big.NewInt(elementBytes))
		if !count.IsInt64() {
			return 1<<63 - 1
		}
		return count.Int64()
	}
}

// shiftSize: bits.lsh(x, s) has s more bits than x; written in decimal, a
// byte per 3.3 bits.
func shiftSize(operands []*ast.Term, _ int64) int64 {
	x, okX := bigOperand(operands[0])
	s, okS := bigOperand(operands[1])
	if !okX || !okS || s.Sign() < 0 {
		return 0
	}
	if !s.IsInt64() || s.Int64() > 1<<40 {
		return 1<<63 - 1
	}
	return (int64(x.BitLen()) + s.Int64()) * 3 / 10
}

// sprintfSize: the format, every argument written out, and any width or
// precision, which fmt pads to (a * takes it from the arguments).
func sprintfSize(operands []*ast.Term, limit int64) int64 {
	format, ok := operands[0].Value.(ast.String)
	if !ok {
		return 0
	}
	n := int64(len(format)) + termSize(operands[1], limit)
	for _, digits := range formatNumbers.FindAllString(string(format), -1) {
		var w big.Int
		if _, ok := w.SetString(strings.TrimLeft(digits, "%.+-# 0"), 10); ok {
			if !w.IsInt64() {
				return 1<<63 - 1
			}
			n += w.Int64()
		}
	}
	if strings.Contains(string(format), "*") {
		if args, ok := operands[1].Value.(*ast.Array); ok {
			args.Foreach(func(t *ast.Term) {
				if v, ok := bigOperand(t); ok && v.IsInt64() {
					n += max(v.Int64(), 0)
				}
			})
		}
	}
	return n
}

// formatNumbers finds the widths and precisions in a format string.
var formatNumbers = regexp.MustCompile(`%[-+# 0]*[0-9]+|\.[0-9]+`)

// concatSize: every string once, and a delimiter between each.
func concatSize(operands []*ast.Term, limit int64) int64 {
	delim, _ := operands[0].Value.(ast.String)
	var n, count int64
	each := func(t *ast.Term) bool {
		if s, ok := t.Value.(ast.String); ok {
			n += int64(len(s))
		}
		count++
		return n+count*int64(len(delim)) > limit
	}
	switch c := operands[1].Value.(type) {
	case *ast.Array:
		c.Until(each)
	case ast.Set:
		c.Until(each)
	}
	return n + count*int64(len(delim))
}

// replacedSize is s with count occurrences of old replaced by new; an empty
// old matches between every two runes.
func replacedSize(s, old, replacement string) int64 {
	count := int64(utf8.RuneCountInString(s) + 1)
	if old != "" {
		count = int64(strings.Count(s, old))
	}
	return int64(len(s)) + count*max(int64(len(replacement))-int64(len(old)), 0)
}

func replaceSize(operands []*ast.Term, _ int64) int64 {
	s, ok1 := operands[0].Value.(ast.String)
	old, ok2 := operands[1].Value.(ast.String)
	replacement, ok3 := operands[2].Value.(ast.String)
	if !ok1 || !ok2 || !ok3 {
		return 0
	}
	return replacedSize(string(s), string(old), string(replacement))
}

// replaceNSize: every pattern replaced everywhere it occurs, an upper bound
// (strings.NewReplacer never rescans what it wrote).
func replaceNSize(operands []*ast.Term, _ int64) int64 {
	patterns, ok1 := operands[0].Value.(ast.Object)
	s, ok2 := operands[1].Value.(ast.String)
	if !ok1 || !ok2 {
		return 0
	}
	n := int64(len(s))
	patterns.Foreach(func(k, v *ast.Term) {
		old, okK := k.Value.(ast.String)
		replacement, okV := v.Value.(ast.String)
		if okK && okV {
			n += replacedSize(string(s), string(old), string(replacement)) - int64(len(s))
		}
	})
	return n
}

// regexReplaceSize: each match becomes the replacement, whose $ references
// can each bring back as much as the match.
func regexReplaceSize(operands []*ast.Term, limit int64) int64 {
	s, ok1 := operands[0].Value.(ast.String)
	pattern, ok2 := operands[1].Value.(ast.String)
	replacement, ok3 := operands[2].Value.(ast.String)
	if !ok1 || !ok2 || !ok3 {
		return 0
	}
	re, err := regexp.Compile(string(pattern))
	if err != nil {
		return 0 // the builtin explains the pattern
	}
	refs := int64(strings.Count(string(replacement), "$"))
	n := int64(len(s))
	for _, m := range re.FindAllStringIndex(string(s), -1) {
		n += int64(len(replacement)) + refs*int64(m[1]-m[0])
		if n > limit {
			break
		}
	}
	return n
}

// marshalSize: the value written out, plus indentation (an option of
// json.marshal_with_options; always in YAML) for every element at its
// depth.
func marshalSize(factor int64) func([]*ast.Term, int64) int64 {
	return func(operands []*ast.Term, limit int64) int64 {
		s := sizeOf(operands[0], limit)
		n := factor * s.bytes
		if len(operands) > 1 {
			if opts, ok := operands[1].Value.(ast.Object); ok {
				var pad int64
				for _, key := range []string{"indent", "prefix"} {
					if v := opts.Get(ast.StringTerm(key)); v != nil {
						if str, ok := v.Value.(ast.String); ok {
							pad += int64(len(str))
						}
					}
				}
				n += s.nodes * (pad*s.depth + 2)
			}
		} else if factor > 1 {
			n += s.nodes * 2 * s.depth
		}
		return n
	}
}

// termSize is the bytes a term takes written out.
func termSize(t *ast.Term, limit int64) int64 { return sizeOf(t, limit).bytes }

type size struct{ bytes, nodes, depth int64 }

// sizeOf measures a term as JSON would write it, every shared subterm in
// full (as marshalling does), stopping once past limit.
func sizeOf(t *ast.Term, limit int64) size {
	var s size
	var walk func(t *ast.Term, depth int64) bool
	walk = func(t *ast.Term, depth int64) bool {
		s.nodes++
		s.depth = max(s.depth, depth)
		switch v := t.Value.(type) {
		case ast.String:
			s.bytes += int64(len(v)) + 2
		case ast.Number:
			s.bytes += int64(len(v))
		case *ast.Array:
			s.bytes += 2 + int64(v.Len())
			v.Until(func(e *ast.Term) bool { return walk(e, depth+1) })
		case ast.Set:
			s.bytes += 2 + int64(v.Len())
			v.Until(func(e *ast.Term) bool { return walk(e, depth+1) })
		case ast.Object:
			s.bytes += 2 + 2*int64(v.Len())
			v.Until(func(k, e *ast.Term) bool { return walk(k, depth+1) || walk(e, depth+1) })
		default:
			s.bytes += 5 // true, false, null
		}
		return s.bytes > limit // stop walking
	}
	walk(t, 0)
	return s
}
