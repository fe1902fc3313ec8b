package preflight

import (
	"sort"
)

// Severity says how a finding weighs, as in lint.
type Severity string

// The severities: Deny blocks the upgrade, Warn should be fixed (and fails
// only with --fail-on-warn), Info is worth knowing.
const (
	Deny Severity = "deny"
	Warn Severity = "warn"
	Info Severity = "info"
)

var severityOrder = map[Severity]int{Deny: 0, Warn: 1, Info: 2}

// ObjectRef names an object a finding affects.
type ObjectRef struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// Where is file:line for objects read from files.
	Where string `json:"where,omitempty"`
	// Note says what about this object matters.
	Note string `json:"note,omitempty"`
}

// Fix is how to fix a finding: commands to run, in order, and edits to make
// (before the commands) where no command can know the right value.
type Fix struct {
	Edits    []string `json:"edits,omitempty"`
	Commands []string `json:"commands,omitempty"`
}

// Finding is one problem.
type Finding struct {
	ID       string      `json:"id"`
	Check    string      `json:"check"`
	Severity Severity    `json:"severity"`
	Title    string      `json:"title"`
	Detail   string      `json:"detail"`
	Objects  []ObjectRef `json:"objects"`
	Fix      Fix         `json:"fix"`
}

// Summary counts findings by severity.
type Summary struct {
	Deny  int  `json:"deny"`
	Warn  int  `json:"warn"`
	Info  int  `json:"info"`
	Ready bool `json:"ready"` // no deny findings
}

// Report is the outcome of a preflight.
type Report struct {
	Target string `json:"target"`
	// From is the release the upgrade starts from, and how it was read.
	From     Running        `json:"from"`
	Source   string         `json:"source"`
	Read     map[string]int `json:"read"` // objects read, by kind
	Findings []Finding      `json:"findings"`
	Summary  Summary        `json:"summary"`
}

// Exit codes, as lint's.
const (
	ExitReady      = 0 // no deny findings
	ExitDeny       = 1 // at least one deny finding
	ExitWarn       = 2 // warnings but no deny findings, with --fail-on-warn
	ExitUsage      = 3 // bad flags or unreadable input
	maxTextObjects = 10
)

// ExitCode maps the report to the process exit code.
func (r *Report) ExitCode(failOnWarn bool) int {
	switch {
	case r.Summary.Deny > 0:
		return ExitDeny
	case failOnWarn && r.Summary.Warn > 0:
		return ExitWarn
	}
	return ExitReady
}

// Find returns the findings with id, for tests and scripts.
func (r *Report) Find(id string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.ID == id {
			out = append(out, f)
		}
	}
	return out
}

func (r *Report) finish() {
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if severityOrder[a.Severity] != severityOrder[b.Severity] {
			return severityOrder[a.Severity] < severityOrder[b.Severity]
		}
		return a.ID < b.ID
	})
	r.Summary = Summary{}
	for _, f := range r.Findings {
		switch f.Severity {
		case Deny:
			r.Summary.Deny++
		case Warn:
			r.Summary.Warn++
		case Info:
			r.Summary.Info++
		}
	}
	r.Summary.Ready = r.Summary.Deny == 0
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
}
