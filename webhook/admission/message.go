package admission

import (
	"fmt"
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/policies"
)

// denialMessage lists the deny findings one per line. The API server puts it
// after `admission webhook "validate.karpgate.io" denied the request: `.
func denialMessage(ref string, denials []policies.Finding) string {
	var b strings.Builder
	rules := "rule"
	if len(denials) > 1 {
		rules = "rules"
	}
	fmt.Fprintf(&b, "%s breaks %d karpgate %s:", ref, len(denials), rules)
	for _, f := range denials {
		b.WriteString("\n")
		b.WriteString(oneLine(f.String()))
	}
	return b.String()
}

// refusalMessage is denialMessage after the reasons the object cannot be
// stored as written (restore records, a failed conversion), one a line.
func refusalMessage(ref string, refusals []string, denials []policies.Finding) string {
	if len(refusals) == 0 {
		return denialMessage(ref, denials)
	}
	msg := ref + " cannot be stored as written:\n" + strings.Join(refusals, "\n")
	if len(denials) > 0 {
		msg += "\n" + denialMessage(ref, denials)
	}
	return msg
}

// warning is how kubectl shows a finding that does not deny.
func warning(f policies.Finding) string { return oneLine(f.String()) }

// grandfathered explains why a deny finding does not block this UPDATE.
func grandfathered(f policies.Finding) string {
	return oneLine(f.String()) + " [present before this update, so it does not block it; fix it when you can]"
}

func waived(f policies.Finding) string {
	where := f.Path
	if where == "" {
		where = "the object"
	}
	return oneLine(fmt.Sprintf("%s waived by annotation %s%s (%q) at %s: %s", f.RuleID, karpenter.WaiverAnnotationPrefix, f.RuleID, f.WaiverReason, where, f.Message))
}

// oneLine keeps a message to one line: warnings travel in HTTP headers, and
// a denial shows one finding per line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
