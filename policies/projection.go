package policies

import (
	"github.com/open-policy-agent/opa/v1/ast"
)

// projection reduces a Rego object to some of its fields, and names the
// reduced object by a key without building it: memo lookups, which mostly
// hit, then cost a walk and no allocation but the key.
//
// A value on a path that is not an object is kept whole, so rules see the
// same type errors; exists paths only say whether a field is defined (an
// object there becomes {}).
type projection struct {
	keep, exists [][]*ast.Term
}

func newProjection(keep, exists [][]string) projection {
	terms := func(paths [][]string) [][]*ast.Term {
		out := make([][]*ast.Term, len(paths))
		for i, p := range paths {
			out[i] = make([]*ast.Term, len(p))
			for j, k := range p {
				out[i][j] = ast.StringTerm(k)
			}
		}
		return out
	}
	return projection{keep: terms(keep), exists: terms(exists)}
}

// appendKey appends to buf a text that two values share exactly when
// reduce gives them equal results.
func (p projection) appendKey(buf []byte, v ast.Value) []byte {
	for _, path := range p.keep {
		buf = appendPathKey(append(buf, 0), v, path, true)
	}
	buf = append(buf, 1)
	for _, path := range p.exists {
		buf = appendPathKey(append(buf, 0), v, path, false)
	}
	return buf
}

func appendPathKey(buf []byte, v ast.Value, path []*ast.Term, whole bool) []byte {
	for _, key := range path {
		obj, isObject := v.(ast.Object)
		if !isObject {
			return appendText(append(buf, '!'), v)
		}
		t := obj.Get(key)
		if t == nil {
			return append(buf, '-')
		}
		v = t.Value
	}
	if _, isObject := v.(ast.Object); !whole && isObject {
		return append(buf, '{', '}')
	}
	return appendText(append(buf, '='), v)
}

// appendText appends Rego's text of v, which is canonical (object keys
// sorted) and unambiguous.
func appendText(buf []byte, v ast.Value) []byte {
	if a, ok := v.(interface{ AppendText([]byte) ([]byte, error) }); ok {
		if out, err := a.AppendText(buf); err == nil {
			return out
		}
	}
	return append(buf, v.String()...)
}

// reduce builds the reduced object.
func (p projection) reduce(v ast.Value) ast.Object {
	out := ast.NewObject()
	obj, isObject := v.(ast.Object)
	if !isObject {
		return out
	}
	for _, path := range p.keep {
		reduceInto(out, obj, path, true)
	}
	for _, path := range p.exists {
		reduceInto(out, obj, path, false)
	}
	return out
}

func reduceInto(out, in ast.Object, path []*ast.Term, whole bool) {
	key := path[0]
	v := in.Get(key)
	if v == nil {
		return
	}
	child, isObject := v.Value.(ast.Object)
	switch {
	case !isObject:
		out.Insert(key, v)
		return
	case len(path) == 1 && whole:
		out.Insert(key, v)
		return
	}
	var sub ast.Object
	switch existing := out.Get(key); existing {
	case nil:
		sub = ast.NewObject()
		out.Insert(key, ast.NewTerm(sub))
	case v:
		return // kept whole already: never write into the input
	default:
		sub = existing.Value.(ast.Object)
	}
	if len(path) > 1 {
		reduceInto(sub, child, path[1:], whole)
	}
}
