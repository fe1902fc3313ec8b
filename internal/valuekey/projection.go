package valuekey

import "github.com/open-policy-agent/opa/v1/ast"

// Projection reduces a Rego object to some of its fields, and names the
// reduced object by a key without building it: memo lookups, which mostly
// hit, then cost a walk and no allocation but the key. The key can be made
// from the Go values a request decodes to as well (AppendGoKey), the same
// key as from their Rego conversion (see Encoder), so that a request
// whose every rule is memoized is never converted at all.
//
// A value on a path that is not an object is kept whole, so rules see the
// same type errors; exists paths only say whether a field is defined and
// of what type (an object there becomes {}).
type Projection struct {
	keep, exists           [][]*ast.Term
	keepNames, existsNames [][]string
}

// NewProjection keeps the keep paths whole and the exists paths as whether
// they are defined and of what type.
func NewProjection(keep, exists [][]string) Projection {
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
	return Projection{keep: terms(keep), exists: terms(exists), keepNames: keep, existsNames: exists}
}

// AppendKey appends to buf a text that two values share exactly when
// Reduce gives them equal results.
func (p Projection) AppendKey(enc *Encoder, buf []byte, v ast.Value) []byte {
	for _, path := range p.keep {
		buf = appendPathKey(enc, append(buf, 0), v, path, true)
	}
	buf = append(buf, 1)
	for _, path := range p.exists {
		buf = appendPathKey(enc, append(buf, 0), v, path, false)
	}
	return buf
}

func appendPathKey(enc *Encoder, buf []byte, v ast.Value, path []*ast.Term, whole bool) []byte {
	for _, key := range path {
		obj, isObject := v.(ast.Object)
		if !isObject {
			return enc.AppendAST(append(buf, '!'), v)
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
	return enc.AppendAST(append(buf, '='), v)
}

// AppendGoKey is AppendKey of the Rego conversion of v, made from v. ok is
// false when v holds values whose conversion the key cannot mirror (see
// Encoder.AppendGo); the caller then converts v and uses AppendKey.
func (p Projection) AppendGoKey(enc *Encoder, buf []byte, v map[string]any) (out []byte, ok bool) {
	for _, path := range p.keepNames {
		if buf, ok = appendGoPathKey(enc, append(buf, 0), v, path, true); !ok {
			return buf, false
		}
	}
	buf = append(buf, 1)
	for _, path := range p.existsNames {
		if buf, ok = appendGoPathKey(enc, append(buf, 0), v, path, false); !ok {
			return buf, false
		}
	}
	return buf, true
}

func appendGoPathKey(enc *Encoder, buf []byte, v any, path []string, whole bool) ([]byte, bool) {
	for _, key := range path {
		obj, isObject := v.(map[string]any)
		if !isObject {
			if _, otherMap := v.(map[string]string); otherMap {
				return buf, false // an object in Rego, but not walked here
			}
			return enc.AppendGo(append(buf, '!'), v)
		}
		child, present := obj[key]
		if !present {
			return append(buf, '-'), true
		}
		v = child
	}
	switch v.(type) {
	case map[string]any, map[string]string:
		if !whole {
			return append(buf, '{', '}'), true
		}
	}
	return enc.AppendGo(append(buf, '='), v)
}

// Reduce builds the reduced object.
func (p Projection) Reduce(v ast.Value) ast.Object {
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
