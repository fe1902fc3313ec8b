package budget

import (
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestAnalyze(t *testing.T) {
	pool := func(budgets ...any) map[string]any {
		return map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
			"spec": map[string]any{"disruption": map[string]any{"budgets": budgets}}}
	}
	b := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	wednesday := monday.AddDate(0, 0, 2).Add(12 * time.Hour)

	a := Analyze(pool(b("nodes", "0", "reasons", []any{"Drifted"})), wednesday)
	if d := a.Reasons[Drifted]; !d.NeverAllowed || d.UnlimitedText != "" || !slices.Equal(d.Binding, []int{0}) {
		t.Errorf("always-active zero: %+v", d)
	}
	if e := a.Reasons[Empty]; !e.AlwaysUnlimited || e.NeverAllowed {
		t.Errorf("uncovered reason: %+v", e)
	}
	if !a.Start.Equal(monday) {
		t.Errorf("start: got %s, want %s", a.Start, monday)
	}

	a = Analyze(pool(b("nodes", "0", "schedule", "0 9 * * sat-sun", "duration", "24h")), wednesday)
	if !a.Blocked || a.Reasons != nil {
		t.Errorf("invalid cron must block and skip the analysis: %+v", a)
	}

	a = Analyze(pool(b("nodes", "1", "schedule", "0 0 30 2 *", "duration", "1h"), b("nodes", "1", "schedule", "@daily", "duration", "0m")), wednesday)
	if !a.Budgets[0].NeverFires || a.Budgets[0].NeverActive || !a.Budgets[1].NeverActive {
		t.Errorf("never fires / never active: %+v", a.Budgets)
	}

	a = Analyze(pool(b("nodes", "0", "schedule", "0 9 * * mon-fri", "duration", "8h")), wednesday)
	if u := a.Reasons[Drifted]; u.UnlimitedText != "every week: Mon–Thu 17:00–09:00 next day and Fri 17:00–Mon 09:00 (UTC)" {
		t.Errorf("unlimited outside the window: %+v", u)
	}
	if u := a.Reasons[Drifted]; !slices.Equal(u.Scheduled, []int{0}) || len(u.Unlimited) == 0 {
		t.Errorf("scheduled budget and unlimited windows: %+v", u)
	}

	a = Analyze(map[string]any{"spec": map[string]any{"disruption": map[string]any{"budgets": "x"}}}, wednesday)
	if a.Readable {
		t.Errorf("unreadable budgets: %+v", a)
	}
}

// The span starts on the Monday of the week containing now, whatever day
// now is.
func TestMondayOnOrBefore(t *testing.T) {
	sunday := monday.AddDate(0, 0, 6).Add(23 * time.Hour)
	for _, at := range []time.Time{monday, monday.Add(time.Minute), sunday} {
		if got := MondayOnOrBefore(at); !got.Equal(monday) {
			t.Errorf("MondayOnOrBefore(%s) = %s, want %s", at, got, monday)
		}
	}
	if got := MondayOnOrBefore(monday.Add(-time.Second)); !got.Equal(monday.AddDate(0, 0, -7)) {
		t.Errorf("a second before Monday belongs to the week before: got %s", got)
	}
}

// Budgets that share a schedule and a duration share its windows, whatever
// their node counts and reasons; a span analysed with them is the span
// analysed without.
func TestSpanWindowsAreSharedBySchedule(t *testing.T) {
	str := func(s string) *string { return &s }
	scheduled := func(nodes, schedule, duration string, reasons ...string) Budget {
		return Budget{Nodes: nodes, Schedule: str(schedule), Duration: str(duration), Reasons: reasons}
	}
	windows := NewSpanWindows(8)
	for _, tt := range []struct {
		name    string
		budgets []Budget
		// remembered is how many schedules' windows are remembered after.
		remembered int
	}{
		{"business hours", []Budget{scheduled("0", "0 9 * * mon-fri", "8h", "Drifted"), {Index: 1, Nodes: "10%"}}, 1},
		{"the same schedule, other counts and reasons", []Budget{scheduled("3", "0 9 * * mon-fri", "8h"), {Index: 1, Nodes: "20%"}}, 1},
		{"the same schedule, another duration", []Budget{scheduled("0", "0 9 * * mon-fri", "9h")}, 2},
		{"another schedule", []Budget{scheduled("0", "0 9 * * sat", "8h"), {Index: 1, Nodes: "0", Schedule: str("0 9 * * mon-fri"), Duration: str("8h")}}, 3},
		{"no schedule", []Budget{{Nodes: "5"}}, 3},
		{"an invalid schedule", []Budget{scheduled("0", "0 9 * * sat-sun", "8h")}, 3},
		{"a schedule that never fires", []Budget{scheduled("0", "0 0 30 2 *", "1h")}, 4},
	} {
		for i := range tt.budgets {
			tt.budgets[i].Index = i
		}
		set := CompileSet(tt.budgets)
		for _, start := range []time.Time{monday, monday.AddDate(0, 0, 7)} {
			got, want := set.AnalyzeSpanWith(start, windows), set.AnalyzeSpan(start)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s from %s: with remembered windows\n%+v\nwithout\n%+v", tt.name, start.Format(time.DateOnly), got, want)
			}
		}
		// Two spans per schedule.
		if got := len(windows.entries); got != 2*tt.remembered {
			t.Errorf("%s: %d windows remembered, want %d", tt.name, got, 2*tt.remembered)
		}
	}
}

// A window open at a span's start begins there, so spans that start within
// the same second do not share their windows.
func TestSpanWindowsTellStartsApartWithinASecond(t *testing.T) {
	schedule, duration := "0 0 * * *", "1h"
	set := CompileSet([]Budget{{Nodes: "0", Schedule: &schedule, Duration: &duration}})
	windows := NewSpanWindows(8)
	for _, start := range []time.Time{monday, monday.Add(500 * time.Millisecond), monday.Add(time.Nanosecond)} {
		if got, want := set.AnalyzeSpanWith(start, windows), set.AnalyzeSpan(start); !reflect.DeepEqual(got, want) {
			t.Errorf("span from %s: with remembered windows\n%+v\nwithout\n%+v", start.Format(time.RFC3339Nano), got, want)
		}
	}
}

// SpanWindows starts over when full rather than grow.
func TestSpanWindowsAreBounded(t *testing.T) {
	windows := NewSpanWindows(3)
	for minute := range 10 {
		schedule, duration := strconv.Itoa(minute)+" 9 * * *", "1h"
		CompileSet([]Budget{{Nodes: "0", Schedule: &schedule, Duration: &duration}}).AnalyzeSpanWith(monday, windows)
		if n := len(windows.entries); n > 3 {
			t.Fatalf("%d windows remembered, over the bound of 3", n)
		}
	}
}
