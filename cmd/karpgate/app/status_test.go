package app

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestStatusAndResumeRefuseUnusableInvocations(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	tests := []struct {
		name    string
		args    []string
		code    int
		wantErr string
	}{
		{"--at is not RFC 3339", []string{"status", "--at", "monday 9am"}, ExitUsage, `--at "monday 9am": not an RFC 3339 instant`},
		{"unknown output", []string{"status", "-o", "yaml", "--kubeconfig", missing}, ExitUsage, `--output "yaml": use table or json`},
		{"missing kubeconfig", []string{"status", "--kubeconfig", missing}, ExitUsage, "reading kubeconfig"},
		{"resume needs a NodePool", []string{"resume"}, ExitUsage, "accepts 1 arg(s)"},
		{"resume with a missing kubeconfig", []string{"resume", "default", "--kubeconfig", missing}, ExitUsage, "reading kubeconfig"},
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
