package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	tests := []struct {
		args     []string
		wantCode int
		check    func(t *testing.T, stdout, stderr string)
	}{
		{[]string{"version"}, ExitOK, func(t *testing.T, stdout, _ string) {
			for _, want := range []string{"karpgate ", "commit:", "go:       go1.", "karpenter.sh/v1beta1 NodePool", "karpenter.k8s.aws/v1 EC2NodeClass", "CRDs:     Karpenter v1."} {
				if !strings.Contains(stdout, want) {
					t.Errorf("version output lacks %q:\n%s", want, stdout)
				}
			}
		}},
		{[]string{"version", "-o", "json"}, ExitOK, func(t *testing.T, stdout, _ string) {
			var got versionReport
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatal(err)
			}
			if len(got.KarpenterAPIs) != 6 || got.GoVersion == "" || got.Version == "" || got.CRDs.Module != "github.com/aws/karpenter-provider-aws" || got.CRDs.Version == "" {
				t.Errorf("incomplete report %+v", got)
			}
		}},
		{[]string{"version", "-o", "yaml"}, ExitUsage, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, `--output "yaml"`) {
				t.Errorf("stderr %q does not name the bad flag value", stderr)
			}
		}},
		{[]string{"version", "--cluster", "--kubeconfig", "testdata/serve/kubeconfig"}, ExitUsage, func(t *testing.T, stdout, stderr string) {
			if want := "reading the Karpenter CRDs of https://127.0.0.1:1: "; !strings.Contains(stderr, want) || stdout != "" {
				t.Errorf("an unreachable cluster: stdout %q, stderr %q; want only an error with %q", stdout, stderr, want)
			}
		}},
		{[]string{"version", "--cluster", "--kubeconfig", "testdata/no-such-kubeconfig"}, ExitUsage, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, "reading kubeconfig") {
				t.Errorf("stderr %q", stderr)
			}
		}},
		{[]string{"version", "--cluster", "--config", "testdata/no-such-karpgate.yaml", "--kubeconfig", "testdata/serve/kubeconfig"}, ExitUsage, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, "--config testdata/no-such-karpgate.yaml: no such file") {
				t.Errorf("stderr %q", stderr)
			}
		}},
		{[]string{"version", "--kubeconfig", "testdata/serve/kubeconfig"}, ExitUsage, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, "--kubeconfig is for --cluster") {
				t.Errorf("stderr %q", stderr)
			}
		}},
		{[]string{"version", "extra"}, ExitUsage, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, "unknown command") && !strings.Contains(stderr, "accepts 0 arg") {
				t.Errorf("stderr %q", stderr)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := Execute(tt.args, nil, &stdout, &stderr); code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.wantCode, stderr.String())
			}
			tt.check(t, stdout.String(), stderr.String())
		})
	}
}
