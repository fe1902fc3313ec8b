package policies

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/policies/sandbox"
)

// userRule writes a one-rule policy folder whose violation holds when
// body does, and returns the folder.
func userRule(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	src := `# METADATA
# title: Expensive
# custom:
#   id: ACME900
#   severity: deny
#   kinds: [NodePool, EC2NodeClass]
package karpgate.rules.acme_expensive

violation contains {"msg": "expensive"} if {
	` + body + `
}
`
	if err := os.WriteFile(filepath.Join(dir, "expensive.rego"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestExpensivePoliciesAreRefusedAtLoad: a policy that runs past its limits
// on an ordinary object never serves a request; the error names the rule,
// the file and what ran out.
func TestExpensivePoliciesAreRefusedAtLoad(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"a huge numbers.range", `count(numbers.range(1, 1000000000)) > 0`,
			[]string{"numbers.range would produce about 8000000000 bytes, over the 1048576-byte limit for one builtin call", "ACME900"}},
		{"a loop past the step budget", `count([[i, j] | some i in numbers.range(1, 2000); some j in numbers.range(1, 2000)]) > 0`,
			[]string{"they took more than 250000 evaluation steps", "rule ACME900", "expensive.rego"}},
		{"sprintf padding", `sprintf("%0999999999d", [1]) != ""`, []string{"sprintf would produce about 1000000015 bytes"}},
		{"a shift to a billion bits", `bits.lsh(1, 1000000000) > 0`, []string{"bits.lsh would produce"}},
		{"a string repeated through concat", `s := concat("", [sprintf("%0100000d", [1]) | some i in numbers.range(1, 100)]); s != ""`, []string{"concat would produce about"}},
		{"replace between every character", `s := sprintf("%0100000d", [1]); replace(s, "", s) != ""`, []string{"replace would produce"}},
		{"marshalling a shared value many times", `s := sprintf("%0100000d", [1]); json.marshal([s | some i in numbers.range(1, 100)]) != ""`, []string{"json.marshal would produce"}},
		{"a copy in a loop", `s := sprintf("%0100000d", [1]); count([upper(s) | some i in numbers.range(1, 1000)]) > 0`, []string{"its builtins made more than 16777216 bytes in all (upper among them)"}},
		{"regex.replace echoing each match", `s := sprintf("%0100000d", [1]); regex.replace(s, "0", "$0$0$0$0$0$0$0$0$0$0$0$0") != ""`, []string{"regex.replace would produce"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), Options{PolicyDirs: []string{userRule(t, tt.body)}})
			if err == nil || !errors.Is(err, sandbox.ErrTooExpensive) {
				t.Fatalf("New: %v, want ErrTooExpensive", err)
			}
			for _, want := range append(tt.want, "refusing the policies: on a sample") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
		})
	}
}
