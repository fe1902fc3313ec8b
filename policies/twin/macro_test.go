package twin

import (
	"strings"
	"testing"
)

func TestExpandWritesHelpersOut(t *testing.T) {
	helpers, err := parseHelpers("lib.cel", `// a comment
twice(a) := a + a
pair(a, b) := [a, b]
mapped(l) := l.map(_x, _x + 1)
shared([]) items(x) := x.items
`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, src, want string
	}{
		{"a name argument is written where the parameter was", "@twice(n)", "((n) + (n))"},
		{"an expensive argument read twice is bound once", "@twice(f(y))", "([f(y)].map(_a_arg_1, _a_arg_1 + _a_arg_1)[0])"},
		{"string literals are left alone", "'@twice(n)' + @pair('a, b', 'c')", "'@twice(n)' + ([('a, b'), ('c')])"},
		{"nested calls", "@pair(@twice(1), 2)", "([(((1) + (1))), (2)])"},
		{"the helper's own variables cannot capture the caller's", "@mapped(_x)", "((_x).map(_x_1, _x_1 + 1))"},
		{"a shared helper of the object judged reads its variable", "@items(o) + @items(object) + @items(oldObject)", "variables.items[side] + variables.items[0] + variables.items[1]"},
		{"a shared helper of anything else is written out", "@items(y)", "((y).items)"},
		{"a field named like a parameter is a field", "@mapped(a.l)", "((a.l).map(_x_1, _x_1 + 1))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := (&expander{helpers: helpers}).expand(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(strings.Fields(got), " ") != tt.want {
				t.Fatalf("got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestExpandErrorsNameTheHelper(t *testing.T) {
	helpers, err := parseHelpers("lib.cel", "one(a) := a\nloop(a) := @loop(a)\n")
	if err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]string{
		"@nope(1)":   "@nope is not a helper",
		"@one(1, 2)": "@one takes 1 arguments (a), got 2",
		"@one(1":     "unbalanced parentheses",
		"@one":       "@one must be called with parentheses",
		"@loop(1)":   "more than 20 deep",
	} {
		_, err := (&expander{helpers: helpers}).expand(src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one with %q", src, err, want)
		}
	}
}

func TestParseHelpersRefusesWhatIsNotAHelper(t *testing.T) {
	for src, want := range map[string]string{
		"a := 1\n":                     `"a := 1" is outside any helper`,
		"x(a) := a\nx(b) := b\n":       "helper x is defined twice",
		"shared([]) two(a, b) := a\n":  "shared helper two must take one object",
		"shared() one(x) := x.items\n": "shared helper one must take one object",
	} {
		if _, err := parseHelpers("lib.cel", src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one with %q", src, err, want)
		}
	}
}
