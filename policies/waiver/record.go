package waiver

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// RecordAnnotation holds the record: JSON, by rule ID, of who set each
// waiver and when.
const RecordAnnotation = "karpgate.io/waivers-set-by"

// Record is who set each waiver, by rule ID.
type Record map[string]Author

// Author is who added or last changed one waiver, as the API server
// authenticated the request, and when (RFC 3339, UTC, to the second).
type Author struct {
	User string `json:"user"`
	At   string `json:"at"`
}

// ReadRecord reads the record of an object's annotations. An unreadable
// record reads as empty: it is karpgate's own bookkeeping, rebuilt on the
// next write, and must never stop a waiver from being read.
func ReadRecord(annotations map[string]any) Record {
	raw, _ := annotations[RecordAnnotation].(string)
	var r Record
	if raw == "" || json.Unmarshal([]byte(raw), &r) != nil {
		return Record{}
	}
	return r
}

// NextRecord is the record a write must store: for every waiver of
// object, the stored object's entry when the write leaves the waiver as it
// was, or user and now when the write adds or changes it. The record the
// write itself carries is ignored, so it can be neither forged nor
// dropped. Waivers that are gone lose their entry.
func NextRecord(object, oldObject map[string]any, user string, now time.Time) Record {
	changed := Changed(object, oldObject)
	kept := ReadRecord(annotationsOf(oldObject))
	out := Record{}
	for key := range annotationsOf(object) {
		rule, ok := strings.CutPrefix(key, karpenter.WaiverAnnotationPrefix)
		if !ok {
			continue
		}
		if changed[key] {
			out[rule] = Author{User: user, At: now.UTC().Truncate(time.Second).Format(time.RFC3339)}
		} else if a, known := kept[rule]; known {
			out[rule] = a
		}
	}
	return out
}

// Encode is the record as the annotation's value; "" for an empty record,
// which means no annotation.
func (r Record) Encode() string {
	if len(r) == 0 {
		return ""
	}
	b, _ := json.Marshal(r) // map keys are sorted: one encoding per record
	return string(b)
}
