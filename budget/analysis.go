package budget

import (
	"slices"
	"time"
)

// analysisNodes is the node count Analyze assumes. Whether a reason is
// unlimited or held at zero does not depend on it (percentages round up, so
// only 0 and 0% give zero).
const analysisNodes = 100

// Week is the period budget descriptions repeat over.
const Week = 7 * 24 * time.Hour

// Analysis is what a NodePool's budgets mean over AnalysisSpan from the
// Monday (00:00 UTC) on or before an instant: the lint rules about budgets
// that never open, never fire, or leave a reason unlimited read it.
type Analysis struct {
	// Readable is false when the budgets have values of the wrong type;
	// Problems reports those.
	Readable bool
	// Blocked is true when a schedule Karpenter cannot parse blocks every
	// reason; nothing else is analysed then.
	Blocked bool
	// Start is the Monday the analysed span starts on.
	Start   time.Time
	Budgets []BudgetAnalysis
	// Reasons is nil when the budgets are unreadable or blocked.
	Reasons map[Reason]ReasonAnalysis
}

// BudgetAnalysis is one budget's schedule, seen over the analysed span.
type BudgetAnalysis struct {
	Index     int
	Path      string
	Nodes     string
	Scheduled bool
	// NeverFires: the cron has no hit in the next five years, which
	// Karpenter reads as always active.
	NeverFires bool
	// NeverActive: the cron fires but the budget is active for no instant
	// in the next year (a zero duration, say).
	NeverActive bool
	// idleInSpan: the budget has no window in the analysed span.
	idleInSpan bool
}

// ReasonAnalysis is one disruption reason over the analysed span.
type ReasonAnalysis struct {
	// NeverAllowed: every stretch allows zero disruptions.
	NeverAllowed bool
	// Binding are the indexes of the budgets that set the limit at some
	// point, in order of first appearance.
	Binding []int
	// Scheduled are the indexes of the scheduled budgets that apply.
	Scheduled []int
	// AlwaysUnlimited: no budget ever restricts the reason.
	AlwaysUnlimited bool
	// Unlimited are the windows in which no budget restricts the reason,
	// when there are some but not always; UnlimitedText says them in words.
	Unlimited     []Window
	UnlimitedText string
}

// AnalysisSpan is two weeks: the second tells a weekly pattern from one that
// changes through the month.
const AnalysisSpan = 2 * Week

// Analyze reads the budgets of an unstructured NodePool and analyses them
// over AnalysisSpan from the Monday on or before now.
func Analyze(pool map[string]any, now time.Time) Analysis {
	budgets, err := FromNodePool(pool)
	if err != nil {
		return Analysis{}
	}
	return CompileSet(budgets).Analyze(now)
}

// Analyze analyses the set over AnalysisSpan from the Monday on or before now.
func (s *Set) Analyze(now time.Time) Analysis {
	return s.AnalyzeAt(s.AnalyzeSpan(MondayOnOrBefore(now)), now)
}

// AnalyzeSpan is the part of Analyze that depends only on the span's start
// (a Monday): everything but each budget's NeverFires and NeverActive,
// which depend on the instant. A caller that analyses the same budgets at
// many instants of a week (the policy engine, one admission request after
// another) computes the span once and calls AnalyzeAt for each instant.
func (s *Set) AnalyzeSpan(start time.Time) Analysis {
	return s.AnalyzeSpanWith(start, nil)
}

// AnalyzeSpanWith is AnalyzeSpan, taking each scheduled budget's windows
// from windows when it has them (nil: computed here).
func (s *Set) AnalyzeSpanWith(start time.Time, windows *SpanWindows) Analysis {
	out := Analysis{Readable: true}
	for _, c := range s.budgets {
		if c.Blocked() != "" {
			out.Blocked = true
			return out
		}
	}
	out.Start = start
	start = start.UTC()
	end := start.Add(AnalysisSpan)
	active := make([][]Window, len(s.budgets))
	for i, c := range s.budgets {
		entry := BudgetAnalysis{Index: c.Index, Path: c.Path(), Nodes: c.Nodes, Scheduled: c.Schedule != nil}
		active[i] = windows.of(c, start, end)
		if c.Schedule != nil {
			entry.idleInSpan = len(active[i]) == 0
		}
		out.Budgets = append(out.Budgets, entry)
	}
	timeline := s.timeline(Counts{Nodes: analysisNodes}, start, end, active)
	out.Reasons = make(map[Reason]ReasonAnalysis, len(s.reasons))
	for _, r := range s.reasons {
		out.Reasons[r] = s.analyzeReason(r, timeline[r], start)
	}
	return out
}

// AnalyzeAt completes span, the AnalyzeSpan of this set for the Monday on
// or before now, with what depends on now. span is not modified.
func (s *Set) AnalyzeAt(span Analysis, now time.Time) Analysis {
	if !span.Readable || span.Blocked {
		return span
	}
	out := span
	out.Budgets = slices.Clone(span.Budgets)
	for i := range out.Budgets {
		entry := &out.Budgets[i]
		c := s.budgets[i]
		if c.Schedule == nil {
			continue
		}
		entry.NeverFires = c.NeverFires(now)
		// Only a budget idle for the whole span needs the year-long look.
		entry.NeverActive = !entry.NeverFires && entry.idleInSpan &&
			c.Reach(now, now.Add(MaxTimelineSpan)) == ActiveNever
	}
	return out
}

func (s *Set) analyzeReason(r Reason, stretches []Stretch, start time.Time) ReasonAnalysis {
	out := ReasonAnalysis{NeverAllowed: len(stretches) > 0, Binding: []int{}, Scheduled: []int{}}
	var unlimited []Window
	for _, st := range stretches {
		if st.Unlimited {
			out.NeverAllowed = false
			unlimited = append(unlimited, Window{From: st.From, To: st.To})
			continue
		}
		if st.Blocked || st.Limit != 0 {
			out.NeverAllowed = false
		}
		for _, i := range st.Binding {
			if !slices.Contains(out.Binding, i) {
				out.Binding = append(out.Binding, i)
			}
		}
	}
	for _, c := range s.budgets {
		if c.Schedule != nil && c.AppliesTo(r) {
			out.Scheduled = append(out.Scheduled, c.Index)
		}
	}
	out.AlwaysUnlimited = len(unlimited) == 1 && unlimited[0].From.Equal(start) && unlimited[0].To.Equal(start.Add(AnalysisSpan))
	if len(unlimited) > 0 && !out.AlwaysUnlimited {
		out.Unlimited = unlimited
		out.UnlimitedText = DescribeWindows(unlimited, start)
	}
	return out
}

// MondayOnOrBefore is 00:00 UTC of the Monday on or before t.
func MondayOnOrBefore(t time.Time) time.Time {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	back := (int(day.Weekday()) + 6) % 7 // Monday = 0
	return day.AddDate(0, 0, -back)
}
