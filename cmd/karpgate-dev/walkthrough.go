package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
)

// walkthroughHeader starts the drift walkthrough `karpgate run` prints when
// Karpenter runs; test/e2e runs every command under it.
const walkthroughHeader = "Drift, as in Karpenter's Drift blog, on simulated nodes:"

// walkthroughStep is one command of the walkthrough and what it shows.
type walkthroughStep struct {
	// Command is printed with {examples} and {karpgate} replaced.
	Command, Shows string
}

// walkthroughSteps retell the Drift blog: a NodePool and a Deployment
// launch nodes, a template change drifts them all, and Karpenter replaces
// them within the NodePool's budget while karpgate shows the progress.
var walkthroughSteps = []walkthroughStep{
	{"kubectl apply -f {examples}/drift/kwoknodeclass.yaml -f {examples}/drift/nodepool.yaml -f {examples}/drift/deployment.yaml", "5 replicas, one simulated node each"},
	{"{karpgate} status", "drift-demo: 5 nodes within a minute; Drifted allows 2 at once"},
	{"kubectl apply -f {examples}/drift/nodepool-green.yaml", "KG601 warns: the template change drifts every node"},
	{"{karpgate} status", "again while Karpenter replaces them: drifted NodeClaims, at most 2 disrupting"},
	{"kubectl events --for nodepool/drift-demo", "DriftStarted, then DriftFinished once every node is new"},
}

func walkthrough(c *localcluster.Cluster, examples, karpgate string) string {
	if c.Karpenter == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n%s\n", walkthroughHeader)
	for _, step := range walkthroughSteps {
		command := strings.NewReplacer("{examples}", examples, "{karpgate}", karpgate).Replace(step.Command)
		fmt.Fprintf(&b, "\n  # %s\n  %s\n", step.Shows, command)
	}
	// The caller ends the section.
	return strings.TrimSuffix(b.String(), "\n")
}

func karpenterLine(c *localcluster.Cluster) string {
	if c.Karpenter == nil {
		return ""
	}
	return "\nKarpenter " + c.Karpenter.Release.Version + " runs next to it on simulated nodes: its kwok provider, with kwok,\nkube-scheduler and kube-controller-manager."
}

// karpenterEndpoints are the lines about Karpenter under the file list.
func karpenterEndpoints(c *localcluster.Cluster) string {
	if c.Karpenter == nil {
		return ""
	}
	return fmt.Sprintf("Karpenter metrics: %s\nLogs of Karpenter, kwok, kube-scheduler and kube-controller-manager: %s\n", c.Karpenter.KarpenterMetricsURL, c.Karpenter.Dir)
}

// karpgateCommand is how the user runs this binary's commands from the
// working directory: bin/karpgate-dev under `make run`.
func karpgateCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "karpgate"
	}
	if rel, err := relativeToWorkingDir(exe); err == nil && rel != exe {
		return rel
	}
	return filepath.Clean(exe)
}
