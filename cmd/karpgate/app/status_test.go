package app

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestClusterCommandsRefuseUnusableInvocations(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	tests := []struct {
		name    string
		args    []string
		code    int
		wantErr string
	}{
		{"--at is not RFC 3339", []string{"status", "--at", "monday 9am"}, ExitUsage, `--at "monday 9am": want an RFC 3339 time`},
		{"unknown output", []string{"status", "-o", "yaml", "--kubeconfig", missing}, ExitUsage, `--output "yaml": use table or json`},
		{"missing kubeconfig", []string{"status", "--kubeconfig", missing}, ExitUsage, "reading kubeconfig"},
		{"status: bad display zone", []string{"status", "--timezone", "Paris", "--kubeconfig", missing}, ExitUsage, `--timezone: "Paris" is not a time zone karpgate knows`},
		{"resume needs NodePools", []string{"resume"}, ExitUsage, "choose the NodePools one way: name them, or --all, or --selector"},
		{"resume one way only", []string{"resume", "a", "--all"}, ExitUsage, "choose the NodePools one way"},
		{"resume with a missing kubeconfig", []string{"resume", "default", "--kubeconfig", missing}, ExitUsage, "reading kubeconfig"},
		{"freeze needs NodePools", []string{"freeze", "--reason", "x"}, ExitUsage, "choose the NodePools one way"},
		{"freeze needs a reason", []string{"freeze", "--all"}, ExitUsage, "--reason is required"},
		{"freeze with a bad selector", []string{"freeze", "--selector", "team in (a", "--reason", "x"}, ExitUsage, `--selector "team in (a"`},
		{"explain needs a target", []string{"explain", "ip-10-0-1-2"}, ExitUsage, `name a NodeClaim or a Node as nodeclaim/NAME or node/NAME`},
		{"explain knows two kinds", []string{"explain", "pod/x"}, ExitUsage, `"pod" is neither nodeclaim nor node`},
		{"explain output", []string{"explain", "node/x", "-o", "yaml"}, ExitUsage, `--output "yaml": use text or json`},
		{"explain --at", []string{"explain", "node/x", "--at", "noon"}, ExitUsage, `--at "noon": want an RFC 3339 time`},
		{"explain with a missing kubeconfig", []string{"explain", "node/x", "--kubeconfig", missing}, ExitUsage, "reading kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Execute(tt.args, nil, &out, &errOut); code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errOut.String())
			}
			if !strings.Contains(errOut.String(), tt.wantErr) {
				t.Errorf("stderr %q lacks %q", errOut.String(), tt.wantErr)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out.String())
			}
		})
	}
}
