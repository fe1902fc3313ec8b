// Command budget-oracle answers budget questions with Karpenter v1.0.8's own
// code, for the fidelity tests of package budget (budget/fidelity): a Go
// binary links one version of a module, and karpgate links v1.15, so
// v1.0.8's answers come from this separate build.
//
// It reads a JSON list of cases on stdin, each a NodePool's budgets, a node
// count and an instant, and writes for each what
// NodePool.GetAllowedDisruptionsByReason returns at that instant: the
// allowed disruptions per reason (before nodes already disrupting are
// subtracted) and its error, which makes Karpenter allow zero for every
// reason (MustGetAllowedDisruptions returns an empty map).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clock "k8s.io/utils/clock/testing"
	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// Budget is one budget as written; a nil Reasons is absent, an empty one [].
type Budget struct {
	Nodes    string   `json:"nodes"`
	Schedule *string  `json:"schedule"`
	Duration *string  `json:"duration"`
	Reasons  []string `json:"reasons"`
}

// Case is one question.
type Case struct {
	Budgets []Budget  `json:"budgets"`
	Nodes   int       `json:"nodes"`
	At      time.Time `json:"at"`
}

// Answer is Karpenter's answer to one case.
type Answer struct {
	Allowed map[string]int `json:"allowed"`
	Error   string         `json:"error,omitempty"`
}

func main() {
	var cases []Case
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, "reading cases:", err)
		os.Exit(2)
	}
	answers := make([]Answer, len(cases))
	for i, c := range cases {
		np, err := nodePool(c)
		if err != nil {
			fmt.Fprintf(os.Stderr, "case %d: %v\n", i, err)
			os.Exit(2)
		}
		allowed, err := np.GetAllowedDisruptionsByReason(context.Background(), clock.NewFakeClock(c.At), c.Nodes)
		answers[i].Allowed = map[string]int{}
		for r, n := range allowed {
			answers[i].Allowed[string(r)] = n
		}
		if err != nil {
			answers[i].Error = err.Error()
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		fmt.Fprintln(os.Stderr, "writing answers:", err)
		os.Exit(2)
	}
}

// nodePool builds the NodePool Karpenter would decode; a duration it
// cannot decode is an error, as it is for the API server.
func nodePool(c Case) (*v1.NodePool, error) {
	np := &v1.NodePool{}
	for _, b := range c.Budgets {
		kb := v1.Budget{Nodes: b.Nodes, Schedule: b.Schedule}
		if b.Duration != nil {
			d, err := time.ParseDuration(*b.Duration)
			if err != nil {
				return nil, fmt.Errorf("duration %q: %w", *b.Duration, err)
			}
			kb.Duration = &metav1.Duration{Duration: d}
		}
		if b.Reasons != nil {
			kb.Reasons = make([]v1.DisruptionReason, len(b.Reasons))
			for i, r := range b.Reasons {
				kb.Reasons[i] = v1.DisruptionReason(r)
			}
		}
		np.Spec.Disruption.Budgets = append(np.Spec.Disruption.Budgets, kb)
	}
	return np, nil
}
