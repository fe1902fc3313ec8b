// Package treepatch applies RFC 6902 JSON patches to a decoded JSON tree
// (map[string]any, []any and scalars, as encoding/json decodes them) the way
// gopkg.in/evanphx/json-patch.v4 applies them to bytes. That library is what
// the API server uses on a mutating webhook's answer, so a patch that
// applies here applies there, with the same result.
//
// It exists so that the mutating webhook can check each rule's patch
// against the object it already decoded, without encoding the object and
// decoding it again for every patch. It does only what that needs: add,
// remove, replace and test on paths whose array indexes are written the
// canonical way. Anything else (move, copy, the whole-document path "",
// indexes such as "-1" or "01" that v4 reads in its own way, comparisons
// where v4 would panic) is refused with ErrUnsupported, and the caller
// falls back to the library itself.
//
// Numbers are compared by the JSON text encoding/json writes for them, as
// v4 compares the API server's encoding. One value cannot be told apart in
// a decoded object: the API server encodes a float -0 (sent as "-0.0") as
// "-0", which conversion.DecodeObject reads as the integer 0, so a test of
// it against 0 or -0 may be decided otherwise than by the API server.
// Karpenter's kinds have no floating-point fields, and no built-in rule
// tests a number.
//
// The tree passed in is never changed: every container on an operation's
// path is copied, and the result shares the rest with the input.
package treepatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Operation is one RFC 6902 operation. Value is written for add, replace
// and test; nil is JSON null.
type Operation struct {
	Op    string
	Path  string
	Value any
}

// ErrUnsupported marks a patch this package does not apply; the caller
// applies it with json-patch v4 instead.
var ErrUnsupported = errors.New("not applied in the decoded tree")

// Apply returns doc with ops applied in order. An error names the
// operation that did not apply; doc is unchanged either way.
func Apply(doc map[string]any, ops []Operation) (map[string]any, error) {
	var root any = doc
	for i, op := range ops {
		next, err := applyOne(root, op)
		if err != nil {
			return nil, fmt.Errorf("operation %d (%s %s): %w", i, op.Op, op.Path, err)
		}
		root = next
	}
	// Every operation keeps the root a map: the only path that could
	// replace it, "", is refused.
	return root.(map[string]any), nil
}

func applyOne(root any, op Operation) (any, error) {
	switch op.Op {
	case "add", "remove", "replace", "test":
	default:
		return nil, fmt.Errorf("op %q: %w", op.Op, ErrUnsupported)
	}
	if !strings.HasPrefix(op.Path, "/") {
		// v4 ignores the first segment of a path without a leading "/",
		// and treats "" as the whole document; neither comes from a rule.
		return nil, fmt.Errorf("path %q does not start with /: %w", op.Path, ErrUnsupported)
	}
	p := newPointer(op.Path)
	if op.Op == "test" {
		parent, err := p.find(root)
		if err != nil {
			return nil, err
		}
		return root, p.test(parent, op.Value)
	}
	return p.update(root, 0, op)
}

// pointer is a JSON pointer read into its member names, which keeps what
// it was written as for errors.
type pointer struct {
	tokens  []string
	written []string
}

func newPointer(path string) pointer {
	written := strings.Split(path[1:], "/")
	tokens := make([]string, len(written))
	for i, t := range written {
		tokens[i] = decodeToken(t)
	}
	return pointer{tokens: tokens, written: written}
}

// upTo is the pointer to the member named by tokens[i].
func (p pointer) upTo(i int) string {
	return "/" + strings.Join(p.written[:i+1], "/")
}

func (p pointer) last() int { return len(p.tokens) - 1 }

// decodeToken undoes RFC 6901's escapes in one pass, as v4 does; a "~" not
// followed by 0 or 1 stays as it is, as it does there.
var tokenDecoder = strings.NewReplacer("~1", "/", "~0", "~")

func decodeToken(t string) string {
	if !strings.Contains(t, "~") {
		return t
	}
	return tokenDecoder.Replace(t)
}

// child is the member of node named by tokens[i], as v4 walks a path: it
// must be there, and be an object or an array.
func (p pointer) child(node any, i int) (any, error) {
	var c any
	switch n := node.(type) {
	case map[string]any:
		var ok bool
		if c, ok = n[p.tokens[i]]; !ok {
			return nil, fmt.Errorf("%s does not exist", p.upTo(i))
		}
	case []any:
		at, err := p.index(n, i, len(n))
		if err != nil {
			return nil, err
		}
		c = n[at]
	}
	switch c.(type) {
	case map[string]any, []any:
		return c, nil
	case nil:
		return nil, fmt.Errorf("%s is null, so it has no members", p.upTo(i))
	default:
		return nil, fmt.Errorf("%s is a %T, not an object or an array, so it has no members", p.upTo(i), c)
	}
}

// find walks to the container the last token is in. The document's root
// is an object, and child only returns objects and arrays.
func (p pointer) find(node any) (any, error) {
	for i := range p.last() {
		c, err := p.child(node, i)
		if err != nil {
			return nil, err
		}
		node = c
	}
	return node, nil
}

// update returns node, the container tokens[i] names a member of, with op
// made, copying each container on the way so that node itself is left as
// it was.
func (p pointer) update(node any, i int, op Operation) (any, error) {
	if i == p.last() {
		return p.change(node, op)
	}
	c, err := p.child(node, i)
	if err != nil {
		return nil, err
	}
	next, err := p.update(c, i+1, op)
	if err != nil {
		return nil, err
	}
	switch n := node.(type) {
	case map[string]any:
		out := cloneMap(n)
		out[p.tokens[i]] = next
		return out, nil
	default: // child succeeded, so n is an array and the index is good
		out := slices.Clone(n.([]any))
		at, _ := p.index(out, i, len(out))
		out[at] = next
		return out, nil
	}
}

// change makes op on the last member of the pointer, in a copy of its
// container.
func (p pointer) change(container any, op Operation) (any, error) {
	i := p.last()
	switch n := container.(type) {
	case map[string]any:
		key := p.tokens[i]
		out := cloneMap(n)
		switch op.Op {
		case "add", "replace":
			// v4's replace reads a missing key as null rather than as an
			// error, so on an object it adds, as add does.
			out[key] = op.Value
		case "remove":
			if _, ok := n[key]; !ok {
				return nil, fmt.Errorf("%s does not exist", p.upTo(i))
			}
			delete(out, key)
		}
		return out, nil
	default: // find and child return only objects and arrays
		a := n.([]any)
		switch op.Op {
		case "add":
			if p.tokens[i] == "-" {
				return append(slices.Clip(a), op.Value), nil
			}
			at, err := p.index(a, i, len(a)+1)
			if err != nil {
				return nil, err
			}
			return slices.Insert(slices.Clone(a), at, op.Value), nil
		case "replace":
			at, err := p.index(a, i, len(a))
			if err != nil {
				return nil, err
			}
			out := slices.Clone(a)
			out[at] = op.Value
			return out, nil
		default: // remove
			at, err := p.index(a, i, len(a))
			if err != nil {
				return nil, err
			}
			return slices.Delete(slices.Clone(a), at, at+1), nil
		}
	}
}

// cloneMap copies m, and makes a map of a nil one, which maps.Clone keeps
// nil.
func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	maps.Copy(out, m)
	return out
}

// index reads tokens[i] as an index of array a below limit. Only the
// canonical decimal form is read here: v4 also takes "-1" (from the end),
// "+1" and "01", which no rule writes.
func (p pointer) index(a []any, i, limit int) (int, error) {
	token := p.tokens[i]
	if token == "" || (len(token) > 1 && token[0] == '0') {
		return 0, fmt.Errorf("array index %q in %s: %w", token, p.upTo(i), ErrUnsupported)
	}
	for _, r := range token {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("array index %q in %s: %w", token, p.upTo(i), ErrUnsupported)
		}
	}
	at, err := strconv.Atoi(token)
	if err != nil || at >= limit {
		return 0, fmt.Errorf("%s is past the end of an array of %d", p.upTo(i), len(a))
	}
	return at, nil
}

// test compares the last member of the pointer with want as v4 does. A
// missing member and null are the same there, and only null equals them.
func (p pointer) test(container any, want any) error {
	i := p.last()
	var got any
	switch n := container.(type) {
	case map[string]any:
		got = n[p.tokens[i]]
	case []any:
		at, err := p.index(n, i, len(n))
		if err != nil {
			return err
		}
		got = n[at]
	}
	same := got == nil && want == nil
	if got != nil && want != nil {
		var err error
		if same, err = equal(got, want); err != nil {
			return err
		}
	}
	if !same {
		return fmt.Errorf("test failed: %s does not hold the value the patch expects there", p.upTo(i))
	}
	return nil
}

// equal is v4's comparison: objects and arrays member by member, anything
// else by its JSON text. The API server encodes the object with
// encoding/json, and the patch is encoded the same way, so that text is
// what json.Marshal writes.
func equal(a, b any) (bool, error) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false, nil
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok {
				return false, nil
			}
			if xv == nil && yv == nil {
				// v4 tells a null an operation added from a null it
				// decoded, and only the second equals null here.
				return false, fmt.Errorf("null member %q in a compared object: %w", k, ErrUnsupported)
			}
			if xv == nil || yv == nil {
				return false, nil
			}
			if same, err := equal(xv, yv); err != nil || !same {
				return false, err
			}
		}
		return true, nil
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false, nil
		}
		for i := range x {
			if x[i] == nil || y[i] == nil {
				// v4 dereferences a null array member and panics.
				return false, fmt.Errorf("null in a compared array: %w", ErrUnsupported)
			}
			if same, err := equal(x[i], y[i]); err != nil || !same {
				return false, err
			}
		}
		return true, nil
	}
	switch b.(type) {
	case map[string]any, []any:
		return false, nil
	}
	at, err := json.Marshal(a)
	if err != nil {
		return false, fmt.Errorf("%w: %w", err, ErrUnsupported)
	}
	bt, err := json.Marshal(b)
	if err != nil {
		return false, fmt.Errorf("%w: %w", err, ErrUnsupported)
	}
	return bytes.Equal(at, bt), nil
}
