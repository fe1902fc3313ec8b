package budget

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/karpgate/karpgate/internal/fielderr"
)

// Effect says what happens to a NodePool carrying a problem.
type Effect string

const (
	// RejectedByAPIServer means the CRD schema or its CEL rule refuses the object,
	// so it never reaches Karpenter.
	RejectedByAPIServer Effect = "rejected"
	// BlocksEveryReason means the API server stores the object and Karpenter then
	// allows zero voluntary disruptions of the NodePool, for every reason.
	BlocksEveryReason Effect = "blocks"
)

// FieldError is one problem with a budget, located by field path, and what
// it does to the NodePool. Its Replacement, when known, is the value to write
// instead.
type FieldError struct {
	fielderr.FieldError
	Effect Effect
}

var nodesCRDPattern = regexp.MustCompile(`^((100|[0-9]{1,2})%|[0-9]+)$`)

// Validate checks budgets against the CRD of the newest Karpenter release
// (patterns, enum, CEL, maxItems) and against Karpenter's cron parser,
// which the CRD's loose pattern lets through. Problems come in field order.
func Validate(budgets []Budget) []FieldError {
	return ValidateFor(Reasons, budgets)
}

// ValidateFor is Validate for a release whose budgets can name reasons.
func ValidateFor(reasons []Reason, budgets []Budget) []FieldError {
	var errs []FieldError
	if len(budgets) > MaxBudgets {
		errs = append(errs, rejected(budgetsPath, fmt.Sprint(len(budgets)),
			fmt.Sprintf("%d budgets; the CRD allows at most %d", len(budgets), MaxBudgets), ""))
	}
	for _, b := range budgets {
		errs = append(errs, b.ValidateFor(reasons)...)
	}
	return errs
}

// rejected is a problem the CRD's schema or CEL refuses; replacement is
// the value to write instead, "" when none is known.
func rejected(path, value, problem, replacement string) FieldError {
	return FieldError{FieldError: fielderr.FieldError{Path: path, Value: value, Problem: problem, Replacement: replacement}, Effect: RejectedByAPIServer}
}

// Validate checks one budget; see the package-level Validate.
func (b Budget) Validate() []FieldError { return b.ValidateFor(Reasons) }

// ValidateFor checks one budget for a release whose budgets can name
// reasons; see the package-level Validate.
func (b Budget) ValidateFor(reasons []Reason) []FieldError {
	var errs []FieldError
	path := b.Path()
	if !nodesCRDPattern.MatchString(b.Nodes) {
		errs = append(errs, rejected(path+".nodes", b.Nodes,
			fmt.Sprintf("%q is not a node count; write a whole number (\"5\") or a percentage from 0%% to 100%% (\"10%%\")", b.Nodes),
			nodesFix(b.Nodes)))
	}
	if b.Schedule != nil {
		errs = append(errs, scheduleErrors(path+".schedule", *b.Schedule)...)
	}
	if b.Duration != nil {
		if _, err := ParseDuration(*b.Duration); err != nil {
			errs = append(errs, rejected(path+".duration", *b.Duration, err.Error(), ""))
		}
	}
	switch {
	case b.Schedule != nil && b.Duration == nil:
		errs = append(errs, rejected(path+".duration", "", "schedule is set without duration; the CRD requires both or neither (how long should each window last?)", ""))
	case b.Schedule == nil && b.Duration != nil:
		errs = append(errs, rejected(path+".schedule", "", "duration is set without schedule; the CRD requires both or neither (remove duration for an always-active budget)", ""))
	}
	for i, r := range b.Reasons {
		if reasonKnown(reasons, r) {
			continue
		}
		errs = append(errs, rejected(fmt.Sprintf("%s.reasons[%d]", path, i), r,
			fmt.Sprintf("%q is not a disruption reason; the reasons are %s (case matters)", r, ReasonNames(reasons, "and")),
			reasonFix(reasons, r)))
	}
	return errs
}

func scheduleErrors(path, expr string) []FieldError {
	_, err := ParseSchedule(expr)
	if err == nil {
		return nil
	}
	fe := FieldError{FieldError: fielderr.FieldError{Path: path, Value: expr, Replacement: ScheduleFix(expr)}, Effect: BlocksEveryReason}
	if ScheduleAcceptedByAPIServer(expr) {
		fe.Problem = fmt.Sprintf("%q is not a valid cron: %v; the API server accepts it, then Karpenter allows zero voluntary disruptions of this NodePool for every reason", expr, err)
	} else {
		fe.Effect = RejectedByAPIServer
		fe.Problem = fmt.Sprintf("%q is not a valid cron: %v; the API server rejects it (five fields or one of @yearly, @monthly, @weekly, @daily, @hourly)", expr, err)
	}
	return []FieldError{fe}
}

func reasonKnown(reasons []Reason, r string) bool {
	for _, known := range reasons {
		if string(known) == r {
			return true
		}
	}
	return false
}

// reasonFix spells a reason that differs from a real one only by case.
func reasonFix(reasons []Reason, r string) string {
	for _, known := range reasons {
		if strings.EqualFold(string(known), r) {
			return string(known)
		}
	}
	return ""
}

// nodesFix suggests a node count for a common near miss, or "".
func nodesFix(nodes string) string {
	trimmed := strings.TrimSpace(nodes)
	if trimmed != nodes && nodesCRDPattern.MatchString(trimmed) {
		return trimmed
	}
	if pct, err := strconv.Atoi(strings.TrimSuffix(trimmed, "%")); err == nil && strings.HasSuffix(trimmed, "%") && pct > 100 {
		return "100%"
	}
	return ""
}
