package sandbox_test

import (
	"context"
	"testing"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/sandbox"
	"github.com/karpgate/karpgate/test/wait"
)

// TestEachEngineHonoursItsPool: an engine's evaluations take their slots
// from the pool its options name, whatever pools other engines were given
// before (a process-wide pool sized once by the first engine ignored every
// later engine's bound), and an engine given none has its own.
func TestEachEngineHonoursItsPool(t *testing.T) {
	one, two := sandbox.NewPool(1), sandbox.NewPool(2)
	if one.Size() != 1 || two.Size() != 2 || sandbox.NewPool(0).Size() < 2 {
		t.Fatalf("sizes %d, %d, %d", one.Size(), two.Size(), sandbox.NewPool(0).Size())
	}
	onOne := newTestEngine(t, policies.Options{Pool: one})
	onTwo := newTestEngine(t, policies.Options{Pool: two})
	own := newTestEngine(t, policies.Options{})
	if onOne.Pool() != one || onTwo.Pool() != two || own.Pool() == nil || own.Pool() == one || own.Pool() == two {
		t.Fatal("an engine does not keep the pool it was given, or shares one it was not given")
	}
	req := policies.Request{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p"}}, Point: config.Admission, Operation: policies.Create}
	defer sandbox.Hold(two)()
	releaseOne := sandbox.Hold(one)
	// One of two slots is free: the evaluation runs.
	if _, err := onTwo.Evaluate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	// The only slot is taken: the evaluation waits for it.
	done := make(chan error, 1)
	go func() {
		_, err := onOne.Evaluate(context.Background(), req)
		done <- err
	}()
	wait.For(t, "the evaluation to wait for the pool's slot", func() bool { return one.Waiting() == 1 })
	releaseOne()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
