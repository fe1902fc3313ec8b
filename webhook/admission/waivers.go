package admission

import (
	"fmt"
	"strings"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/waiver"
)

// sameWriteWaiver reports whether a waived finding was waived by a waiver
// this write adds or changes that may not waive it: on a production
// request (the object or the stored object is production), with no
// approvers named and waivers.allowSameWrite off, such a waiver does not
// waive a deny. judge then lets it waive only a denial the stored object
// already had; one the write introduces denies (see package waiver).
func sameWriteWaiver(cfg *config.Config, r review) func(policies.Finding) bool {
	production := cfg.IsProduction(r.object) || (r.oldObject != nil && cfg.IsProduction(r.oldObject))
	if !production || cfg.SameWriteWaivesDenials() {
		return func(policies.Finding) bool { return false }
	}
	changed := waiver.Changed(r.object, r.oldObject)
	return func(f policies.Finding) bool {
		return f.Action == config.Deny && changed[karpenter.WaiverAnnotationPrefix+f.RuleID]
	}
}

// notWaived is a denial that the waiver its write adds does not waive: the
// finding, saying which waiver and what to do instead.
func notWaived(f policies.Finding) policies.Finding {
	annotation := karpenter.WaiverAnnotationPrefix + f.RuleID
	f.Waived, f.WaiverReason, f.WaiverUntil, f.WaiverSetBy = false, "", nil, ""
	f.Message += fmt.Sprintf("; the waiver %s does not waive it, because this same write adds or changes it: on a production object, a waiver must be stored before the write it excuses", annotation)
	alternative := "add the waiver in a separate, earlier write that someone reviews, or name who may waive in karpgate.yaml (waivers.approvers)"
	if f.Fix == "" {
		f.Fix = strings.ToUpper(alternative[:1]) + alternative[1:]
	} else {
		f.Fix = strings.TrimSuffix(f.Fix, ".") + "; or " + alternative
	}
	return f
}

// recordRefusal is why the validating webhook refuses a write whose
// record of who set each waiver (waiver.RecordAnnotation) is not the one
// karpgate's mutating webhook writes for it; "" when it is.
func recordRefusal(r review, now time.Time) string {
	check := waiver.CheckRecord(r.object, r.oldObject, r.user.Username, now)
	if len(check.Problems) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: the annotation %s is not the record karpgate keeps of who set each waiver:", r.ref, waiver.RecordAnnotation)
	for _, p := range check.Problems {
		b.WriteString("\n")
		b.WriteString(oneLine(p))
	}
	b.WriteString("\n")
	if check.Untouched {
		fmt.Fprintf(&b, "karpgate's mutating webhook (%s), which keeps the record, did not run on this write: it fails open, so writes go through without it while karpgate is down or its MutatingWebhookConfiguration is missing. Retry once it runs.", deploy.MutatingWebhookName)
	} else {
		fmt.Fprintf(&b, "Only karpgate's mutating webhook (%s) writes the record, on every write it sees, so it did not run on this one or another webhook changed the record after it: leave the annotation as stored, or out of the write, and retry once karpgate's mutating webhook runs.", deploy.MutatingWebhookName)
	}
	return b.String()
}
