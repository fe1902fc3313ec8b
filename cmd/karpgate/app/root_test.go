package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestRunPointsAtTheDeveloperBinary: the shipped binary has no local
// cluster; `karpgate run` says where it is instead of "unknown command",
// and a binary that adds its own run (karpgate-dev) gets that one.
func TestRunPointsAtTheDeveloperBinary(t *testing.T) {
	code, _, stderr := run(t, "", "run", "--assets", "x")
	if code != ExitUsage || !strings.Contains(stderr, "make run") || !strings.Contains(stderr, "bin/karpgate-dev run") {
		t.Fatalf("exit %d, stderr %q; want %d and a pointer to make run", code, stderr, ExitUsage)
	}
	ran := false
	devRun := func(Streams) *cobra.Command {
		return &cobra.Command{Use: "run", RunE: func(*cobra.Command, []string) error { ran = true; return nil }}
	}
	var out, errOut bytes.Buffer
	if code := Execute([]string{"run"}, nil, &out, &errOut, devRun); code != ExitOK || !ran {
		t.Fatalf("with the developer's run: exit %d, ran %v, stderr %q", code, ran, errOut.String())
	}
}
