package report

import (
	"encoding/json"
	"io"
	"time"

	"github.com/karpgate/karpgate/budget"
)

// The JSON shapes are this package's contract with scripts: an unlimited
// allowance has "unlimited": true and no "allowed" number.
type (
	jsonReport struct {
		From       string `json:"from"`
		To         string `json:"to"`
		Nodes      int    `json:"nodes"`
		Disrupting int    `json:"disrupting"`
		NotReady   int    `json:"notReady,omitempty"`
		// Karpenter is the release whose rules are applied, when asked for;
		// Reasons are its reasons, the keys of every allowance map.
		Karpenter string          `json:"karpenter,omitempty"`
		Reasons   []budget.Reason `json:"reasons"`
		// Timezone is the display zone of the text and SVG outputs; JSON
		// times stay in UTC. Shifts are its daylight-saving changes.
		Timezone  string         `json:"timezone"`
		Shifts    []budget.Shift `json:"shifts,omitempty"`
		NodePools []jsonPool     `json:"nodePools"`
	}
	jsonPool struct {
		Name       string                          `json:"name"`
		Source     string                          `json:"source"`
		Line       int                             `json:"line"`
		APIVersion string                          `json:"apiVersion"`
		Note       string                          `json:"note,omitempty"`
		Error      string                          `json:"error,omitempty"`
		Budgets    []jsonBudget                    `json:"budgets"`
		Problems   []jsonProblem                   `json:"problems"`
		Rejected   bool                            `json:"rejected,omitempty"`
		Blocked    string                          `json:"blocked,omitempty"`
		At         []jsonInstant                   `json:"at"`
		Timeline   map[budget.Reason][]jsonStretch `json:"timeline"`
	}
	jsonBudget struct {
		Index     int       `json:"index"`
		Nodes     string    `json:"nodes"`
		Schedule  *string   `json:"schedule,omitempty"`
		Duration  *string   `json:"duration,omitempty"`
		Reasons   *[]string `json:"reasons,omitempty"`
		Defaulted bool      `json:"defaulted,omitempty"`
		Note      string    `json:"note,omitempty"`
		// LocalTime says when the windows open and close on the display
		// clock, shifts included.
		LocalTime string `json:"localTime,omitempty"`
	}
	jsonProblem struct {
		Path    string `json:"path"`
		Line    int    `json:"line"`
		Column  int    `json:"column"`
		Value   string `json:"value,omitempty"`
		Problem string `json:"problem"`
		Fix     string `json:"fix,omitempty"`
		Effect  string `json:"effect"`
	}
	jsonInstant struct {
		Time    string                          `json:"time"`
		Reasons map[budget.Reason]jsonAllowance `json:"reasons"`
	}
	jsonAllowance struct {
		Allowed   *int   `json:"allowed,omitempty"`
		Unlimited bool   `json:"unlimited,omitempty"`
		Blocked   bool   `json:"blocked,omitempty"`
		Binding   []int  `json:"binding,omitempty"`
		Why       string `json:"why"`
	}
	jsonStretch struct {
		From string `json:"from"`
		To   string `json:"to"`
		jsonAllowance
	}
)

// WriteJSON writes the report for scripts. Times are RFC 3339 in UTC.
func WriteJSON(w io.Writer, r *Report) error {
	out := jsonReport{From: stamp(r.From), To: stamp(r.To), Nodes: r.Nodes, Disrupting: r.Disrupting, NotReady: r.NotReady,
		Karpenter: r.Karpenter, Reasons: r.Reasons, Timezone: r.Location.String(), Shifts: r.Shifts(), NodePools: []jsonPool{}}
	for _, p := range r.Pools {
		out.NodePools = append(out.NodePools, toJSONPool(p, r))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func toJSONPool(p *Pool, r *Report) jsonPool {
	jp := jsonPool{Name: p.Name, Source: p.Source, Line: p.Line, APIVersion: p.APIVersion, Note: p.Note,
		Budgets: []jsonBudget{}, Problems: []jsonProblem{}, At: []jsonInstant{}, Timeline: map[budget.Reason][]jsonStretch{}}
	if p.ReadError != nil {
		jp.Error = p.ReadError.Error()
		return jp
	}
	local := r.LocalEdges(p)
	for _, b := range p.Budgets {
		jb := jsonBudget{Index: b.Index, Nodes: b.Nodes, Schedule: b.Schedule, Duration: b.Duration, Defaulted: b.Defaulted,
			Note: p.BudgetNotes[b.Index], LocalTime: local[b.Index]}
		if b.Reasons != nil {
			jb.Reasons = &b.Reasons
		}
		jp.Budgets = append(jp.Budgets, jb)
	}
	for _, pr := range p.Problems {
		jp.Problems = append(jp.Problems, jsonProblem{Path: pr.Path, Line: pr.Line, Column: pr.Column, Value: pr.Value,
			Problem: pr.Problem, Fix: pr.QuotedReplacement(), Effect: string(pr.Effect)})
	}
	jp.Rejected = p.Rejected()
	jp.Blocked = p.BlockedThroughout()
	allowance := func(reason budget.Reason, a budget.Allowance) jsonAllowance {
		ja := jsonAllowance{Unlimited: a.Unlimited, Blocked: a.Blocked, Binding: a.Binding, Why: p.Why(reason, a, r.Counts())}
		if !a.Unlimited {
			n := a.Count
			ja.Allowed = &n
		}
		return ja
	}
	for _, in := range p.Instants {
		ji := jsonInstant{Time: stamp(in.At), Reasons: map[budget.Reason]jsonAllowance{}}
		for reason, a := range in.Allowed {
			ji.Reasons[reason] = allowance(reason, a)
		}
		jp.At = append(jp.At, ji)
	}
	for reason, stretches := range p.Timeline {
		for _, s := range stretches {
			jp.Timeline[reason] = append(jp.Timeline[reason], jsonStretch{From: stamp(s.From), To: stamp(s.To), jsonAllowance: allowance(reason, s.Allowance)})
		}
	}
	return jp
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
