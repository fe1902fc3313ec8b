package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/manifest"
)

// Options are the questions asked of every NodePool.
type Options struct {
	// Nodes is what percentages are of. Disrupting nodes (being deleted or
	// replaced) use up every reason's budget; NotReady nodes every reason's
	// but Unhealthy's, as Karpenter v1.15 counts them.
	Nodes, Disrupting, NotReady int
	// Karpenter names the release whose rules are applied, for people
	// ("v1.15"); Reasons are its reasons (budget.ReasonsOf). Empty: the
	// newest release karpgate knows.
	Karpenter string
	Reasons   []budget.Reason
	// From and To bound the timeline; the maths is in UTC.
	From, To time.Time
	// Now, when inside [From, To), is marked on the chart.
	Now time.Time
	// At lists instants to report allowances at (JSON); empty means From.
	At []time.Time
	// Location is for display only.
	Location *time.Location
}

// Report is the explanation of every NodePool found in the input.
type Report struct {
	Options
	Pools []*Pool
}

// Pool is one NodePool's explanation.
type Pool struct {
	Name       string
	Source     string
	Line       int
	APIVersion string
	// Note says how a v1beta1 NodePool was read.
	Note    string
	Budgets []budget.Budget
	// BudgetNotes says, by budget index, what is surprising about a budget's
	// meaning (never fires, always active, restricts nothing).
	BudgetNotes map[int]string
	// ReadError: spec.disruption.budgets could not be read; nothing else is
	// computed.
	ReadError error
	Problems  []Problem
	Timeline  budget.Stretches
	Instants  []Instant
}

// Problem is a budget problem located in its source file.
type Problem struct {
	budget.FieldError
	manifest.Position
}

// Instant is every reason's allowance at one time.
type Instant struct {
	At      time.Time
	Allowed map[budget.Reason]budget.Allowance
}

// v1beta1Note explains how a v1beta1 NodePool is read: its budgets have the
// v1 layout minus reasons, and Karpenter v1 serves them through conversion.
const v1beta1Note = "v1beta1: read as Karpenter v1 converts it, every budget restricting every reason; run `karpgate convert` to move to v1"

// IsNodePool reports whether o is a Karpenter NodePool at a known version.
func IsNodePool(o *manifest.Object) bool {
	k, _, ok := karpenter.LookupKind(o.APIVersion(), o.Kind())
	return ok && k.Kind == karpenter.KindNodePool
}

// Counts are the node counts asked about, as the budget maths takes them.
func (o Options) Counts() budget.Counts {
	return budget.Counts{Nodes: o.Nodes, Disrupting: o.Disrupting + o.NotReady, NotReady: o.NotReady}
}

// Build explains every NodePool among objects; other objects are ignored.
func Build(objects []*manifest.Object, opts Options) (*Report, error) {
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	if opts.Reasons == nil {
		opts.Reasons = budget.Reasons
	}
	if len(opts.At) == 0 {
		opts.At = []time.Time{opts.From}
	}
	r := &Report{Options: opts}
	for _, o := range objects {
		if !IsNodePool(o) {
			continue
		}
		p, err := explainPool(o, opts)
		if err != nil {
			return nil, err
		}
		r.Pools = append(r.Pools, p)
	}
	return r, nil
}

func explainPool(o *manifest.Object, opts Options) (*Pool, error) {
	p := &Pool{Name: o.Name(), Source: o.DisplaySource(), APIVersion: o.APIVersion()}
	if o.Node != nil {
		p.Line = o.Node.Line
	}
	if p.Name == "" {
		p.Name = "<unnamed>"
	}
	if strings.HasSuffix(p.APIVersion, "/"+karpenter.V1Beta1) {
		p.Note = v1beta1Note
	}
	p.Budgets, p.ReadError = budget.FromNodePool(o.Content)
	if p.ReadError != nil {
		return p, nil //nolint:nilerr // the report carries the read error per NodePool; other NodePools still render
	}
	for _, fe := range budget.ValidateFor(opts.Reasons, p.Budgets) {
		p.Problems = append(p.Problems, Problem{FieldError: fe, Position: o.Position(fe.Path)})
	}
	if p.Rejected() {
		return p, nil
	}
	set := budget.CompileSetFor(opts.Reasons, p.Budgets)
	p.BudgetNotes = budgetNotes(set, opts.From, opts.To)
	var err error
	if p.Timeline, err = set.Timeline(opts.Counts(), opts.From, opts.To); err != nil {
		return nil, err
	}
	for _, at := range opts.At {
		allowed, err := set.Allowed(opts.Counts(), at)
		if err != nil {
			return nil, err
		}
		p.Instants = append(p.Instants, Instant{At: at, Allowed: allowed})
	}
	return p, nil
}

// Invalid reports whether any NodePool has budgets that cannot be read, that
// the API server would reject, or that make Karpenter block disruption.
func (r *Report) Invalid() bool {
	for _, p := range r.Pools {
		if p.ReadError != nil || len(p.Problems) > 0 {
			return true
		}
	}
	return false
}

// Rejected reports whether the API server would refuse the NodePool as
// written, in which case Karpenter never runs these budgets and no timeline
// is computed.
func (p *Pool) Rejected() bool {
	for _, pr := range p.Problems {
		if pr.Effect == budget.RejectedByAPIServer {
			return true
		}
	}
	return false
}

// budgetNotes explains the budgets whose meaning surprises people.
func budgetNotes(set *budget.Set, from, to time.Time) map[int]string {
	notes := map[int]string{}
	for _, c := range set.Budgets() {
		switch {
		case c.Blocked() != "":
		case c.Reasons != nil && len(c.Reasons) == 0:
			notes[c.Index] = "reasons: [] restricts no reason"
		case c.Schedule == nil:
		case c.NeverFires(from):
			notes[c.Index] = "the schedule never fires, and Karpenter reads that as active: it is always active"
		case c.Reach(from, to) == budget.ActiveAlways:
			notes[c.Index] = "each window lasts until the next one opens: it is always active"
		case c.Reach(from, to) == budget.ActiveNever:
			notes[c.Index] = "never active in this range"
		}
	}
	return notes
}

// BlockedThroughout returns the cause when every reason is blocked over the
// whole range, which is how an invalid schedule shows: "" otherwise.
func (p *Pool) BlockedThroughout() string {
	cause := ""
	for r := range p.Timeline {
		ss := p.Timeline[r]
		if len(ss) != 1 || !ss[0].Blocked {
			return ""
		}
		cause = ss[0].Cause
	}
	return cause
}

// Why says in words where an allowance comes from.
func (p *Pool) Why(r budget.Reason, a budget.Allowance, counts budget.Counts) string {
	switch {
	case a.Blocked:
		return "blocked: " + a.Cause
	case a.Unlimited:
		return fmt.Sprintf("no active budget covers %s", r)
	}
	var parts []string
	for _, i := range a.Binding {
		b := p.budgetAt(i)
		name := fmt.Sprintf("budgets[%d]", i)
		if b.Defaulted {
			name = "default budget"
		}
		if strings.HasSuffix(b.Nodes, "%") {
			parts = append(parts, fmt.Sprintf("%s: %s of %d nodes = %d", name, b.Nodes, counts.Nodes, a.Limit))
		} else {
			parts = append(parts, fmt.Sprintf("%s: nodes %q", name, b.Nodes))
		}
	}
	s := strings.Join(parts, " and ")
	if consuming := counts.Consuming(r); consuming > 0 && a.Limit > 0 {
		s += fmt.Sprintf(", minus %d disrupting", consuming)
	}
	return s
}

func (p *Pool) budgetAt(index int) budget.Budget {
	for _, b := range p.Budgets {
		if b.Index == index {
			return b
		}
	}
	return budget.Budget{Index: index}
}

// SameStretches reports whether two reasons have identical timelines, so
// renderers can say "same as Underutilized" instead of repeating it.
func SameStretches(a, b []budget.Stretch) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].From.Equal(b[i].From) || !a[i].To.Equal(b[i].To) || !a[i].Same(b[i].Allowance) {
			return false
		}
	}
	return true
}
