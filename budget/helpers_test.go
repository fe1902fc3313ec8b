package budget

import (
	"testing"
	"time"
)

// instant parses an RFC 3339 time; tests use it as their injected clock.
func instant(t testing.TB, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("bad test time %q: %v", s, err)
	}
	return ts
}

// scheduled builds a budget with a schedule and duration.
func scheduled(index int, nodes, schedule, duration string, reasons ...string) Budget {
	return Budget{Index: index, Nodes: nodes, Schedule: Ptr(schedule), Duration: Ptr(duration), Reasons: reasons}
}

func timeLocation(name string) (*time.Location, error) { return time.LoadLocation(name) }
