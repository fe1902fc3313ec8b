package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/test/toolbin"
)

// TestActionlintChecksTheActionsSteps writes karpgate's action.yml as a
// workflow and runs the real actionlint on it, as make lint does: clean as
// it is, and each mistake below, which actionlint cannot see in action.yml
// itself, is reported on the workflow.
func TestActionlintChecksTheActionsSteps(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	original, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	actionlint := toolbin.Find(t, "KARPGATE_ACTIONLINT", "actionlint")
	tests := []struct {
		name, old, new string
		want           string // in actionlint's report; "" for clean
	}{
		{name: "action.yml as it is"},
		{name: "an input the action does not declare", old: "${{ inputs.karpenter-version }}", new: "${{ inputs.karpenter-release }}", want: `property "karpenter-release" is not defined`},
		{name: "an output of a step that does not exist", old: "${{ steps.resolve.outputs.cache-dir }}", new: "${{ steps.resolved.outputs.cache-dir }}", want: `property "resolved" is not defined`},
		{name: "an if that is always true", old: "if: steps.resolve.outputs.source == 'source'", new: "if: ${{ steps.resolve.outputs.source }} == 'source'", want: "always evaluated to true"},
		{name: "an action output from a missing step", old: "${{ steps.lint.outputs.exit-code }}", new: "${{ steps.linter.outputs.exit-code }}", want: `property "linter" is not defined`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := original
			if tt.old != "" {
				if !bytes.Contains(data, []byte(tt.old)) {
					t.Fatalf("action.yml no longer contains %q; update the test", tt.old)
				}
				data = bytes.Replace(data, []byte(tt.old), []byte(tt.new), 1)
			}
			var wf bytes.Buffer
			if err := write(&wf, data); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(actionlint, "-no-color", "-stdin-filename", "action.yml", "-")
			cmd.Stdin = &wf
			out, err := cmd.CombinedOutput()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("actionlint: %v\n%s", err, out)
			case tt.want != "" && (err == nil || !strings.Contains(string(out), tt.want)):
				t.Fatalf("actionlint (%v) does not report %q:\n%s", err, tt.want, out)
			}
		})
	}
}

// TestWorkflowKeepsTheAction checks what the workflow is made of: every
// input with its default, every step as written, every output.
func TestWorkflowKeepsTheAction(t *testing.T) {
	const actionYAML = `name: an action
description: for the test
inputs:
  paths:
    default: "."
  token:
    required: true
outputs:
  code:
    value: ${{ steps.run.outputs.code }}
runs:
  using: composite
  steps:
    - id: run
      shell: bash
      run: echo "code=0" >> "$GITHUB_OUTPUT"
    - uses: actions/cache@v4
      with: {path: x, key: y}
`
	var out bytes.Buffer
	if err := write(&out, []byte(actionYAML)); err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On struct {
			WorkflowCall struct {
				Inputs  map[string]workflowInput  `yaml:"inputs"`
				Outputs map[string]workflowOutput `yaml:"outputs"`
			} `yaml:"workflow_call"`
		} `yaml:"on"`
		Jobs map[string]struct {
			Outputs map[string]string `yaml:"outputs"`
			Steps   []map[string]any  `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(out.Bytes(), &wf); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	inputs := wf.On.WorkflowCall.Inputs
	if inputs["paths"] != (workflowInput{Type: "string", Default: "."}) || inputs["token"] != (workflowInput{Type: "string", Required: true}) || len(inputs) != 2 {
		t.Errorf("inputs %+v", inputs)
	}
	j := wf.Jobs[jobName]
	if len(j.Steps) != 2 || j.Steps[0]["id"] != "run" || j.Steps[1]["uses"] != "actions/cache@v4" {
		t.Errorf("steps %v", j.Steps)
	}
	if j.Outputs["code"] != "${{ steps.run.outputs.code }}" || wf.On.WorkflowCall.Outputs["code"].Value != "${{ jobs.action.outputs.code }}" {
		t.Errorf("outputs: job %v, workflow %v", j.Outputs, wf.On.WorkflowCall.Outputs)
	}
	if err := write(&out, []byte("name: x\nruns:\n  using: node24\n  main: index.js\n")); err == nil || !strings.Contains(err.Error(), "only a composite action") {
		t.Errorf("a JavaScript action: %v", err)
	}
}
