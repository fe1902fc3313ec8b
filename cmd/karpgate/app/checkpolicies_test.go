package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/internal/childproc"
	"github.com/karpgate/karpgate/policies/policywatch"
)

// With KARPGATE_TEST_AS_BINARY set, the test binary is karpgate itself,
// so that serve's policy check can run it as its child.
func TestMain(m *testing.M) {
	if os.Getenv("KARPGATE_TEST_AS_BINARY") != "" {
		os.Exit(Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func policyDir(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	src := "# METADATA\n# title: T\n# custom:\n#   id: ACME1\n#   severity: deny\n#   kinds: [NodePool]\npackage karpgate.rules.acme_t\n\nviolation contains {\"msg\": \"x\"} if {\n\t" + body + "\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "t.rego"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPolicyCheckRunsInAChild: serve's check of new policies runs this
// binary's check-policies in a child process; its verdict comes back with
// the reason, and a child past its memory limit is killed.
func TestPolicyCheckRunsInAChild(t *testing.T) {
	t.Setenv("KARPGATE_TEST_AS_BINARY", "1")
	tests := []struct {
		name, body string
		memory     int64
		want       string
	}{
		{"ordinary policy", `input.object.spec.weight > 100`, 256 << 20, ""},
		{"too expensive on the samples", `count(numbers.range(1, 1000000000)) > 0`, 256 << 20, "refusing the policies: on a sample NodePool"},
		{"a memory limit too small for anything", `input.object.spec.weight > 100`, 1 << 20, childproc.ErrOutOfMemory.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check, err := policyCheckInChild(tt.memory, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			err = check(context.Background(), policywatch.Options{ConfigPath: filepath.Join(t.TempDir(), "missing.yaml"), PolicyDirs: []string{policyDir(t, tt.body)}})
			if (tt.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}
