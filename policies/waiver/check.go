package waiver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// RecordClockTolerance is how far from the validating webhook's clock the
// time of an entry a write adds may be. The mutating webhook stamps it a
// moment before, possibly on another replica: the request's own time
// (webhook timeouts, at most 30 s each) and clock skew fit well within it,
// and a forged time within it misleads nobody.
const RecordClockTolerance = 5 * time.Minute

// RecordCheck is what CheckRecord found wrong with the record a write
// carries.
type RecordCheck struct {
	// Problems, one line each, by rule ID; empty when the record is the
	// one the mutating webhook writes for the write.
	Problems []string
	// Untouched: the write carries the stored record as it was (or none,
	// as stored). With Problems, the mutating webhook did not run: it
	// would have rewritten it.
	Untouched bool
}

// CheckRecord compares the record object carries with the one the
// mutating webhook writes for this write (NextRecord), which is what the
// validating webhook admits:
//
//   - for a waiver the write leaves as stored, the stored record's entry,
//     or none if it has none;
//   - for a waiver the write adds or changes, an entry naming user, the
//     user the API server authenticated for the write, at a time within
//     RecordClockTolerance of now, written as karpgate writes it (RFC
//     3339, UTC, to the second);
//   - for a rule the object has no waiver of, no entry, or the stored one
//     (the mutating webhook drops it; left in place, it says nothing, and
//     a write that removes a waiver while the mutating webhook is down
//     still goes through);
//   - nothing else: an entry with other fields, or a record that does not
//     read, is refused. A record byte for byte as stored is read as the
//     stored one is, so that writes which carry it through unchanged are
//     judged by their waivers alone.
func CheckRecord(object, oldObject map[string]any, user string, now time.Time) RecordCheck {
	annotations, oldAnnotations := annotationsOf(object), annotationsOf(oldObject)
	raw, present := annotations[RecordAnnotation]
	oldRaw, oldPresent := oldAnnotations[RecordAnnotation]
	stored := ReadRecord(oldAnnotations)
	var check RecordCheck
	var written Record
	switch {
	case !present:
		check.Untouched = !oldPresent
		written = Record{}
	case oldPresent && sameString(raw, oldRaw):
		check.Untouched = true
		written = stored
	default:
		var err error
		if written, err = decodeRecord(raw); err != nil {
			check.Problems = append(check.Problems, err.Error())
			return check
		}
	}
	changed := Changed(object, oldObject)
	waived := map[string]bool{}
	for key := range annotations {
		if rule, ok := strings.CutPrefix(key, karpenter.WaiverAnnotationPrefix); ok {
			waived[rule] = true
		}
	}
	for _, rule := range sortedRules(written, waived) {
		entry, has := written[rule]
		kept, wasKept := stored[rule]
		var problem string
		switch {
		case waived[rule] && changed[karpenter.WaiverAnnotationPrefix+rule]:
			problem = checkNewEntry(entry, has, user, now)
		case waived[rule] && has != wasKept:
			problem = fmt.Sprintf("the write leaves the waiver as stored, and %s its entry (stored: %s)", addsOrDrops(has), describeEntry(kept, wasKept))
		case waived[rule] && entry != kept:
			problem = fmt.Sprintf("the write leaves the waiver as stored, and changes its entry to %s (stored: %s)", describeEntry(entry, true), describeEntry(kept, true))
		case !waived[rule] && has && (!wasKept || entry != kept):
			problem = fmt.Sprintf("the object has no waiver of %s, and the record gains an entry for it: %s", rule, describeEntry(entry, true))
		}
		if problem != "" {
			check.Problems = append(check.Problems, rule+": "+problem)
		}
	}
	return check
}

// checkNewEntry judges the entry of a waiver the write adds or changes.
func checkNewEntry(entry Author, has bool, user string, now time.Time) string {
	if !has {
		return "the write adds or changes the waiver, and the record has no entry for it"
	}
	if entry.User != user {
		return fmt.Sprintf("the entry names %s, but the write that adds or changes the waiver is made by %s", quoteUser(entry.User), quoteUser(user))
	}
	at, err := time.Parse(time.RFC3339, entry.At)
	if err != nil || at.Format(time.RFC3339) != entry.At || !strings.HasSuffix(entry.At, "Z") {
		return fmt.Sprintf("the entry's time %q is not an RFC 3339 time in UTC to the second, as karpgate writes it", entry.At)
	}
	if d := at.Sub(now); d > RecordClockTolerance || -d > RecordClockTolerance {
		return fmt.Sprintf("the entry's time %s is not this write's: karpgate's clock says %s, more than %v apart", entry.At, now.UTC().Truncate(time.Second).Format(time.RFC3339), RecordClockTolerance)
	}
	return ""
}

// decodeRecord reads a record a write brings: strictly, since karpgate
// wrote every record it admits (ReadRecord, for stored ones, is lenient).
func decodeRecord(raw any) (Record, error) {
	s, ok := raw.(string)
	if !ok {
		return nil, errors.New("the annotation is not a string")
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	var r Record
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf(`it does not read as karpgate's record ({"<rule ID>": {"user": "...", "at": "..."}}): %w`, err)
	}
	if err := dec.Decode(new(json.RawMessage)); !errors.Is(err, io.EOF) {
		return nil, errors.New("it does not read as karpgate's record: more follows the JSON object")
	}
	if r == nil {
		r = Record{}
	}
	return r, nil
}

func sameString(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	return aok && bok && as == bs
}

func sortedRules(written Record, waived map[string]bool) []string {
	seen := map[string]bool{}
	var out []string
	for rule := range written {
		seen[rule] = true
		out = append(out, rule)
	}
	for rule := range waived {
		if !seen[rule] {
			out = append(out, rule)
		}
	}
	sort.Strings(out)
	return out
}

func addsOrDrops(has bool) string {
	if has {
		return "adds"
	}
	return "drops"
}

func describeEntry(a Author, has bool) string {
	if !has {
		return "none"
	}
	b, _ := json.Marshal(a)
	return string(b)
}

func quoteUser(name string) string {
	if name == "" {
		return "an unnamed user"
	}
	return fmt.Sprintf("%q", name)
}
