package app

import (
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/deploy"
)

func TestByteSizeFlag(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		printed string
		err     string
	}{
		{"3MiB", 3 << 20, "3MiB", ""},
		{"3Mi", 3 << 20, "3MiB", ""},
		{"512KiB", 512 << 10, "512KiB", ""},
		{"1000", 1000, "1000", ""},
		{"1G", 1e9, "1000000000", ""},
		{"0", 0, "", `"0" is not a size in bytes; write it like 3MiB or 3145728`},
		{"lots", 0, "", `"lots" is not a size in bytes`},
	}
	for _, tt := range tests {
		var b byteSize
		err := b.Set(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: got %v, want an error containing %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || int64(b) != tt.want || b.String() != tt.printed {
			t.Errorf("%q: got %d (%s) %v, want %d (%s)", tt.in, int64(b), b.String(), err, tt.want, tt.printed)
		}
	}
}

func TestServeRefusesBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--cert-dir", ""}, "--cert-dir is required"},
		{[]string{"--request-timeout", "30s"}, "--request-timeout 30s must be above 0 and below the webhooks' timeoutSeconds (at most 30s)"},
		{[]string{"--max-connections", "10"}, "--max-connections 10 must be at least --max-concurrent-requests 64"},
		{[]string{"--memory-limit", "lots"}, `"lots" is not a size in bytes`},
		{[]string{"--leader-election-lease-duration", "5s"}, "--leader-election-lease-duration 5s must be longer than --leader-election-renew-deadline 10s"},
		{[]string{"--max-concurrent-requests", "0"}, "--max-concurrent-requests must be at least 1"},
		{[]string{"--max-request-bytes", "-1"}, `"-1" is not a size in bytes`},
		{[]string{"--rollout-guard", "--rollout-guard-ready-timeout", "0s"}, "--rollout-guard-ready-timeout 0s must be positive"},
		{[]string{"--rollout-guard", "--rollout-guard-freeze-after", "-1"}, "--rollout-guard-freeze-after -1: write how many held NodePools trip the cluster-wide freeze"},
		{[]string{"--rollout-guard-freeze-after", "3"}, "--rollout-guard-freeze-after 3 needs --rollout-guard"},
		{[]string{"--trusted-source-cidrs", "10.0.16.0/28,0.0.0.0/0"}, `--trusted-source-cidrs: "0.0.0.0/0" holds every address, so every caller would be trusted as the API server`},
		{[]string{"--trusted-source-cidrs", "apiserver.internal"}, `--trusted-source-cidrs: "apiserver.internal" is not a CIDR or an address; write it like 10.0.16.0/28 or 10.0.16.7`},
		{[]string{"--audit-report-max-bytes", "2MiB"}, "--audit-report-max-bytes 2MiB: use 128KiB to 1536KiB"},
		{[]string{"--audit-report-max-bytes", "64KiB"}, "--audit-report-max-bytes 64KiB: use 128KiB to 1536KiB"},
		{[]string{"--audit-reports-per-object", "0"}, "--audit-reports-per-object 0: write how many ClusterReports an object's results may fill, at least 1"},
	}
	t.Setenv(deploy.MemoryLimitEnv, "")
	for _, tt := range tests {
		code, _, stderr := run(t, "", append([]string{"serve", "--kubeconfig", "testdata/serve/kubeconfig"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("serve %v: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, ExitUsage, tt.want)
		}
	}
}

func TestServeReadsTheMemoryLimitFromTheEnvironment(t *testing.T) {
	t.Setenv(deploy.MemoryLimitEnv, "a lot")
	code, _, stderr := run(t, "", "serve", "--kubeconfig", "testdata/serve/kubeconfig")
	if code != ExitUsage || !strings.Contains(stderr, `$KARPGATE_MEMORY_LIMIT: "a lot" is not a size in bytes; write it like 3MiB or 3145728 (or pass --memory-limit)`) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	t.Setenv(deploy.MemoryLimitEnv, "268435456") // 256Mi, as a resourceFieldRef writes it
	code, _, stderr = run(t, "", "serve", "--kubeconfig", "testdata/serve/kubeconfig", "--cert-dir", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "--memory-limit 256MiB leaves") {
		t.Fatalf("a 256Mi container was not refused: exit %d, stderr %q", code, stderr)
	}
}
