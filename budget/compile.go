package budget

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Compiled is a budget parsed once, as Karpenter reads it at runtime. It
// answers every question about the budget without parsing again.
type Compiled struct {
	Budget
	// always: no schedule and no duration.
	always   bool
	schedule cron.Schedule
	// fires lists the schedule's hits; nil unless it is a parsed cron
	// (@every is not).
	fires    *firing
	duration time.Duration
	// blocked is why Karpenter fails closed on this budget whatever the
	// time: its schedule does not parse.
	blocked string
	// nodesErr is why the node count cannot be computed; Karpenter fails
	// closed on it only while the budget is active.
	nodesErr string
	nodes    int
	percent  bool
}

// Compile parses b the way Karpenter's runtime does, which is looser than the
// CRD: a schedule without a duration gets a zero duration (never active), a
// duration without a schedule parses "" and fails (blocks every reason).
// Use Validate for what the API server would refuse.
func Compile(b Budget) *Compiled {
	c := &Compiled{Budget: b}
	c.compileNodes()
	if b.Schedule == nil && b.Duration == nil {
		c.always = true
		return c
	}
	expr := ""
	if b.Schedule != nil {
		expr = *b.Schedule
	}
	s, err := ParseSchedule(expr)
	if err != nil {
		c.blocked = fmt.Sprintf("%s.schedule %q is not a valid cron: %v", b.Path(), expr, err)
		if b.Schedule == nil {
			c.blocked = fmt.Sprintf("%s has a duration but no schedule, and Karpenter parses the missing schedule as an invalid cron (%v)", b.Path(), err)
		}
		if fix := ScheduleFix(expr); fix != "" {
			c.blocked += fmt.Sprintf("; use %q", fix)
		}
		return c
	}
	c.schedule = s
	if spec, ok := s.(*cron.SpecSchedule); ok {
		c.fires = newFiring(spec)
	}
	if b.Duration != nil {
		// Karpenter decodes durations with time.ParseDuration; the CRD pattern
		// is enforced by the API server, not by the runtime.
		d, err := time.ParseDuration(*b.Duration)
		if err != nil {
			c.blocked = fmt.Sprintf("%s.duration %q cannot be read as a duration: %v", b.Path(), *b.Duration, err)
			c.schedule, c.fires = nil, nil
			return c
		}
		c.duration = d
	}
	return c
}

// compileNodes reads nodes as Karpenter does: an integer when strconv.Atoi
// accepts it, otherwise a percentage ending in "%". Karpenter keeps the
// integer in an int32 (intstr.FromInt), so a count the CRD's pattern lets
// through beyond 2147483647 wraps: "4294967297" allows 1.
func (c *Compiled) compileNodes() {
	if n, err := strconv.Atoi(c.Nodes); err == nil {
		c.nodes = int(int32(n))
		return
	}
	pct, found := strings.CutSuffix(c.Nodes, "%")
	n, err := strconv.Atoi(pct)
	if !found || err != nil {
		c.nodesErr = fmt.Sprintf("%s.nodes %q is neither a whole number nor a percentage", c.Path(), c.Nodes)
		return
	}
	c.nodes, c.percent = n, true
}

// Blocked returns why Karpenter blocks every reason of the NodePool because
// of this budget at all times, or "".
func (c *Compiled) Blocked() string { return c.blocked }

// Active reports whether the budget restricts disruptions at now, with
// Karpenter's exact test: the first schedule hit after now-duration is not
// after now, i.e. a hit lies in (now-duration, now]. A schedule that never
// fires makes robfig/cron return the zero time, which passes that test, so
// such a budget is always active. A blocked budget is never active.
func (c *Compiled) Active(now time.Time) bool {
	if c.always {
		return true
	}
	if c.schedule == nil {
		return false
	}
	now = now.UTC()
	return !c.schedule.Next(now.Add(-c.duration)).After(now)
}

// Limit is the budget's node count for a NodePool of nodes nodes:
// percentages round up, as Karpenter's do (10% of 1 node is 1).
func (c *Compiled) Limit(nodes int) (int, error) {
	if c.nodesErr != "" {
		return 0, fmt.Errorf("%s", c.nodesErr)
	}
	if !c.percent {
		return c.nodes, nil
	}
	// The same float rounding as apimachinery's GetScaledValueFromIntOrPercent,
	// which Karpenter calls with roundUp.
	return int(math.Ceil(float64(c.nodes) * float64(nodes) / 100)), nil
}

// AppliesTo reports whether the budget restricts reason r.
func (c *Compiled) AppliesTo(r Reason) bool { return c.appliesTo(r) }
