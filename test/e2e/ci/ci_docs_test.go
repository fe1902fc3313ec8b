package ci

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/test/golden"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/toolbin"
)

// ciDocBlock is a block of docs/ci.md marked `<!-- e2e: NAME -->`.
var ciDocBlock = regexp.MustCompile("(?s)<!-- e2e: ([a-z-]+) -->\n```[a-z]*\n(.*?)```")

// ciDocs returns the marked blocks of docs/ci.md by name.
func ciDocs(t *testing.T) map[string]string {
	t.Helper()
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]string{}
	for _, m := range ciDocBlock.FindAllStringSubmatch(string(data), -1) {
		blocks[m[1]] = m[2]
	}
	return blocks
}

// ciWorkspace copies examples/ci, the repository every example of
// docs/ci.md runs on, into a temporary folder.
func ciWorkspace(t *testing.T) string {
	t.Helper()
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(root, "examples", "ci")
	err = filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// badManifest breaks a rule of karpgate's: the weekend budget whose cron
// the API server accepts and Karpenter cannot parse (KG201).
const badManifest = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: weekend-freeze
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: production}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
  disruption:
    budgets:
      - schedule: "0 9 * * sat-sun"
        nodes: "0"
        duration: 24h
`

// TestCIDocsShellAndGitLab runs the plain shell block of docs/ci.md and the
// script of its GitLab job, as written, on examples/ci with karpgate on
// PATH: clean, then with a bad manifest added, and checks the reports.
func TestCIDocsShellAndGitLab(t *testing.T) {
	blocks := ciDocs(t)
	var gitlab map[string]struct {
		Script []string `json:"script"`
	}
	if err := yaml.Unmarshal([]byte(blocks["gitlab-ci"]), &gitlab); err != nil || len(gitlab["karpgate"].Script) == 0 {
		t.Fatalf("docs/ci.md's gitlab-ci block has no karpgate job with a script (%v)", err)
	}
	scripts := map[string]string{
		"shell":     blocks["shell"],
		"gitlab-ci": strings.Join(gitlab["karpgate"].Script, "\n"),
	}
	path := "PATH=" + filepath.Dir(buildKarpgate(t)) + string(os.PathListSeparator) + os.Getenv("PATH")
	for name, script := range scripts {
		if script == "" {
			t.Fatalf("docs/ci.md has no block marked <!-- e2e: %s -->", name)
		}
		for _, bad := range []bool{false, true} {
			t.Run(name+map[bool]string{false: " clean", true: " with a denial"}[bad], func(t *testing.T) {
				dir := ciWorkspace(t)
				if bad {
					if err := os.WriteFile(filepath.Join(dir, "clusters", "prod", "weekend.yaml"), []byte(badManifest), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
				cmd.Dir, cmd.Env = dir, append(os.Environ(), path)
				out, err := cmd.CombinedOutput()
				var exit *exec.ExitError
				errors.As(err, &exit)
				switch {
				case !bad && err != nil:
					t.Fatalf("%v on a clean repository:\n%s", err, out)
				case bad && (exit == nil || exit.ExitCode() != 1):
					t.Fatalf("want exit 1 on a denial, got %v:\n%s", err, out)
				}
				junit, err := os.ReadFile(filepath.Join(dir, "karpgate-junit.xml"))
				if err != nil {
					t.Fatal(err)
				}
				if hasFailure := strings.Contains(string(junit), "<failure"); hasFailure != bad || bad && !strings.Contains(string(junit), "KG201") {
					t.Errorf("JUnit report (denial expected: %v):\n%s", bad, junit)
				}
			})
		}
	}
}

// TestCIDocsGitHubWorkflow checks the workflow of docs/ci.md against
// action.yml: it passes only inputs the action declares, and reads only
// outputs it sets.
func TestCIDocsGitHubWorkflow(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var workflow struct {
		Jobs map[string]struct {
			Steps []struct {
				ID   string            `json:"id"`
				Uses string            `json:"uses"`
				With map[string]string `json:"with"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(ciDocs(t)["github-workflow"]), &workflow); err != nil {
		t.Fatal(err)
	}
	var action struct {
		Inputs  map[string]any `json:"inputs"`
		Outputs map[string]any `json:"outputs"`
	}
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatal(err)
	}
	usesAction := false
	for _, step := range workflow.Jobs["lint"].Steps {
		if strings.HasPrefix(step.Uses, "karpgate/karpgate@") {
			usesAction = true
			for input := range step.With {
				if _, ok := action.Inputs[input]; !ok {
					t.Errorf("the workflow passes input %q, which action.yml does not declare", input)
				}
			}
		}
		for _, v := range step.With {
			for _, m := range regexp.MustCompile(`steps\.karpgate\.outputs\.([a-z-]+)`).FindAllStringSubmatch(v, -1) {
				if _, ok := action.Outputs[m[1]]; !ok {
					t.Errorf("the workflow reads output %q, which action.yml does not set", m[1])
				}
			}
		}
	}
	if !usesAction {
		t.Fatal("the workflow in docs/ci.md does not use karpgate/karpgate")
	}
}

// ciDocOutput is what docs/ci.md shows a marked command printing,
// marked `<!-- e2e-output: NAME -->` after the command's block NAME.
var ciDocOutput = regexp.MustCompile("(?s)<!-- e2e-output: ([a-z-]+) -->\n```\n(.*?)```")

// TestCIDocsRenderedManifests runs the `helm template | karpgate lint -`
// and `kubectl kustomize | karpgate lint -` pipelines of docs/ci.md on
// examples/ci, with the real helm and kubectl: their output is the golden
// file, and what the doc shows.
func TestCIDocsRenderedManifests(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]string{}
	for _, m := range ciDocOutput.FindAllStringSubmatch(string(doc), -1) {
		shown[m[1]] = m[2]
	}
	blocks := ciDocs(t)
	path := "PATH=" + strings.Join([]string{filepath.Dir(buildKarpgate(t)), filepath.Dir(toolbin.Find(t, "KARPGATE_HELM", "helm")),
		testenv.AssetsDir(t), os.Getenv("PATH")}, string(os.PathListSeparator))
	for _, tt := range []struct {
		name string
		code int
	}{{"helm-template", 0}, {"kustomize-build", 1}} {
		t.Run(tt.name, func(t *testing.T) {
			script, ok := blocks[tt.name]
			if !ok {
				t.Fatalf("docs/ci.md has no block marked <!-- e2e: %s -->", tt.name)
			}
			cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
			cmd.Dir, cmd.Env = ciWorkspace(t), append(os.Environ(), path)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, stdout.String(), stderr.String())
			}
			goldenFile := filepath.Join("testdata", "ci-"+tt.name+".golden")
			golden.Assert(t, goldenFile, []byte(stdout.String()))
			if want, _ := os.ReadFile(goldenFile); shown[tt.name] != string(want) {
				t.Errorf("docs/ci.md shows for %s another output than the command's (%s):\n%s", tt.name, goldenFile, shown[tt.name])
			}
		})
	}
}
