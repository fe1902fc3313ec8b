package policies

import (
	"testing"
	"time"

	"github.com/karpgate/karpgate/disruption/budget"
)

// monday is the start of the two weeks described: Monday 3 June 2024.
var monday = time.Date(2024, 6, 3, 0, 0, 0, 0, time.UTC)

// weekly repeats windows given as (day offset, start hour, length) over
// both weeks.
func weekly(spec ...[3]float64) []budget.Window {
	var out []budget.Window
	for w := 0; w < 2; w++ {
		for _, s := range spec {
			from := monday.AddDate(0, 0, 7*w+int(s[0])).Add(time.Duration(s[1] * float64(time.Hour)))
			out = append(out, budget.Window{From: from, To: from.Add(time.Duration(s[2] * float64(time.Hour)))})
		}
	}
	return out
}

func TestDescribeWindows(t *testing.T) {
	hourly := func() []budget.Window {
		var spec [][3]float64
		for d := 0; d < 7; d++ {
			for h := 0; h < 24; h += 2 {
				spec = append(spec, [3]float64{float64(d), float64(h), 1})
			}
		}
		return weekly(spec...)
	}
	tests := []struct {
		name string
		ws   []budget.Window
		want string
	}{
		{"business days", weekly([3]float64{0, 9, 8}, [3]float64{1, 9, 8}, [3]float64{2, 9, 8}, [3]float64{3, 9, 8}, [3]float64{4, 9, 8}),
			"every week: Mon–Fri 09:00–17:00 (UTC)"},
		{"nights cross midnight", weekly([3]float64{0, 22, 8}, [3]float64{1, 22, 8}, [3]float64{2, 22, 8}),
			"every week: Mon–Wed 22:00–06:00 next day (UTC)"},
		{"until midnight", weekly([3]float64{5, 18, 6}),
			"every week: Sat 18:00–24:00 (UTC)"},
		{"weekend joins across the week boundary", append(
			[]budget.Window{{From: monday, To: monday.Add(9 * time.Hour)}},
			append(weekly([3]float64{2, 12, 1})[:1], budget.Window{From: monday.AddDate(0, 0, 5).Add(9 * time.Hour), To: monday.AddDate(0, 0, 7).Add(9 * time.Hour)},
				weekly([3]float64{2, 12, 1})[1], budget.Window{From: monday.AddDate(0, 0, 12).Add(9 * time.Hour), To: monday.AddDate(0, 0, 14)})...),
			"every week: Wed 12:00–13:00 and Sat 09:00–Mon 09:00 (UTC)"},
		{"only in the first week", []budget.Window{{From: monday.AddDate(0, 0, 2), To: monday.AddDate(0, 0, 2).Add(time.Hour)}},
			"in the week of Monday 2024-06-03: Wed 00:00–01:00 (UTC)"},
		{"too many to list", hourly(),
			"every week: Mon–Sun 00:00–01:00, Mon–Sun 02:00–03:00, Mon–Sun 04:00–05:00, Mon–Sun 06:00–07:00, Mon–Sun 08:00–09:00, Mon–Sun 10:00–11:00 and 6 more (UTC)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeWindows(tt.ws, monday); got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestAnalyzeBudgets(t *testing.T) {
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
	reason := func(a map[string]any, r string) map[string]any {
		return a["reasons"].(map[string]any)[r].(map[string]any)
	}

	a := analyzeBudgets(pool(b("nodes", "0", "reasons", []any{"Drifted"})), wednesday)
	if d := reason(a, "Drifted"); d["neverAllowed"] != true || d["unlimited"] != "" {
		t.Errorf("always-active zero: %v", d)
	}
	if e := reason(a, "Empty"); e["alwaysUnlimited"] != true || e["neverAllowed"] != false {
		t.Errorf("uncovered reason: %v", e)
	}

	a = analyzeBudgets(pool(b("nodes", "0", "schedule", "0 9 * * sat-sun", "duration", "24h")), wednesday)
	if a["blocked"] != true || a["reasons"] != nil {
		t.Errorf("invalid cron must block and skip the analysis: %v", a)
	}

	a = analyzeBudgets(pool(b("nodes", "1", "schedule", "0 0 30 2 *", "duration", "1h"), b("nodes", "1", "schedule", "@daily", "duration", "0m")), wednesday)
	list := a["budgets"].([]any)
	if list[0].(map[string]any)["neverFires"] != true || list[1].(map[string]any)["neverActive"] != true || list[0].(map[string]any)["neverActive"] != false {
		t.Errorf("never fires / never active: %v", list)
	}

	a = analyzeBudgets(map[string]any{"spec": map[string]any{"disruption": map[string]any{"budgets": "x"}}}, wednesday)
	if a["readable"] != false {
		t.Errorf("unreadable budgets: %v", a)
	}

	// The week is the one containing now, whatever day now is.
	sunday := monday.AddDate(0, 0, 6).Add(23 * time.Hour)
	if got := mondayOnOrBefore(sunday); !got.Equal(monday) {
		t.Errorf("mondayOnOrBefore(%s) = %s", sunday, got)
	}
	if got := mondayOnOrBefore(monday); !got.Equal(monday) {
		t.Errorf("mondayOnOrBefore(monday) = %s", got)
	}
}
