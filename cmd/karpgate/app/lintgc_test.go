package app

import (
	"context"
	"os"
	"runtime/debug"
	"testing"

	"github.com/karpgate/karpgate/policies"
)

func TestLintTunesTheCollectorOnlyWhenUntuned(t *testing.T) {
	engine, err := policies.New(context.Background(), policies.Options{})
	if err != nil {
		t.Fatal(err)
	}
	current := func() (int, int64) {
		percent := debug.SetGCPercent(-1)
		debug.SetGCPercent(percent)
		return percent, debug.SetMemoryLimit(-1) // a negative limit reads it
	}
	percent, limit := current()

	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Setenv("GOGC", "")
		t.Setenv("GOMEMLIMIT", "")
		os.Unsetenv("GOGC")
		os.Unsetenv("GOMEMLIMIT")
		t.Setenv(env, "200")
		restore := tuneGCForStreaming(engine)
		if p, l := current(); p != percent || l != limit {
			t.Errorf("%s set: the collector was tuned anyway (GOGC %d, limit %d)", env, p, l)
		}
		restore()
	}

	os.Unsetenv("GOGC")
	os.Unsetenv("GOMEMLIMIT")
	restore := tuneGCForStreaming(engine)
	if p, l := current(); p != lintGCPercent || l != lintMemoryFloor {
		t.Errorf("untuned: GOGC %d and limit %d, want %d and %d", p, l, lintGCPercent, lintMemoryFloor)
	}
	restore()
	if p, l := current(); p != percent || l != limit {
		t.Errorf("settings not put back: GOGC %d, limit %d; want %d, %d", p, l, percent, limit)
	}
}
