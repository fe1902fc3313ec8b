package twin

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// CEL has no functions of its own, so the twins share helpers the way
// lib.rego shares rules: a twin calls @name(arg, ...) and the expander
// writes the helper's body in its place, each parameter replaced by its
// argument in parentheses. Helpers come from policies/rules/lib/lib.cel,
// written in CEL, and from generated.go, written by Go where the CEL would
// be a table (Go's %q, strings.ToLower, strings.Fields).
//
// A helper's own comprehension variables start with _ and are renamed at
// every expansion, so that an argument that names a variable of the caller
// (t in @aliasOf(t)) is never captured by the helper's.

// helper is one @name(...) definition.
type helper struct {
	name   string
	params []string
	body   string
	// shared: the helper takes one object, and its values for the
	// request's two objects are a policy variable (SharedVariables);
	// a call on o, object or oldObject reads it, and none its null value
	// stands for an absent object.
	shared bool
	none   string
}

// expander writes out helper calls.
type expander struct {
	helpers map[string]helper
	n       int // expansions so far: the suffix of renamed variables
	// inline writes shared helpers out like any other, to make the
	// shared variables themselves.
	inline bool
}

var helperHead = regexp.MustCompile(`^(?:shared\((.*)\)\s+)?([A-Za-z][A-Za-z0-9]*)\(([A-Za-z0-9_, ]*)\)\s*:=\s*`)

// sharedObjects are the arguments of a shared helper call that read its
// variable, and the index of their value in it: o is the object a twin
// judges, side (0 for the request's object, 1 for the old object) says
// which.
var sharedObjects = map[string]string{"o": "side", "object": "0", "oldObject": "1"}

// parseHelpers reads a library of helper definitions: a line
// `name(a, b) := <CEL>` starts one, which runs to the next definition;
// lines starting with // are comments.
func parseHelpers(file, src string) (map[string]helper, error) {
	out := map[string]helper{}
	var cur *helper
	var body strings.Builder
	flush := func() {
		if cur != nil {
			cur.body = strings.TrimSpace(body.String())
			out[cur.name] = *cur
		}
		body.Reset()
	}
	for i, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "//") {
			continue
		}
		if m := helperHead.FindStringSubmatch(line); m != nil {
			flush()
			if _, dup := out[m[2]]; dup {
				return nil, fmt.Errorf("%s:%d: helper %s is defined twice", file, i+1, m[2])
			}
			h := helper{name: m[2], shared: strings.HasPrefix(line, "shared("), none: m[1]}
			for _, p := range strings.Split(m[3], ",") {
				if p = strings.TrimSpace(p); p != "" {
					h.params = append(h.params, p)
				}
			}
			if h.shared && (len(h.params) != 1 || h.none == "") {
				return nil, fmt.Errorf("%s:%d: shared helper %s must take one object and say its value for none: shared(<none>) %s(x) := <expression>", file, i+1, h.name, h.name)
			}
			cur = &h
			body.WriteString(line[len(m[0]):])
			body.WriteString("\n")
			continue
		}
		if cur == nil {
			if trimmed != "" {
				return nil, fmt.Errorf("%s:%d: %q is outside any helper; start one with name(params) := <CEL>", file, i+1, trimmed)
			}
			continue
		}
		body.WriteString(line)
		body.WriteString("\n")
	}
	flush()
	return out, nil
}

// expand writes out every helper call in src, recursively.
func (x *expander) expand(src string) (string, error) {
	return x.expandDepth(src, 0)
}

const maxExpansionDepth = 20

func (x *expander) expandDepth(src string, depth int) (string, error) {
	if depth > maxExpansionDepth {
		return "", fmt.Errorf("helpers call each other more than %d deep: is one recursive?", maxExpansionDepth)
	}
	var b strings.Builder
	for i := 0; i < len(src); {
		if end, ok := literalEnd(src, i); ok {
			b.WriteString(src[i:end])
			i = end
			continue
		}
		if strings.HasPrefix(src[i:], "//") {
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		}
		if src[i] != '@' {
			b.WriteByte(src[i])
			i++
			continue
		}
		name := identAt(src, i+1)
		h, ok := x.helpers[name]
		if !ok {
			return "", fmt.Errorf("@%s is not a helper", name)
		}
		open := i + 1 + len(name)
		if open >= len(src) || src[open] != '(' {
			return "", fmt.Errorf("@%s must be called with parentheses", name)
		}
		args, end, err := splitArgs(src, open)
		if err != nil {
			return "", fmt.Errorf("@%s: %w", name, err)
		}
		if len(args) != len(h.params) {
			return "", fmt.Errorf("@%s takes %d arguments (%s), got %d", name, len(h.params), strings.Join(h.params, ", "), len(args))
		}
		if index, ok := sharedObjects[strings.Trim(strings.Join(args, ","), "() ")]; ok && h.shared && !x.inline {
			b.WriteString("variables." + h.name + "[" + index + "]")
			i = end
			continue
		}
		for j, a := range args {
			if args[j], err = x.expandDepth(a, depth+1); err != nil {
				return "", err
			}
		}
		body, err := x.expandDepth(x.instantiate(h, args), depth+1)
		if err != nil {
			return "", fmt.Errorf("in @%s: %w", name, err)
		}
		b.WriteString("(")
		b.WriteString(body)
		b.WriteString(")")
		i = end
	}
	return b.String(), nil
}

// instantiate substitutes args for h's parameters and renames its own
// _variables, outside string literals. An argument the body reads more
// than once is evaluated once: the body is wrapped in a comprehension that
// binds it ([arg].map(_a, body)[0]), so that nested helpers do not write
// out the same expression again and again (the API server refuses an
// expression over 100,000 code points).
func (x *expander) instantiate(h helper, args []string) string {
	x.n++
	suffix := strconv.Itoa(x.n)
	uses := make([]int, len(h.params))
	walkIdents(h.body, func(id string, selected bool) {
		if k := paramIndex(h.params, id); k >= 0 && !selected {
			uses[k]++
		}
	})
	names := make([]string, len(args))
	var binds []int
	for k, a := range args {
		names[k] = "(" + a + ")"
		if uses[k] > 1 && !simpleArg.MatchString(a) {
			names[k] = "_" + h.params[k] + "_arg_" + suffix
			binds = append(binds, k)
		}
	}
	var b strings.Builder
	src := h.body
	for i := 0; i < len(src); {
		if end, ok := literalEnd(src, i); ok {
			b.WriteString(src[i:end])
			i = end
			continue
		}
		id := identAt(src, i)
		if id == "" {
			b.WriteByte(src[i])
			i++
			continue
		}
		selected := i > 0 && src[i-1] == '.' // a field name, not a variable
		switch k := paramIndex(h.params, id); {
		case !selected && k >= 0:
			b.WriteString(names[k])
		case !selected && strings.HasPrefix(id, "_"):
			b.WriteString(id + "_" + suffix)
		default:
			b.WriteString(id)
		}
		i += len(id)
	}
	body := b.String()
	for j := len(binds) - 1; j >= 0; j-- {
		k := binds[j]
		body = "[" + args[k] + "].map(" + names[k] + ", " + body + ")[0]"
	}
	return body
}

// simpleArg is an argument as cheap to repeat as to bind: a name, or a
// string or number literal.
var simpleArg = regexp.MustCompile(`^\(*([A-Za-z_][A-Za-z0-9_]*|'[^'\\]*'|[0-9]+)\)*$`)

// walkIdents calls f for each identifier of src outside string literals,
// saying whether it follows a dot (a field name).
func walkIdents(src string, f func(id string, selected bool)) {
	for i := 0; i < len(src); {
		if end, ok := literalEnd(src, i); ok {
			i = end
			continue
		}
		id := identAt(src, i)
		if id == "" {
			i++
			continue
		}
		f(id, i > 0 && src[i-1] == '.')
		i += len(id)
	}
}

func paramIndex(params []string, id string) int {
	for i, p := range params {
		if p == id {
			return i
		}
	}
	return -1
}

// identAt is the identifier starting at src[i], or "".
func identAt(src string, i int) string {
	if i >= len(src) || !isIdentStart(src[i]) {
		return ""
	}
	if i > 0 && isIdentPart(src[i-1]) {
		return "" // inside a longer identifier or a number
	}
	j := i
	for j < len(src) && (isLetter(src[j]) || isDigit(src[j]) || src[j] == '_') {
		j++
	}
	return src[i:j]
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// isIdentStart and isIdentPart say whether c may start or continue a CEL
// identifier.
func isIdentStart(c byte) bool { return isLetter(c) || c == '_' }
func isIdentPart(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// literalEnd reports whether a CEL string literal starts at src[i] (quoted
// with ' or ", optionally raw with an r prefix) and where it ends.
func literalEnd(src string, i int) (int, bool) {
	raw := false
	j := i
	if (src[j] == 'r' || src[j] == 'R') && j+1 < len(src) && (src[j+1] == '\'' || src[j+1] == '"') && (j == 0 || !isIdentPart(src[j-1])) {
		raw = true
		j++
	}
	if src[j] != '\'' && src[j] != '"' {
		return 0, false
	}
	q := src[j]
	for k := j + 1; k < len(src); k++ {
		switch {
		case src[k] == '\\' && !raw:
			k++
		case src[k] == q:
			return k + 1, true
		}
	}
	return len(src), true // unterminated: CEL reports it
}

// splitArgs reads the arguments of a call whose parenthesis opens at
// src[open]: top-level commas separate them.
func splitArgs(src string, open int) (args []string, end int, err error) {
	depth := 0
	start := open + 1
	for i := open; i < len(src); {
		if e, ok := literalEnd(src, i); ok {
			i = e
			continue
		}
		switch src[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				if a := strings.TrimSpace(src[start:i]); a != "" || len(args) > 0 {
					args = append(args, a)
				}
				return args, i + 1, nil
			}
		case ',':
			if depth == 1 {
				args = append(args, strings.TrimSpace(src[start:i]))
				start = i + 1
			}
		}
		i++
	}
	return nil, 0, fmt.Errorf("unbalanced parentheses")
}
