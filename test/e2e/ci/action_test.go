package ci

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// actionFile is the part of action.yml the test runs.
type actionFile struct {
	Inputs map[string]struct {
		Default string `json:"default"`
	} `json:"inputs"`
	Runs struct {
		Using string `json:"using"`
		Steps []struct {
			ID  string            `json:"id"`
			Env map[string]string `json:"env"`
			Run string            `json:"run"`
		} `json:"steps"`
	} `json:"runs"`
}

var actionExpression = regexp.MustCompile(`\$\{\{\s*([a-z_.-]+)\s*\}\}`)

// TestGitHubAction runs the steps of action.yml as a GitHub runner would:
// their run scripts and env, with ${{ inputs.* }} filled in from each case
// (or the input's default) and the runner's variables (GITHUB_ACTION_PATH,
// RUNNER_TEMP, GITHUB_PATH, GITHUB_OUTPUT) pointing at temporary files. The
// install step builds karpgate from this checkout; the lint step runs it
// on fixtures, and the test checks the annotations, the SARIF report, the
// step outputs and the exit code.
func TestGitHubAction(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action actionFile
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatal(err)
	}
	if action.Runs.Using != "composite" {
		t.Fatalf("runs.using is %q, want composite", action.Runs.Using)
	}
	temp := t.TempDir()
	step := func(t *testing.T, id, dir string, inputs map[string]string, extraEnv ...string) (stdout string, outputs map[string]string, code int) {
		t.Helper()
		for _, s := range action.Runs.Steps {
			if s.ID != id {
				continue
			}
			expand := func(v string) string {
				return actionExpression.ReplaceAllStringFunc(v, func(expr string) string {
					name := actionExpression.FindStringSubmatch(expr)[1]
					switch {
					case name == "github.action_ref":
						return "v0.0.0-action-test"
					case strings.HasPrefix(name, "inputs."):
						input := strings.TrimPrefix(name, "inputs.")
						def, declared := action.Inputs[input]
						if !declared {
							t.Fatalf("step %s reads undeclared input %s", id, input)
						}
						if v, ok := inputs[input]; ok {
							return v
						}
						return def.Default
					}
					t.Fatalf("step %s uses ${{ %s }}, which this test does not provide", id, name)
					return ""
				})
			}
			githubOutput := filepath.Join(t.TempDir(), "output")
			githubPath := filepath.Join(temp, "path")
			cmd := exec.Command("bash", "-c", s.Run)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GITHUB_ACTION_PATH="+root, "RUNNER_TEMP="+temp, "GITHUB_OUTPUT="+githubOutput, "GITHUB_PATH="+githubPath)
			cmd.Env = append(cmd.Env, extraEnv...)
			for k, v := range s.Env {
				cmd.Env = append(cmd.Env, k+"="+expand(v))
			}
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			outputs = map[string]string{}
			recorded, _ := os.ReadFile(githubOutput)
			for _, line := range strings.Split(strings.TrimSpace(string(recorded)), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					outputs[k] = v
				}
			}
			return string(out), outputs, code
		}
		t.Fatalf("action.yml has no step %s", id)
		return "", nil, 0
	}

	out, _, code := step(t, "install", root, nil)
	if code != 0 || !strings.Contains(out, "karpgate v0.0.0-action-test") {
		t.Fatalf("install step: exit %d\n%s", code, out)
	}
	added, err := os.ReadFile(filepath.Join(temp, "path"))
	if err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + strings.TrimSpace(string(added)) + string(os.PathListSeparator) + os.Getenv("PATH")

	conftest, err := crdsource.PinnedModuleDir(t.Context(), "conftest", "github.com/open-policy-agent/conftest")
	if err != nil {
		t.Fatal(err)
	}
	examples := filepath.Join(conftest, "examples")
	fixtures := "cmd/karpgate/app/testdata"
	tests := []struct {
		name     string
		inputs   map[string]string
		wantCode int
		want     []string
		sarif    []string // rule IDs the SARIF report must hold
	}{
		{"clean", map[string]string{"paths": fixtures + "/clean.yaml"}, 0, nil, nil},
		{"deny", map[string]string{"paths": fixtures + "/deny.yaml\n" + fixtures + "/clean.yaml\n"}, 1, []string{"::error file=" + fixtures + "/deny.yaml"}, []string{"KG201"}},
		{"warnings pass", map[string]string{"paths": fixtures + "/warn.yaml"}, 0, []string{"::warning file=" + fixtures + "/warn.yaml"}, nil},
		{"warnings fail with fail-on-warn", map[string]string{"paths": fixtures + "/warn.yaml", "fail-on-warn": "true"}, 2, nil, nil},
		{"config", map[string]string{"paths": fixtures + "/warn.yaml", "config": fixtures + "/strict.yaml"}, 1, nil, nil},
		{"conftest policies", map[string]string{"paths": examples + "/kubernetes/deployment.yaml", "policies": examples + "/kubernetes/policy\n" + examples + "/exceptions/policy"}, 1, []string{"main.deny"}, []string{"main.deny", "main.violation"}},
		{"fail-on-warn must be a boolean", map[string]string{"fail-on-warn": "yes"}, 3, []string{`::error title=karpgate action::fail-on-warn is "yes"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sarif := filepath.Join(t.TempDir(), "karpgate.sarif")
			tt.inputs["sarif-file"] = sarif
			out, outputs, code := step(t, "lint", root, tt.inputs, path)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\n%s", code, tt.wantCode, out)
			}
			if outputs["exit-code"] != strconv.Itoa(tt.wantCode) {
				t.Errorf("step output exit-code=%q, want %d", outputs["exit-code"], tt.wantCode)
			}
			for _, want := range tt.want {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if tt.wantCode == 3 {
				return
			}
			if outputs["sarif-file"] != sarif {
				t.Errorf("step output sarif-file=%q, want %s", outputs["sarif-file"], sarif)
			}
			report, err := os.ReadFile(sarif)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Version string `json:"version"`
				Runs    []struct {
					Results []struct {
						RuleID string `json:"ruleId"`
					} `json:"results"`
				} `json:"runs"`
			}
			if err := json.Unmarshal(report, &doc); err != nil || doc.Version != "2.1.0" || len(doc.Runs) != 1 {
				t.Fatalf("SARIF report is not SARIF 2.1.0 with one run (%v):\n%s", err, report)
			}
			found := map[string]bool{}
			for _, r := range doc.Runs[0].Results {
				found[r.RuleID] = true
			}
			for _, id := range tt.sarif {
				if !found[id] {
					t.Errorf("the SARIF report has no result of %s: %v", id, found)
				}
			}
		})
	}
}
