package policies

import (
	"strings"
	"time"

	"github.com/karpgate/karpgate/config"
)

// Finding is one rule's verdict on one object.
type Finding struct {
	RuleID string `json:"rule"`
	Title  string `json:"title"`
	// Severity is the rule's severity after configuration; Action is what
	// the finding does at the enforcement point evaluated.
	Severity config.Action `json:"severity"`
	Action   config.Action `json:"action"`
	Message  string        `json:"message"`
	// Package is the namespace of a conftest policy's finding (main), as
	// conftest reports it; "" for karpgate's rules, whose ID names them.
	Package string `json:"package,omitempty"`
	// Path is a Kubernetes field path such as
	// spec.disruption.budgets[1].schedule; "" means the whole object.
	Path string `json:"path"`
	Fix  string `json:"fix,omitempty"`
	// Waived findings carry the reason from the object's
	// karpgate.io/waive-<rule> annotation; they never deny.
	Waived       bool   `json:"waived,omitempty"`
	WaiverReason string `json:"waiverReason,omitempty"`
	// WaiverUntil is when the waiver stops applying, nil when it does not
	// expire; WaiverSetBy who added or last changed it, as karpgate
	// recorded at admission ("" when unknown).
	WaiverUntil *time.Time `json:"waiverUntil,omitempty"`
	WaiverSetBy string     `json:"waiverSetBy,omitempty"`
	// Patch is what a mutation rule would change: RFC 6902 operations on
	// the object. Reserved for the admission webhook's mutating handler;
	// lint only reports it.
	Patch []PatchOperation `json:"patch,omitempty"`
}

// PatchOperation is one RFC 6902 JSON patch operation.
type PatchOperation struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// String is the one-line form used in admission responses and logs:
// "KG201 spec.disruption.budgets[0].schedule: <message> (fix: <fix>)".
func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(f.RuleID)
	if f.Path != "" {
		b.WriteString(" ")
		b.WriteString(f.Path)
	}
	b.WriteString(": ")
	b.WriteString(f.Message)
	if f.Fix != "" {
		b.WriteString(" (fix: ")
		b.WriteString(f.Fix)
		b.WriteString(")")
	}
	return b.String()
}

// Result is the verdict on one object.
type Result struct {
	// Findings are the active findings, ordered by rule ID then path.
	Findings []Finding `json:"findings"`
	// Waived are the findings an annotation waived, in the same order.
	Waived []Finding `json:"waived,omitempty"`
}

// Denied reports whether any active finding denies.
func (r *Result) Denied() bool { return len(r.Denials()) > 0 }

// Denials returns the active findings that deny.
func (r *Result) Denials() []Finding { return r.withAction(config.Deny) }

// Warnings returns the active findings that warn.
func (r *Result) Warnings() []Finding { return r.withAction(config.Warn) }

// Audits returns the active findings whose action is audit: recorded, never
// shown to the writer of the object, never failing anything.
func (r *Result) Audits() []Finding { return r.withAction(config.Audit) }

func (r *Result) withAction(a config.Action) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Action == a {
			out = append(out, f)
		}
	}
	return out
}
