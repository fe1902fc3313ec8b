package valuekey

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Encoder writes keys. It keeps scratch space between calls, so reuse one
// (it is not safe for concurrent use).
type Encoder struct {
	goMembers  []goMember
	astMembers []astMember
}

type goMember struct {
	key   string
	value any
}

type astMember struct {
	key   string
	value ast.Value
}

// AppendGo appends v's key to buf. ok is false when v holds a type the
// encoder does not know how ast.InterfaceToValue converts (anything but
// nil, bool, string, int, int64, float64, json.Number, []any, []string,
// map[string]any and map[string]string; not uint64, which
// ast.InterfaceToValue reads as a signed number); buf is then unspecified.
func (e *Encoder) AppendGo(buf []byte, v any) (out []byte, ok bool) {
	switch v := v.(type) {
	case nil:
		return append(buf, 'z'), true
	case bool:
		return appendBool(buf, v), true
	case string:
		return appendString(buf, v), true
	case int:
		return append(strconv.AppendInt(append(buf, 'n'), int64(v), 10), ';'), true
	case int64:
		return append(strconv.AppendInt(append(buf, 'n'), v, 10), ';'), true
	case float64:
		return append(strconv.AppendFloat(append(buf, 'n'), v, 'g', -1, 64), ';'), true
	case json.Number:
		return appendNumber(buf, string(v)), true
	case []any:
		buf = append(buf, '[')
		for _, elem := range v {
			if buf, ok = e.AppendGo(buf, elem); !ok {
				return buf, false
			}
		}
		return append(buf, ']'), true
	case []string:
		buf = append(buf, '[')
		for _, elem := range v {
			buf = appendString(buf, elem)
		}
		return append(buf, ']'), true
	case map[string]any:
		start := len(e.goMembers)
		for k, value := range v {
			e.goMembers = append(e.goMembers, goMember{k, value})
		}
		slices.SortFunc(e.goMembers[start:], func(a, b goMember) int { return strings.Compare(a.key, b.key) })
		buf = append(buf, '{')
		for i := start; i < start+len(v); i++ {
			// Indexed, not ranged: nested objects append to (and may
			// move) the scratch slice.
			m := e.goMembers[i]
			buf = appendString(buf, m.key)
			if buf, ok = e.AppendGo(buf, m.value); !ok {
				e.goMembers = e.goMembers[:start]
				return buf, false
			}
		}
		e.goMembers = e.goMembers[:start]
		return append(buf, '}'), true
	case map[string]string:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf = append(buf, '{')
		for _, k := range keys {
			buf = appendString(appendString(buf, k), v[k])
		}
		return append(buf, '}'), true
	}
	return buf, false
}

// AppendAST appends v's key to buf. Values that JSON has no word for (sets,
// objects with keys that are not strings, references) get a key of their
// own kind, from their Rego text.
func (e *Encoder) AppendAST(buf []byte, v ast.Value) []byte {
	switch v := v.(type) {
	case ast.Null:
		return append(buf, 'z')
	case ast.Boolean:
		return appendBool(buf, bool(v))
	case ast.String:
		return appendString(buf, string(v))
	case ast.Number:
		return appendNumber(buf, string(v))
	case *ast.Array:
		buf = append(buf, '[')
		for i := range v.Len() {
			buf = e.AppendAST(buf, v.Elem(i).Value)
		}
		return append(buf, ']')
	case ast.Object:
		start := len(e.astMembers)
		stringKeys := true
		v.Foreach(func(k, value *ast.Term) {
			s, isString := k.Value.(ast.String)
			stringKeys = stringKeys && isString
			e.astMembers = append(e.astMembers, astMember{string(s), value.Value})
		})
		if !stringKeys {
			e.astMembers = e.astMembers[:start]
			return appendString(append(buf, 'X'), v.String())
		}
		n := len(e.astMembers) - start
		slices.SortFunc(e.astMembers[start:], func(a, b astMember) int { return strings.Compare(a.key, b.key) })
		buf = append(buf, '{')
		for i := start; i < start+n; i++ {
			m := e.astMembers[i]
			buf = e.AppendAST(appendString(buf, m.key), m.value)
		}
		e.astMembers = e.astMembers[:start]
		return append(buf, '}')
	}
	return appendString(append(buf, 'X'), v.String())
}

func appendBool(buf []byte, b bool) []byte {
	if b {
		return append(buf, 't')
	}
	return append(buf, 'f')
}

func appendString(buf []byte, s string) []byte {
	buf = strconv.AppendInt(append(buf, 's'), int64(len(s)), 10)
	return append(append(buf, ':'), s...)
}

func appendNumber(buf []byte, text string) []byte {
	return append(append(append(buf, 'n'), text...), ';')
}
