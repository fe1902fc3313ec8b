package budget

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// FuzzBudget feeds arbitrary schedules, durations and node counts through
// every entry point. None may panic, fixes must parse, and the timeline must
// agree with Allowed at its start.
func FuzzBudget(f *testing.F) {
	seeds := []struct {
		schedule, duration, nodes string
		hasSchedule, hasDuration  bool
	}{
		{"0 9 * * mon-fri", "8h", "0", true, true},
		{"0 9 * * sat-sun", "24h", "10%", true, true},
		{"0 9 * * 7", "1h", "1", true, true},
		{"0 0 30 2 *", "1h", "0", true, true},
		{"@every 5m", "10m", "5", true, true},
		{"TZ=Europe/Paris 0 9 * * *", "1h", "1", true, true},
		{"* * * * *", "30s", "100%", true, true},
		{"*/0 * * * *", "1d", "-1", true, true},
		{"0 22-2 * * fri-mon", "1.5h", "150%", true, true},
		{"", "1h", "ten", false, true},
		{"@hourly", "", "99999999999999999999", true, false},
		{"", "", "10%", false, false},
		{"0 0 9 * * *", "8h0m0s", "%", true, true},
	}
	for _, s := range seeds {
		f.Add(s.schedule, s.duration, s.nodes, s.hasSchedule, s.hasDuration, uint16(21), uint8(1), int64(1736150400))
	}
	f.Fuzz(func(t *testing.T, schedule, duration, nodes string, hasSchedule, hasDuration bool, count uint16, disrupting uint8, unix int64) {
		b := Budget{Nodes: nodes}
		if hasSchedule {
			b.Schedule = &schedule
		}
		if hasDuration {
			b.Duration = &duration
		}
		_ = Validate([]Budget{b})
		_, _ = ParseDuration(duration)
		if fix := ScheduleFix(schedule); fix != "" {
			if _, err := ParseSchedule(fix); err != nil {
				t.Fatalf("ScheduleFix(%q) = %q, which does not parse: %v", schedule, fix, err)
			}
		}
		// Keep the clock within years robfig/cron handles (1970-2200).
		from := time.Unix(0, 0).UTC().Add(time.Duration(uint64(unix)%(230*365*24)) * time.Hour)
		set := CompileSet([]Budget{b, {Index: 1, Nodes: "10%", Reasons: []string{"Drifted"}}})
		now, err := set.Allowed(Disrupted(int(count), int(disrupting)), from)
		if err != nil {
			t.Fatal(err)
		}
		tl, err := set.Timeline(Disrupted(int(count), int(disrupting)), from, from.Add(48*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range Reasons {
			got, ok := tl.At(r, from)
			if !ok || !got.Same(now[r]) {
				t.Fatalf("%s at %s: timeline %+v, Allowed %+v", r, from, got, now[r])
			}
			if a := now[r]; !a.Unlimited && a.Count < 0 {
				t.Fatalf("%s: negative count %d", r, a.Count)
			}
		}
		_, _ = set.NextChange(Disrupted(int(count), int(disrupting)), from, time.Hour)
		// The firing table finds the windows Next finds hit by hit.
		if c := set.budgets[0]; c.fires != nil {
			if got, want := c.Windows(from, from.Add(48*time.Hour)), nextWindows(c, from, from.Add(48*time.Hour)); !sameWindows(got, want) {
				t.Fatalf("%q for %s from %s: firing %v, Next %v", schedule, duration, from, got, want)
			}
		}
		// Windows remembered from earlier inputs never answer for this one.
		start := MondayOnOrBefore(from)
		if got, want := set.AnalyzeSpanWith(start, fuzzSpanWindows), set.AnalyzeSpan(start); !reflect.DeepEqual(got, want) {
			t.Fatalf("span from %s: with remembered windows\n%+v\nwithout\n%+v", start, got, want)
		}
	})
}

var fuzzSpanWindows = NewSpanWindows(64)

// FuzzFromNodePool reads arbitrary JSON as a NodePool: errors, never panics.
func FuzzFromNodePool(f *testing.F) {
	f.Add(`{"spec":{"disruption":{"budgets":[{"nodes":"0","schedule":"@daily","duration":"1h","reasons":["Drifted"]}]}}}`)
	f.Add(`{"apiVersion":"karpenter.sh/v1beta1","spec":{"disruption":{"budgets":[{"nodes":1,"reasons":"x"}]}}}`)
	f.Add(`{"spec":{"disruption":{"budgets":null}}}`)
	f.Add(`{"spec":[]}`)
	f.Fuzz(func(_ *testing.T, doc string) {
		var content map[string]any
		if json.Unmarshal([]byte(doc), &content) != nil {
			return
		}
		budgets, err := FromNodePool(content)
		if err == nil {
			_ = Validate(budgets)
			_, _ = Allowed(budgets, Disrupted(10, 0), time.Unix(1736150400, 0))
		}
	})
}
