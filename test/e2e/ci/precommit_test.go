package ci

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/buildinfo"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// TestPreCommitHook runs the real pre-commit (Debian's package; make e2e
// installs it) with the .pre-commit-config.yaml of docs/ci.md, pointed at
// this checkout's commit, in a throwaway repository laid out like
// examples/ci: pre-commit builds the karpgate-lint hook with `go install`
// as it would from GitHub, passes the args, and fails the run on a bad
// manifest. GOMODCACHE and GOCACHE point at the machine's module and build
// caches (HOME is a temporary folder, whose empty default build cache made
// this one test compile every package cold: over 20 minutes on two busy
// cores), and GOFLAGS asks for the flags of `make build` and the release
// build (buildinfo.GoBuildFlags), so the build reuses what the other tests
// compiled and downloads nothing the module proxy has not already served.
func TestPreCommitHook(t *testing.T) {
	preCommit, err := exec.LookPath("pre-commit")
	if err != nil {
		t.Fatal("pre-commit is not installed: run make pre-commit (as root it installs Debian's package) or apt-get install -y pre-commit")
	}
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD in %s: %v", root, err)
	}
	goEnv, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	modCache, buildCache, _ := strings.Cut(strings.TrimSpace(string(goEnv)), "\n")
	config := ciDocs(t)["pre-commit-config"]
	config = regexp.MustCompile(`repo: \S+`).ReplaceAllString(config, "repo: "+root)
	config = regexp.MustCompile(`rev: \S+`).ReplaceAllString(config, "rev: "+strings.TrimSpace(string(head)))
	runCommand := strings.TrimSpace(ciDocs(t)["pre-commit-run"])
	if !strings.Contains(config, "id: karpgate-lint") || runCommand == "" {
		t.Fatalf("docs/ci.md lacks the pre-commit blocks:\n%s\n%s", config, runCommand)
	}

	repo := ciWorkspace(t)
	if err := os.WriteFile(filepath.Join(repo, ".pre-commit-config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"PATH="+filepath.Dir(preCommit)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PRE_COMMIT_HOME="+t.TempDir(), "HOME="+t.TempDir(),
		"GOMODCACHE="+modCache, "GOCACHE="+buildCache, "GOFLAGS="+strings.Join(buildinfo.GoBuildFlags(), " "), "CGO_ENABLED=0",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	sh := func(script string) (string, int) {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Dir, cmd.Env = repo, env
		out, err := cmd.CombinedOutput()
		if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
			return string(out), exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if out, code := sh("git init -q . && git add -A"); code != 0 {
		t.Fatal(out)
	}

	out, code := sh(runCommand)
	if code != 0 || !regexp.MustCompile(`karpgate lint\.+Passed`).MatchString(out) {
		t.Fatalf("pre-commit on good manifests: exit %d\n%s", code, out)
	}
	if err := os.WriteFile(filepath.Join(repo, "clusters", "prod", "weekend.yaml"), []byte(badManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := sh("git add -A"); code != 0 {
		t.Fatal(out)
	}
	out, code = sh(runCommand)
	for _, want := range []string{"Failed", "hook id: karpgate-lint", "exit code: 1", "clusters/prod/weekend.yaml", "KG201", "1 denial"} {
		if !strings.Contains(out, want) {
			t.Errorf("pre-commit output lacks %q", want)
		}
	}
	if code != 1 || t.Failed() {
		t.Fatalf("pre-commit on a bad manifest: exit %d, want 1\n%s", code, out)
	}
}
