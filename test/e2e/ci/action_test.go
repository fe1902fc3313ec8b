package ci

import (
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
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
		Using string       `json:"using"`
		Steps []actionStep `json:"steps"`
	} `json:"runs"`
}

type actionStep struct {
	ID   string            `json:"id"`
	If   string            `json:"if"`
	Uses string            `json:"uses"`
	Env  map[string]string `json:"env"`
	Run  string            `json:"run"`
}

var actionExpression = regexp.MustCompile(`\$\{\{\s*([a-z_.-]+)\s*\}\}`)

// runner runs action.yml as a GitHub runner would: its `run` steps in
// order, as bash with their env, ${{ }} filled in from the inputs (or their
// defaults), the github context and the outputs of earlier steps, and the
// runner's variables pointing at temporary files; a step that fails ends
// the run. The `uses` steps (the cache, setup-go) are GitHub's own actions
// and do not run here: every run starts as on a cache miss, and a run that
// shares a tool cache with an earlier one starts as a self-hosted runner
// does, with what the earlier one left.
type runner struct {
	root   string
	action actionFile
	// path is PATH as the runner has it: the machine's, without cosign,
	// whose absence the Action reports.
	path string
}

func newRunner(t *testing.T) *runner {
	t.Helper()
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{root: root}
	if err := yaml.Unmarshal(data, &r.action); err != nil {
		t.Fatal(err)
	}
	if r.action.Runs.Using != "composite" {
		t.Fatalf("runs.using is %q, want composite", r.action.Runs.Using)
	}
	var dirs []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "cosign")); err != nil {
			dirs = append(dirs, dir)
		}
	}
	r.path = strings.Join(dirs, string(os.PathListSeparator))
	for _, tool := range []string{"bash", "curl", "tar", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the Action's scripts run %s, which GitHub's runners have: %v", tool, err)
		}
	}
	return r
}

// actionRun is what one run of the Action did.
type actionRun struct {
	out     string                       // every step's output, in order
	outputs map[string]map[string]string // step id -> its outputs
	ran     []string                     // ids of the run steps run
	failed  string                       // the step that failed, if one did
	code    int                          // its exit code
	path    []string                     // what the steps added to PATH
}

// runnerEnv is one job's runner: its OS and architecture, its tool cache,
// the ref the workflow pinned the action at.
type runnerEnv struct {
	os, arch, toolCache, actionRef string
}

// hostRunner is a runner of this machine's platform, as GitHub names it.
func hostRunner(toolCache string) runnerEnv {
	osName := map[string]string{"linux": "Linux", "darwin": "macOS"}[runtime.GOOS]
	arch := map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	return runnerEnv{os: osName, arch: arch, toolCache: toolCache}
}

func (r *runner) run(t *testing.T, env runnerEnv, inputs map[string]string) actionRun {
	t.Helper()
	temp := t.TempDir()
	githubPath := filepath.Join(temp, "github-path")
	res := actionRun{outputs: map[string]map[string]string{}}
	for k := range inputs {
		if _, declared := r.action.Inputs[k]; !declared {
			t.Fatalf("the test passes input %s, which action.yml does not declare", k)
		}
	}
	// The workspace is this checkout: the report goes to the run's own
	// folder, not to the default karpgate.sarif at the checkout's root.
	if _, set := inputs["sarif-file"]; !set {
		inputs = maps.Clone(inputs)
		if inputs == nil {
			inputs = map[string]string{}
		}
		inputs["sarif-file"] = filepath.Join(temp, "karpgate.sarif")
	}
	var out strings.Builder
	for i, s := range r.action.Runs.Steps {
		if s.Uses != "" {
			continue
		}
		if s.If != "" {
			t.Fatalf("run step %d (%s) has an if; this test runs every run step", i, s.ID)
		}
		expand := func(v string) string {
			return actionExpression.ReplaceAllStringFunc(v, func(expr string) string {
				name := actionExpression.FindStringSubmatch(expr)[1]
				switch {
				case strings.HasPrefix(name, "inputs."):
					input := strings.TrimPrefix(name, "inputs.")
					def, declared := r.action.Inputs[input]
					if !declared {
						t.Fatalf("step %s reads undeclared input %s", s.ID, input)
					}
					if v, ok := inputs[input]; ok {
						return v
					}
					// A default is evaluated where the workflow's step
					// runs, with the action's ref.
					return expandDefault(def.Default, env)
				case strings.HasPrefix(name, "steps."):
					parts := strings.SplitN(name, ".", 4)
					if len(parts) == 4 && parts[2] == "outputs" {
						return res.outputs[parts[1]][parts[3]]
					}
				}
				t.Fatalf("step %s uses ${{ %s }}, which this test does not provide (the github context of a composite action's step has no action_ref)", s.ID, name)
				return ""
			})
		}
		githubOutput := filepath.Join(temp, "output-"+s.ID)
		res.path = readLines(githubPath)
		// The folder added last comes first, as on a runner.
		path := slices.Clone(res.path)
		slices.Reverse(path)
		cmd := exec.Command("bash", "-c", s.Run)
		// The workspace: the fixtures are paths in this checkout.
		cmd.Dir = r.root
		cmd.Env = append(os.Environ(), "PATH="+strings.Join(append(path, r.path), string(os.PathListSeparator)),
			"GITHUB_ACTION_PATH="+r.root, "RUNNER_TEMP="+temp,
			"RUNNER_TOOL_CACHE="+env.toolCache, "RUNNER_OS="+env.os, "RUNNER_ARCH="+env.arch,
			"GITHUB_OUTPUT="+githubOutput, "GITHUB_PATH="+githubPath)
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+expand(v))
		}
		got, err := cmd.CombinedOutput()
		out.Write(got)
		res.ran = append(res.ran, s.ID)
		res.outputs[s.ID] = map[string]string{}
		recorded, _ := os.ReadFile(githubOutput)
		for _, line := range strings.Split(strings.TrimSpace(string(recorded)), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				res.outputs[s.ID][k] = v
			}
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			res.failed, res.code = s.ID, exit.ExitCode()
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	res.path = readLines(githubPath)
	res.out = out.String()
	return res
}

// readLines reads a file of the runner's, one value a line; a file not
// written is empty.
func readLines(path string) []string {
	data, _ := os.ReadFile(path)
	var lines []string
	for _, line := range strings.Split(string(data), "\n") {
		if line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// expandDefault evaluates an input's default as the runner does for the
// workflow's step that uses the action: github.action_ref is the ref in
// `uses:`.
func expandDefault(def string, env runnerEnv) string {
	return actionExpression.ReplaceAllStringFunc(def, func(expr string) string {
		if actionExpression.FindStringSubmatch(expr)[1] == "github.action_ref" {
			return env.actionRef
		}
		return expr
	})
}
