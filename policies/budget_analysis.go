package policies

import (
	"slices"
	"time"

	"github.com/karpgate/karpgate/disruption/budget"
)

// analysisNodes is the node count the analysis assumes. Whether a reason
// is unlimited or held at zero does not depend on it (percentages round up,
// so only 0 and 0% give zero).
const analysisNodes = 100

const week = 7 * 24 * time.Hour

// analyzeBudgets summarises what a NodePool's budgets mean over two weeks
// from the Monday (00:00 UTC) on or before now; the second week tells a
// weekly pattern from one that changes through the month. Invalid budgets
// are reported by karpgate.budgets.problems, so an unreadable or blocked
// NodePool gets no analysis beyond saying so.
func analyzeBudgets(pool map[string]any, now time.Time) map[string]any {
	budgets, err := budget.FromNodePool(pool)
	if err != nil {
		return map[string]any{"readable": false, "blocked": false}
	}
	set := budget.CompileSet(budgets)
	out := map[string]any{"readable": true, "blocked": false}
	for _, c := range set.Budgets() {
		if c.Blocked() != "" {
			out["blocked"] = true
			return out
		}
	}
	start := mondayOnOrBefore(now)
	end := start.Add(2 * week)
	var list []any
	for _, c := range set.Budgets() {
		entry := map[string]any{
			"index":       c.Index,
			"path":        c.Path(),
			"nodes":       c.Nodes,
			"scheduled":   c.Schedule != nil,
			"neverFires":  false,
			"neverActive": false,
		}
		if c.Schedule != nil {
			neverFires := c.NeverFires(now)
			entry["neverFires"] = neverFires
			// Only a budget idle for these two weeks needs the year-long look.
			entry["neverActive"] = !neverFires && len(c.Windows(start, end)) == 0 &&
				c.Reach(now, now.Add(budget.MaxTimelineSpan)) == budget.ActiveNever
		}
		list = append(list, entry)
	}
	out["budgets"] = list
	timeline, err := set.Timeline(analysisNodes, 0, start, end)
	if err != nil {
		return out
	}
	reasons := map[string]any{}
	for _, r := range budget.Reasons {
		reasons[string(r)] = analyzeReason(set, r, timeline[r], start)
	}
	out["reasons"] = reasons
	return out
}

func analyzeReason(set *budget.Set, r budget.Reason, stretches []budget.Stretch, start time.Time) map[string]any {
	neverAllowed := len(stretches) > 0
	var binding []any
	var unlimited []budget.Window
	for _, s := range stretches {
		if s.Unlimited {
			neverAllowed = false
			unlimited = append(unlimited, budget.Window{From: s.From, To: s.To})
			continue
		}
		if s.Blocked || s.Limit != 0 {
			neverAllowed = false
		}
		for _, i := range s.Binding {
			if !slices.Contains(binding, any(i)) {
				binding = append(binding, i)
			}
		}
	}
	var scheduled []any
	for _, c := range set.Budgets() {
		if c.Schedule != nil && c.AppliesTo(r) {
			scheduled = append(scheduled, c.Index)
		}
	}
	out := map[string]any{
		"neverAllowed":    neverAllowed,
		"binding":         orEmpty(binding),
		"scheduled":       orEmpty(scheduled),
		"alwaysUnlimited": len(unlimited) == 1 && unlimited[0].From.Equal(start) && unlimited[0].To.Equal(start.Add(2*week)),
		"unlimited":       "",
	}
	if len(unlimited) > 0 && !out["alwaysUnlimited"].(bool) {
		out["unlimited"] = describeWindows(unlimited, start)
	}
	return out
}

func orEmpty(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

func mondayOnOrBefore(t time.Time) time.Time {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	back := (int(day.Weekday()) + 6) % 7 // Monday = 0
	return day.AddDate(0, 0, -back)
}
