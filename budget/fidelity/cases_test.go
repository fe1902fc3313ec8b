package fidelity

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/budget"
)

// fbudget is one budget as written, in the JSON the v1.0.8 oracle reads: a
// nil Schedule, Duration or Reasons is absent, an empty Reasons is [].
type fbudget struct {
	Nodes    string   `json:"nodes"`
	Schedule *string  `json:"schedule"`
	Duration *string  `json:"duration"`
	Reasons  []string `json:"reasons"`
}

// fcase is one question: a NodePool's budgets, its node count, an instant.
type fcase struct {
	Pool    int       `json:"-"`
	Budgets []fbudget `json:"budgets"`
	Nodes   int       `json:"nodes"`
	At      time.Time `json:"at"`
}

func (c fcase) String() string {
	var bs []string
	for _, b := range c.Budgets {
		s := fmt.Sprintf("{nodes %q", b.Nodes)
		if b.Schedule != nil {
			s += fmt.Sprintf(" schedule %q", *b.Schedule)
		}
		if b.Duration != nil {
			s += fmt.Sprintf(" duration %q", *b.Duration)
		}
		if b.Reasons != nil {
			s += fmt.Sprintf(" reasons %q", b.Reasons)
		}
		bs = append(bs, s+"}")
	}
	return fmt.Sprintf("%d nodes at %s, budgets [%s]", c.Nodes, c.At.Format(time.RFC3339), strings.Join(bs, ", "))
}

// Schedules: Karpenter's docs, windows that wrap midnight or the week, a
// schedule that never fires (always active), and crons the CRD accepts but
// Karpenter's parser rejects (every reason blocked).
var schedules = []string{
	"0 9 * * mon-fri", "0 17 * * mon-fri", "@daily", "@hourly", "@weekly", "@monthly", "@midnight", "@yearly",
	"*/15 * * * *", "30 2 * * *", "0 0 1 * *", "0 22 * * fri", "0 */6 * * *", "15 10 * * 1-5", "0 9 * * sat,sun",
	"0 0 30 2 *", "0 9 * * sat-sun", "0 9 * * 7", "0 25 * * *", "* * * *",
}

var durations = []string{"30m", "1h", "2h", "8h", "16h", "24h", "90m", "1h30m", "168h", "0m", "5m", "720h"}

var nodeCounts = []string{"0", "1", "2", "3", "5", "10", "0%", "1%", "10%", "20%", "25%", "33%", "34%", "50%", "99%", "100%"}

// runtimeOnly are node counts the CRD's pattern refuses (or lets through
// beyond int32) that Karpenter's code still has to read.
var runtimeOnly = []string{"4294967297", "2147483648", "150%", "-1", "+5", "ten", "", "5 %", "%", "007", "99999999999999999999"}

// generate makes pools NodePools of random budgets over reasons, each asked
// at instants random instants with a random node count.
func generate(seed uint64, reasons []budget.Reason, pools, instants int) []fcase {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var out []fcase
	for p := range pools {
		budgets := randomBudgets(rng, reasons)
		for range instants {
			out = append(out, fcase{Pool: p, Budgets: budgets, Nodes: randomNodeCount(rng), At: randomInstant(rng)})
		}
	}
	return out
}

func randomBudgets(rng *rand.Rand, reasons []budget.Reason) []fbudget {
	if rng.IntN(20) == 0 {
		return []fbudget{} // budgets: [], every reason unlimited
	}
	out := make([]fbudget, 1+rng.IntN(4))
	for i := range out {
		b := &out[i]
		b.Nodes = nodeCounts[rng.IntN(len(nodeCounts))]
		switch n := rng.IntN(50); {
		case n == 0:
			b.Nodes = runtimeOnly[rng.IntN(len(runtimeOnly))]
		case n < 10:
			b.Nodes = fmt.Sprint(rng.IntN(40))
		case n < 20:
			b.Nodes = fmt.Sprintf("%d%%", rng.IntN(101))
		}
		switch n := rng.IntN(20); {
		case n < 6: // always active
		case n == 6: // the CRD refuses these; Karpenter's code still reads them
			b.Schedule = ptr(randomSchedule(rng))
		case n == 7:
			b.Duration = ptr(durations[rng.IntN(len(durations))])
		default:
			b.Schedule = ptr(randomSchedule(rng))
			b.Duration = ptr(durations[rng.IntN(len(durations))])
		}
		b.Reasons = randomReasons(rng, reasons)
	}
	return out
}

func randomSchedule(rng *rand.Rand) string {
	if rng.IntN(3) == 0 {
		return fmt.Sprintf("%d %d * * %s", rng.IntN(60), rng.IntN(24), []string{"*", "mon-fri", "sat,sun", "0", "1-3"}[rng.IntN(5)])
	}
	return schedules[rng.IntN(len(schedules))]
}

func randomReasons(rng *rand.Rand, reasons []budget.Reason) []string {
	switch n := rng.IntN(20); {
	case n < 6:
		return nil // every reason
	case n == 6:
		return []string{} // no reason
	case n == 7: // the wrong case covers nothing
		return []string{strings.ToLower(string(reasons[rng.IntN(len(reasons))]))}
	}
	var out []string
	for _, r := range reasons {
		if rng.IntN(5) < 2 {
			out = append(out, string(r))
		}
	}
	if len(out) == 0 {
		out = []string{string(reasons[rng.IntN(len(reasons))])}
	}
	return out
}

func randomNodeCount(rng *rand.Rand) int {
	if rng.IntN(10) == 0 {
		return 0
	}
	return rng.IntN(200)
}

// randomInstant is within 2025-2026; most fall on a minute or an hour, where
// schedules fire and windows open and close.
func randomInstant(rng *rand.Rand) time.Time {
	t := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(2 * 365 * 24 * time.Hour))))
	switch rng.IntN(10) {
	case 0, 1, 2:
		return t.Truncate(time.Minute)
	case 3, 4:
		return t.Truncate(time.Hour)
	}
	return t.Truncate(time.Second)
}

func ptr(s string) *string { return &s }

// karpgateAllows is karpgate's answer in Karpenter's terms: the binding
// budgets' node count, 0 when budgets block every reason, and Karpenter's
// MaxInt32 for "unlimited" (a limit above it reads as unlimited to
// Karpenter too, which starts its minimum there).
func karpgateAllows(t testing.TB, reasons []budget.Reason, c fcase) map[budget.Reason]int {
	t.Helper()
	budgets := make([]budget.Budget, len(c.Budgets))
	for i, b := range c.Budgets {
		budgets[i] = budget.Budget{Index: i, Nodes: b.Nodes, Schedule: b.Schedule, Duration: b.Duration, Reasons: b.Reasons}
	}
	allowed, err := budget.CompileSetFor(reasons, budgets).Allowed(budget.Counts{Nodes: c.Nodes}, c.At)
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	out := make(map[budget.Reason]int, len(reasons))
	for _, r := range reasons {
		switch a := allowed[r]; {
		case a.Blocked:
			out[r] = 0
		case a.Unlimited:
			out[r] = math.MaxInt32
		default:
			out[r] = min(a.Limit, math.MaxInt32)
		}
	}
	return out
}

// tally counts agreeing answers per reason and per instant.
type tally struct {
	reasons    []budget.Reason
	perReason  map[budget.Reason]int
	instants   int
	agreed     int
	mismatches []string
}

func newTally(reasons []budget.Reason) *tally {
	return &tally{reasons: reasons, perReason: map[budget.Reason]int{}}
}

func (t *tally) add(c fcase, ours, theirs map[budget.Reason]int) {
	t.instants++
	all := true
	for _, r := range t.reasons {
		if ours[r] == theirs[r] {
			t.perReason[r]++
			continue
		}
		all = false
		if len(t.mismatches) < 10 {
			t.mismatches = append(t.mismatches, fmt.Sprintf("%s: karpgate %d, Karpenter %d; %s", r, ours[r], theirs[r], c))
		}
	}
	if all {
		t.agreed++
	}
}

// String is the report: "480/480 instants agree (Underutilized 480/480, ...)".
func (t *tally) String() string {
	parts := make([]string, len(t.reasons))
	for i, r := range t.reasons {
		parts[i] = fmt.Sprintf("%s %d/%d", r, t.perReason[r], t.instants)
	}
	return fmt.Sprintf("%d/%d instants agree (%s)", t.agreed, t.instants, strings.Join(parts, ", "))
}

func (t *tally) check(tb testing.TB, against string) {
	tb.Helper()
	tb.Logf("against %s: %s", against, t)
	if t.agreed != t.instants {
		tb.Errorf("karpgate and %s disagree: %s\n%s", against, t, strings.Join(t.mismatches, "\n"))
	}
}
