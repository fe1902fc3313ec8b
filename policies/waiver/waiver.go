package waiver

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// Waiver is one karpgate.io/waive-<rule> annotation, read.
type Waiver struct {
	// Rule is the rule ID after the prefix; Annotation the whole key.
	Rule       string
	Annotation string
	// Reason is the value after any expiry, trimmed; "" waives nothing.
	Reason string
	// Until is when the waiver stops applying; nil when it has no expiry.
	Until *time.Time
	// UntilProblem says why the expiry does not read; such a waiver waives
	// nothing.
	UntilProblem string
	// Expired: Until is not after the instant the waiver was read at.
	Expired bool
	// SetBy and SetAt come from the record: who added or last changed the
	// waiver at admission, and when; "" and nil when unknown.
	SetBy string
	SetAt *time.Time
}

// Active reports whether the waiver waives its rule (if the rule may be
// waived at all): it has a reason, a readable expiry if any, and has not
// expired.
func (w Waiver) Active() bool {
	return w.Reason != "" && w.UntilProblem == "" && !w.Expired
}

// untilPrefix starts a value with an expiry.
const untilPrefix = "until "

// dateLayout is the expiry written as a day.
const dateLayout = "2006-01-02"

// ParseValue reads an annotation value: the reason, the expiry and why the
// expiry does not read.
func ParseValue(value string) (reason string, until *time.Time, problem string) {
	v := strings.TrimSpace(value)
	rest, hasUntil := strings.CutPrefix(v, untilPrefix)
	if !hasUntil {
		return v, nil, ""
	}
	rest = strings.TrimLeft(rest, " ")
	token, reason, _ := strings.Cut(rest, " ")
	reason = strings.TrimSpace(reason)
	token = strings.TrimSuffix(token, ":")
	if token == "" {
		return reason, nil, `"until" is not followed by a date; write "until 2027-01-31: <reason>"`
	}
	if day, err := time.Parse(dateLayout, token); err == nil {
		end := day.AddDate(0, 0, 1) // through the end of that day, UTC
		return reason, &end, ""
	}
	if at, err := time.Parse(time.RFC3339, token); err == nil {
		at = at.UTC()
		return reason, &at, ""
	}
	return reason, nil, fmt.Sprintf(`%q is not a date; write "until 2027-01-31: <reason>" (through that day, UTC) or an RFC 3339 instant such as 2027-01-31T18:00:00Z`, token)
}

// Read returns the object's waivers, sorted by rule, as of now.
func Read(object map[string]any, now time.Time) []Waiver {
	annotations := annotationsOf(object)
	var record Record
	var out []Waiver
	for key, value := range annotations {
		rule, ok := strings.CutPrefix(key, karpenter.WaiverAnnotationPrefix)
		if !ok {
			continue
		}
		if record == nil {
			record = ReadRecord(annotations)
		}
		s, _ := value.(string)
		w := Waiver{Rule: rule, Annotation: key}
		w.Reason, w.Until, w.UntilProblem = ParseValue(s)
		w.Expired = w.Until != nil && !now.Before(*w.Until)
		if a, ok := record[rule]; ok {
			w.SetBy = a.User
			if t, err := time.Parse(time.RFC3339, a.At); err == nil {
				w.SetAt = &t
			}
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rule < out[j].Rule })
	return out
}

// Changed returns the waiver annotations of object that oldObject did not
// have with the same value: what a request adds or changes. A nil
// oldObject (a CREATE) changes every waiver.
func Changed(object, oldObject map[string]any) map[string]bool {
	now, before := annotationsOf(object), annotationsOf(oldObject)
	out := map[string]bool{}
	for key, value := range now {
		if !strings.HasPrefix(key, karpenter.WaiverAnnotationPrefix) {
			continue
		}
		// Values are strings in any object the API server admits; anything
		// else counts as a change (and is never compared: a map is not
		// comparable).
		oldValue, had := before[key].(string)
		newValue, isString := value.(string)
		if !had || !isString || oldValue != newValue {
			out[key] = true
		}
	}
	return out
}

func annotationsOf(object map[string]any) map[string]any {
	metadata, _ := object["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	return annotations
}
