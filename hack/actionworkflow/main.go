// Command actionworkflow writes the steps of a composite GitHub Action
// (action.yml) as a reusable workflow on standard output, for actionlint:
// actionlint checks an action's metadata where a workflow uses it, but not
// its steps. In the workflow the action's inputs are workflow_call inputs,
// its steps one job's steps, its outputs the job's and the workflow's, so
// that actionlint checks every expression (inputs.*, steps.*.outputs.*,
// github.action_path), every `uses:` and every `if:` of the steps.
//
//	go run ./hack/actionworkflow action.yml | actionlint -stdin-filename action.yml -
//
// make lint runs it so.
package main

import (
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: actionworkflow ACTION.YML")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err == nil {
		err = write(os.Stdout, data)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

// action is the part of action.yml the workflow is made from; the steps
// stay YAML nodes, so that they are written as they are.
type action struct {
	Name   string `yaml:"name"`
	Inputs map[string]struct {
		Default  string `yaml:"default"`
		Required bool   `yaml:"required"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string    `yaml:"using"`
		Steps yaml.Node `yaml:"steps"`
	} `yaml:"runs"`
}

type workflowInput struct {
	Type     string `yaml:"type"`
	Required bool   `yaml:"required"`
	Default  string `yaml:"default,omitempty"`
}

type workflowOutput struct {
	Value string `yaml:"value"`
}

type workflow struct {
	Name string `yaml:"name"`
	On   struct {
		WorkflowCall struct {
			Inputs  map[string]workflowInput  `yaml:"inputs,omitempty"`
			Outputs map[string]workflowOutput `yaml:"outputs,omitempty"`
		} `yaml:"workflow_call"`
	} `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]job    `yaml:"jobs"`
}

type job struct {
	RunsOn  string            `yaml:"runs-on"`
	Outputs map[string]string `yaml:"outputs,omitempty"`
	Steps   *yaml.Node        `yaml:"steps"`
}

// jobName is the one job of the workflow.
const jobName = "action"

func write(w io.Writer, data []byte) error {
	var a action
	if err := yaml.Unmarshal(data, &a); err != nil {
		return err
	}
	if a.Runs.Using != "composite" {
		return fmt.Errorf("runs.using is %q: only a composite action has steps to check", a.Runs.Using)
	}
	if a.Runs.Steps.Kind != yaml.SequenceNode {
		return fmt.Errorf("runs.steps is not a list of steps")
	}
	wf := workflow{Name: a.Name, Permissions: map[string]string{}, Jobs: map[string]job{}}
	wf.On.WorkflowCall.Inputs = map[string]workflowInput{}
	for name, in := range a.Inputs {
		wf.On.WorkflowCall.Inputs[name] = workflowInput{Type: "string", Required: in.Required, Default: in.Default}
	}
	j := job{RunsOn: "ubuntu-latest", Outputs: map[string]string{}, Steps: &a.Runs.Steps}
	wf.On.WorkflowCall.Outputs = map[string]workflowOutput{}
	for name, out := range a.Outputs {
		j.Outputs[name] = out.Value
		wf.On.WorkflowCall.Outputs[name] = workflowOutput{Value: fmt.Sprintf("${{ jobs.%s.outputs.%s }}", jobName, name)}
	}
	wf.Jobs[jobName] = j
	fmt.Fprintln(w, "# The steps of action.yml as a reusable workflow, for actionlint (hack/actionworkflow).")
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(wf); err != nil {
		return err
	}
	return enc.Close()
}
