package ci

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/test/testenv"
)

// TestKubectlPlugin installs the shipped binary as kubectl-karpgate, as
// krew does, and drives it through the real kubectl: kubectl finds it on
// PATH, runs `kubectl karpgate ...` with the arguments and exit code
// passed through, and the help names the command as typed.
func TestKubectlPlugin(t *testing.T) {
	kubectl := filepath.Join(testenv.AssetsDir(t), "kubectl")
	plugins := t.TempDir()
	if err := os.Symlink(buildKarpgate(t), filepath.Join(plugins, "kubectl-karpgate")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+plugins+string(os.PathListSeparator)+os.Getenv("PATH"))
	kubectlRun := func(args ...string) (string, int) {
		cmd := exec.Command(kubectl, args...)
		cmd.Env = env
		cmd.Dir = "../../.."
		out, err := cmd.CombinedOutput()
		code := 0
		if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
		}
		return string(out), code
	}
	tests := []struct {
		args     []string
		wantCode int
		want     []string
	}{
		{[]string{"plugin", "list"}, 0, []string{filepath.Join(plugins, "kubectl-karpgate")}},
		{[]string{"karpgate", "--help"}, 0, []string{"kubectl karpgate [command]"}},
		{[]string{"karpgate", "lint", "--help"}, 0, []string{"kubectl karpgate lint [FILE | FOLDER | -]..."}},
		{[]string{"karpgate", "version"}, 0, []string{"karpgate ", "CRDs:"}},
		{[]string{"karpgate", "lint", "examples/ec2nodeclass-production-pinned.yaml"}, 0, []string{"no findings"}},
		{[]string{"karpgate", "lint", "lint/testdata/docs/weekend.yaml"}, 1, []string{"KG201", "1 denial"}},
		{[]string{"karpgate", "lint", "--frmat", "json"}, 3, []string{"unknown flag: --frmat"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, code := kubectlRun(tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d:\n%s", code, tt.wantCode, out)
			}
			for _, want := range tt.want {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
