package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/sandbox"
)

// TestAnObjectThatMakesAPolicyExpensiveIsCutOff: a policy fine on ordinary
// objects but not on this one is stopped with an error, and the engine
// keeps answering for other objects.
func TestAnObjectThatMakesAPolicyExpensiveIsCutOff(t *testing.T) {
	dir := userRule(t, `n := to_number(object.get(input.object, ["metadata", "annotations", "example.com/n"], "1"))
	count(numbers.range(1, n)) > 1000`)
	e := newTestEngine(t, policies.Options{PolicyDirs: []string{dir}})
	pool := func(n string) policies.Request {
		return policies.Request{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p", "annotations": map[string]any{"example.com/n": n}}}, Point: config.Admission, Operation: policies.Create}
	}
	if _, err := e.Evaluate(context.Background(), pool("1000000000")); !errors.Is(err, sandbox.ErrTooExpensive) || !strings.Contains(err.Error(), "evaluating NodePool/p") {
		t.Fatalf("got %v, want ErrTooExpensive for NodePool/p", err)
	}
	res, err := e.Evaluate(context.Background(), pool("2000"))
	if err != nil || len(res.Findings) == 0 || res.Findings[0].RuleID != "ACME900" {
		t.Fatalf("an object within the limits: %+v %v", res, err)
	}
}

// TestRegoIsCancelledMidEvaluationAtTheDeadline: with the step budget out of
// the way, an evaluation that could not finish in any test's lifetime ends
// at its context's deadline with that error, between two steps.
func TestRegoIsCancelledMidEvaluationAtTheDeadline(t *testing.T) {
	dir := userRule(t, `n := to_number(object.get(input.object, ["metadata", "annotations", "example.com/n"], "1"))
	count([[i, j, k] | some i in numbers.range(1, n); some j in numbers.range(1, n); some k in numbers.range(1, n)]) > 0`)
	e := newTestEngine(t, policies.Options{PolicyDirs: []string{dir}, Limits: sandbox.Limits{MaxSteps: 1 << 62}})
	// 10^12 triples: no machine gets through them before the deadline.
	req := policies.Request{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p", "annotations": map[string]any{"example.com/n": "10000"}}}, Point: config.Admission, Operation: policies.Create}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := e.Evaluate(ctx, req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's deadline", err)
	}
	if errors.Is(err, sandbox.ErrTooExpensive) {
		t.Fatalf("the step budget stopped it, not the deadline: %v", err)
	}
}
