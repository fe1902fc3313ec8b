package sandbox

import (
	"math/big"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/internal/manifest"
)

// What a sized builtin's call would produce, in bytes, from its operands
// (which end with the call's output term). Each stops counting once past
// limit, so that sizing a call costs no more than the limit allows.

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
func rangeSize(stepped bool) func([]*ast.Term, int64, stop) int64 {
	return func(operands []*ast.Term, _ int64, _ stop) int64 {
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
func shiftSize(operands []*ast.Term, _ int64, _ stop) int64 {
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
func sprintfSize(operands []*ast.Term, limit int64, _ stop) int64 {
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
func concatSize(operands []*ast.Term, limit int64, _ stop) int64 {
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

func replaceSize(operands []*ast.Term, _ int64, _ stop) int64 {
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
func replaceNSize(operands []*ast.Term, _ int64, _ stop) int64 {
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

// marshalSize: the value written out, plus indentation (an option of
// json.marshal_with_options; always in YAML) for every element at its
// depth.
func marshalSize(factor int64) func([]*ast.Term, int64, stop) int64 {
	return func(operands []*ast.Term, limit int64, _ stop) int64 {
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

// splitSize: split makes a string for each delimiter and one more; the
// strings share the input's bytes, so each costs its element.
func splitSize(operands []*ast.Term, _ int64, _ stop) int64 {
	s, ok1 := operands[0].Value.(ast.String)
	delim, ok2 := operands[1].Value.(ast.String)
	if !ok1 || !ok2 {
		return 0
	}
	return (int64(strings.Count(string(s), string(delim))) + 1) * elementBytes
}

// splitNSize: strings.split_n(x, d, n) returns at most |n| parts, but a
// negative n (the last parts) splits the whole string first, and a
// positive one splits off n+1.
func splitNSize(operands []*ast.Term, limit int64, _ stop) int64 {
	all := splitSize(operands, limit, nil)
	n, ok := bigOperand(operands[2])
	if !ok || n.Sign() < 0 || !n.IsInt64() || n.Int64() >= all/elementBytes {
		return all
	}
	return (n.Int64() + 1) * elementBytes
}

// indexOfNSize: one number for each occurrence.
func indexOfNSize(operands []*ast.Term, _ int64, _ stop) int64 {
	s, ok1 := operands[0].Value.(ast.String)
	sub, ok2 := operands[1].Value.(ast.String)
	if !ok1 || !ok2 {
		return 0
	}
	return int64(strings.Count(string(s), string(sub))) * elementBytes
}

// jsonUnmarshalSize: the string's bytes and an element for every value in
// it, counted from the characters that start or separate values (an upper
// bound: commas and colons inside strings count too). Counting is a scan
// of the string; decoding it would allocate what the limit is there to
// prevent.
func jsonUnmarshalSize(operands []*ast.Term, limit int64, _ stop) int64 {
	s, ok := operands[0].Value.(ast.String)
	if !ok {
		return 0
	}
	n := int64(len(s))
	for i := 0; i < len(s) && n <= limit; i++ {
		switch s[i] {
		case ',', ':', '[', '{':
			n += elementBytes
		}
	}
	return n + elementBytes
}

// yamlUnmarshalSize: as jsonUnmarshalSize, from the characters that start
// YAML values, and what aliases add once expanded: a string that holds an
// alias is parsed (it is no larger than the limit by then) and its aliases
// counted without expanding them (manifest.ExpandedNodes).
func yamlUnmarshalSize(operands []*ast.Term, limit int64, _ stop) int64 {
	s, ok := operands[0].Value.(ast.String)
	if !ok {
		return 0
	}
	n := int64(len(s))
	for i := 0; i < len(s) && n <= limit; i++ {
		switch s[i] {
		case ',', ':', '[', '{', '-', '\n':
			n += elementBytes
		}
	}
	if n > limit || !strings.Contains(string(s), "*") {
		return n
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return n // the builtin explains the YAML
	}
	nodes, err := manifest.ExpandedNodes(&doc, limit/elementBytes)
	if err != nil {
		return 1<<63 - 1
	}
	return int64(len(s)) + nodes*elementBytes
}
