// Package fielderr holds FieldError, the one shape of "this field is wrong" in karpgate:
// the field's path, the value as written, the problem and the fix. The
// conversion, budget and CLI layers all report bad input through it, so
// every message reads `spec.disruption.budgets[1].schedule: "0 9 * * sat-sun"
// is not a valid cron: ...; use "0 9 * * sat,sun"` the same way.
package fielderr

import (
	"strconv"
	"strings"
)

// FieldError is a problem with one field of an object.
type FieldError struct {
	// Path names the field: spec.disruption.budgets[1].schedule, or
	// metadata.annotations[compatibility.karpenter.sh/v1beta1-kubelet-conversion].
	Path string
	// Value is the value as written; "" when the field is absent or not a
	// scalar.
	Value string
	// Problem says what is wrong, with a parser's own words where it has
	// some.
	Problem string
	// Fix says what to do, as a phrase ("remove spec.kubelet"); "" when
	// Replacement says it or nothing is known.
	Fix string
	// Replacement is the value to write instead, when one is known.
	Replacement string
}

// Error reads "path: problem; fix", or "path: problem; use "replacement"".
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	switch {
	case e.Fix != "":
		b.WriteString("; ")
		b.WriteString(e.Fix)
	case e.Replacement != "":
		b.WriteString("; use ")
		b.WriteString(e.QuotedReplacement())
	}
	return b.String()
}

// QuotedReplacement is Replacement quoted as messages show it
// (`"sat,sun"`), or "" when there is none.
func (e *FieldError) QuotedReplacement() string {
	if e.Replacement == "" {
		return ""
	}
	return strconv.Quote(e.Replacement)
}
