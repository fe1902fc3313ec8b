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
// (karpgate.io/rollout-guard), or replaces it with a hold of another
// holder (a freeze laid over a plan's hold, a plan's hold handed back), and
// sets karpgate.io/rollout-guard-resumed to an RFC 3339 instant later than
// the stored one. before and after are the annotations of the stored
// object and of the write; now is karpgate's clock.
//
// The instant is not compared with the hold's since: the two come from the
// clocks of different machines (the one that froze and the one that
// resumes), and a since in the future would otherwise outlast every
// resume. It is compared with the stored instant, so that a GitOps apply
// of a NodePool exported into Git after an earlier resume, which sets that
// older instant again, does not end a later freeze; a stored instant more
// than MaxSkew ahead of now, which no honest clock wrote, binds nothing. A
// GitOps apply of Git's version without the annotation never resumes: it
// sets no instant.
func Resumes(before, after map[string]string, now time.Time) bool {
	if record, recorded := after[karpenter.RolloutGuardAnnotation]; recorded && record == before[karpenter.RolloutGuardAnnotation] {
		return false
	}
	value, set := after[karpenter.RolloutGuardResumedAnnotation]
	if !set || value == before[karpenter.RolloutGuardResumedAnnotation] {
		return false
	}
	at, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return false
	}
	if last, ok := believableResume(before, now); ok && !at.After(last) {
		return false
	}
	return true
}

// believableResume is the stored resume instant, unless it lies more than
// MaxSkew ahead of now.
func believableResume(annotations map[string]string, now time.Time) (time.Time, bool) {
	last, ok := ResumedAt(annotations)
	if !ok || last.After(now.Add(MaxSkew)) {
		return time.Time{}, false
	}
	return last, true
}

// NextResume is the value of karpgate.io/rollout-guard-resumed a resume
// sets at now: now in whole seconds, or the second after the stored value
// when that is not earlier (a clock ahead of this one resumed last),
// because a resume must set a later value than the stored one (Resumes).
func NextResume(annotations map[string]string, now time.Time) string {
	next := now.UTC().Truncate(time.Second)
	if last, ok := believableResume(annotations, now); ok && !next.After(last) {
		next = last.UTC().Add(time.Second)
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
	case at.After(limit) && !nextAfterStored(before, at, now):
		return fmt.Errorf("metadata.annotations[%s]: %s is later than karpgate's clock (%s) by more than the %v it allows for clocks that disagree, and the rollout guard would ignore every NodeClaim launched until then: set it to the current time (date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ), or, if karpgate resume wrote it, correct the clock of the machine that ran it and resume again",
			karpenter.RolloutGuardResumedAnnotation, at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), MaxSkew)
	}
	return nil
}

// nextAfterStored reports whether at is the second after a believable
// stored resume instant: what NextResume sets when the last resume came
// from a clock up to MaxSkew ahead, which must stay possible.
func nextAfterStored(before map[string]string, at, now time.Time) bool {
	last, ok := believableResume(before, now)
	return ok && at.Equal(last.Add(time.Second))
}
