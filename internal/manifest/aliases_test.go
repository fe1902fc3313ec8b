package manifest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// aliasBomb is the shape the review reported: one large anchored mapping
// merged many times (1.8 MB; expanded, six billion nodes).
func aliasBomb(items, refs int) string {
	var b strings.Builder
	b.WriteString("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: bomb\nspec:\n  template:\n    metadata:\n      labels:\n        <<: [&a {")
	for i := range items {
		fmt.Fprintf(&b, "k%d: v,", i)
	}
	b.WriteString("}")
	b.WriteString(strings.Repeat(", *a", refs))
	b.WriteString("]\n")
	return b.String()
}

// laughs is the classic nested bomb: each level lists the previous one ten
// times, so nine levels stand for a billion scalars.
func laughs(levels int) string {
	var b strings.Builder
	b.WriteString("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: laughs\nspec:\n  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	return b.String()
}

func TestAliasBombsAreRefusedWithTheirLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"one anchor merged many times", aliasBomb(150_000, 40_000), "<stdin>:9: document 1, column 1538923: the YAML alias *a takes"},
		{"anchors of anchors", laughs(9), "<stdin>:11: document 1, column 47: the YAML alias *l4 takes"},
		{"alias inside its own anchor", "kind: NodePool\nspec: &s {a: *s}\n", "refers to a node that contains it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Walk([]string{"-"}, strings.NewReader(tt.in), func(*Document) error { return nil })
			var pe *ParseError
			var ae *AliasError
			if !errors.As(err, &pe) || !errors.As(err, &ae) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an alias error containing %q", err, tt.want)
			}
		})
	}
}

func TestOrdinaryAliasesStillExpand(t *testing.T) {
	in := laughs(3) + "  merged:\n    <<: &base {a: 1, b: 2}\n    c: 3\n  again: *base\n"
	objs, err := ReadAll([]string{"-"}, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	spec := objs[0].Content["spec"].(map[string]any)
	if got := len(spec["l3"].([]any)); got != 10 {
		t.Errorf("l3 has %d items, want 10", got)
	}
	if again := spec["again"].(map[string]any); again["b"] != int64(2) {
		t.Errorf("again = %v, want the anchored mapping", again)
	}
}

func TestCheckAliasesCountsWhatAliasesAdd(t *testing.T) {
	// Aliases add 12,330 nodes to three levels of ten: *l0 ten times (11
	// nodes each), *l1 ten times (111 each), *l2 ten times (1,111 each).
	in := laughs(3)
	for _, tt := range []struct {
		limit int64
		ok    bool
	}{{12_330, true}, {12_329, false}} {
		doc, err := ParseDocument("x", 0, RawDocument{Bytes: []byte(in), StartLine: 1})
		if err != nil {
			t.Fatal(err)
		}
		err = CheckAliases(doc.Root, tt.limit)
		if (err == nil) != tt.ok {
			t.Errorf("limit %d: got %v, want ok=%v", tt.limit, err, tt.ok)
		}
	}
}

// FuzzParseDocumentWithAliases: whatever the aliases, parsing ends with a
// value or an error, never a panic or an expansion past the limit.
func FuzzParseDocumentWithAliases(f *testing.F) {
	f.Add(laughs(2))
	f.Add("a: &a {b: *a}\n")
	f.Add("<<: [&a {x: 1}, *a, *a]\n")
	f.Add("a: &a [*a]\n")
	f.Add("- &a x\n- *a\n- *b\n")
	f.Fuzz(func(t *testing.T, in string) {
		doc, err := ParseDocument("fuzz", 0, RawDocument{Bytes: []byte(in), StartLine: 1})
		if err != nil || doc.Root == nil {
			return
		}
		if err := CheckAliases(doc.Root, 0); err != nil {
			t.Fatalf("a parsed document fails the alias check afterwards: %v", err)
		}
	})
}
