package holdrecord

import (
	"fmt"
	"time"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// MaxSkew is how far ahead of karpgate's clock a hold record's since, or
// the instant of a resume, may be when a write sets it: `karpgate freeze`
// and `resume` stamp them with the clock of the machine they run on, which
// may run a little ahead of the one karpgate's webhook runs on. Nothing
// karpgate decides depends on those instants comparing one way or the
// other (see Resumes); the bound only refuses dates no clock produces,
// like a since in 2099, which a person would read as a hold that lasts.
const MaxSkew = 5 * time.Minute

// Resumes reports whether a write ends the hold its stored object records:
// as Lift does in one write, it removes the record
// (karpgate.io/rollout-guard) and sets karpgate.io/rollout-guard-resumed
// to an RFC 3339 instant other than the stored one. before and after are
// the annotations of the stored object and of the write.
//
// The instant is not compared with the hold's since: the two come from the
// clocks of different machines (the one that froze and the one that
// resumes), and a since in the future would otherwise outlast every
// resume. A GitOps apply of the NodePool's Git version never resumes: Git
// has neither annotation, and a write that drops the resumed annotation
// (a replace) sets no instant.
func Resumes(before, after map[string]string) bool {
	if _, recorded := after[karpenter.RolloutGuardAnnotation]; recorded {
		return false
	}
	value, set := after[karpenter.RolloutGuardResumedAnnotation]
	if !set || value == before[karpenter.RolloutGuardResumedAnnotation] {
		return false
	}
	_, err := time.Parse(time.RFC3339, value)
	return err == nil
}

// NextResume is the value of karpgate.io/rollout-guard-resumed a resume
// sets at now: now in whole seconds, or the second after the stored value
// when the clock has not left it, because a resume must set a value the
// stored object does not have (Resumes).
func NextResume(annotations map[string]string, now time.Time) string {
	next := now.UTC().Truncate(time.Second)
	if last, ok := ResumedAt(annotations); ok && next.Equal(last) {
		next = next.Add(time.Second)
	}
	return next.Format(time.RFC3339)
}

// CheckDates refuses a write that sets the hold record or the resumed
// annotation to an instant more than MaxSkew after now (karpgate's clock),
// or the resumed annotation to a value that is no RFC 3339 instant. Values
// the write leaves as stored (before) are not judged again: they were
// admitted when they were written, and resume lifts such a hold anyway.
// A record that does not parse is the budget rules' and the status's to
// report; it holds nothing (Held).
func CheckDates(before, after map[string]string, now time.Time) error {
	limit := now.Add(MaxSkew)
	if raw, ok := after[karpenter.RolloutGuardAnnotation]; ok && raw != before[karpenter.RolloutGuardAnnotation] {
		if m, err := ReadMarker(after); err == nil && m.Since.After(limit) {
			return fmt.Errorf(`metadata.annotations[%s]: "since" is %s, later than karpgate's clock (%s) by more than the %v it allows for clocks that disagree; a hold cannot begin in the future: set "since" to the current time (date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ), or, if karpgate freeze wrote it, correct the clock of the machine that ran it and freeze again`,
				karpenter.RolloutGuardAnnotation, m.Since.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), MaxSkew)
		}
	}
	value, ok := after[karpenter.RolloutGuardResumedAnnotation]
	if !ok || value == before[karpenter.RolloutGuardResumedAnnotation] {
		return nil
	}
	at, err := time.Parse(time.RFC3339, value)
	switch {
	case err != nil:
		return fmt.Errorf("metadata.annotations[%s]: %q is not an RFC 3339 instant; set it to the current time (date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ), or remove it", karpenter.RolloutGuardResumedAnnotation, value)
	case at.After(limit):
		return fmt.Errorf("metadata.annotations[%s]: %s is later than karpgate's clock (%s) by more than the %v it allows for clocks that disagree, and the rollout guard would ignore every NodeClaim launched until then: set it to the current time (date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ), or, if karpgate resume wrote it, correct the clock of the machine that ran it and resume again",
			karpenter.RolloutGuardResumedAnnotation, at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), MaxSkew)
	}
	return nil
}
