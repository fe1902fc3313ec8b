package report

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"hash"
	"maps"
	"slices"
	"sort"
	"strconv"

	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Digest is what the audit keeps of a stored report instead of the report:
// a fingerprint of what karpgate writes, each result's timestamp by what
// the result says, and the deny findings it lists. A cluster's reports
// would cost the audit's cache some kilobytes each; a digest, a few
// hundred bytes.
type Digest struct {
	Content [sha256.Size]byte
	Stamps  Stamps
	// Denials are the rule and path of each failing result (DenialKey);
	// nil when none fails.
	Denials map[string]bool
	// Omitted is how many results the report says were left out of the
	// object's reports (its omitted-results entry), 0 for none.
	Omitted int
}

// Stamps are results' timestamps (Unix seconds) by what the results say,
// sorted by ID.
type Stamps []Stamp

// Stamp is one result's timestamp.
type Stamp struct {
	ID      ResultID
	Seconds int64
}

// Lookup finds the timestamp of the result with id.
func (s Stamps) Lookup(id ResultID) (int64, bool) {
	i := sort.Search(len(s), func(i int) bool { return string(s[i].ID[:]) >= string(id[:]) })
	if i < len(s) && s[i].ID == id {
		return s[i].Seconds, true
	}
	return 0, false
}

// ResultID identifies a result by everything but its timestamp.
type ResultID [16]byte

// IDOf is a result's ID.
func IDOf(r orv1.ReportResult) ResultID {
	h := sha256.New()
	writeResult(h, r)
	var id ResultID
	copy(id[:], h.Sum(nil))
	return id
}

// writeResult hashes every field of a result but its timestamp, each
// length-prefixed so that no two results hash alike by accident.
func writeResult(h hash.Hash, r orv1.ReportResult) {
	for _, s := range []string{r.Source, r.Policy, r.Rule, r.Category, string(r.Severity), string(r.Result), strconv.FormatBool(r.Scored), r.Description} {
		writeString(h, s)
	}
	keys := slices.Sorted(maps.Keys(r.Properties))
	writeString(h, strconv.Itoa(len(keys)))
	for _, k := range keys {
		writeString(h, k)
		writeString(h, r.Properties[k])
	}
	// Rare, so plain JSON is cheap enough.
	extra, _ := json.Marshal(struct {
		S []any `json:"s,omitempty"`
		R any   `json:"r,omitempty"`
	}{anySlice(r.Subjects), r.ResourceSelector})
	writeString(h, string(extra))
}

func anySlice[T any](s []T) []any {
	out := make([]any, len(s))
	for i := range s {
		out[i] = s[i]
	}
	return out
}

func writeString(h hash.Hash, s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}

// DigestOf digests a report.
func DigestOf(r *orv1.ClusterReport) Digest {
	d := Digest{Content: Fingerprint(r), Stamps: make(Stamps, 0, len(r.Results))}
	for _, res := range r.Results {
		d.Stamps = append(d.Stamps, Stamp{ID: IDOf(res), Seconds: res.Timestamp.Seconds})
		if res.Result == "fail" {
			if d.Denials == nil {
				d.Denials = map[string]bool{}
			}
			d.Denials[DenialKey(res.Policy, res.Properties["path"])] = true
		}
		if res.Policy == OmittedPolicy && res.Category == OmittedCategory {
			d.Omitted, _ = strconv.Atoi(res.Properties[OmittedProperty])
		}
	}
	sort.Slice(d.Stamps, func(i, j int) bool { return string(d.Stamps[i].ID[:]) < string(d.Stamps[j].ID[:]) })
	return d
}

// DenialKey names a deny finding by its rule and field path, as its
// result keeps the path (ClipProperty).
func DenialKey(rule, path string) string { return rule + "\x00" + ClipProperty(path) }

// MergeStamps are the stamps of all an object's reports: a result that
// moves from one to another keeps its timestamp.
func MergeStamps(parts ...Stamps) Stamps {
	if len(parts) == 1 {
		return parts[0]
	}
	var out Stamps
	for _, p := range parts {
		out = append(out, p...)
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i].ID[:]) < string(out[j].ID[:]) })
	return out
}

// Fingerprint hashes what karpgate writes in a report: its own labels, the
// owner, scope, source, summary and results (with their timestamps).
// Whatever else others set on the report does not count.
func Fingerprint(r *orv1.ClusterReport) [sha256.Size]byte {
	h := sha256.New()
	writeString(h, r.Labels[ManagedByLabel])
	writeString(h, r.Labels[KindLabel])
	writeString(h, r.Labels[PartLabel])
	meta, _ := json.Marshal(struct {
		O []metav1.OwnerReference
		S any
	}{r.OwnerReferences, r.Scope})
	writeString(h, string(meta))
	writeString(h, r.Source)
	s := r.Summary
	writeString(h, strconv.Itoa(s.Pass)+" "+strconv.Itoa(s.Fail)+" "+strconv.Itoa(s.Warn)+" "+strconv.Itoa(s.Error)+" "+strconv.Itoa(s.Skip))
	writeString(h, strconv.Itoa(len(r.Results)))
	for _, res := range r.Results {
		writeResult(h, res)
		writeString(h, strconv.FormatInt(res.Timestamp.Seconds, 10)+"."+strconv.Itoa(int(res.Timestamp.Nanos)))
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// Equal reports whether stored already says what desired says.
func Equal(stored, desired *orv1.ClusterReport) bool {
	return Fingerprint(stored) == Fingerprint(desired)
}

// Merge is what to write over stored: desired's content, with the labels
// and annotations others set on stored kept.
func Merge(stored, desired *orv1.ClusterReport) *orv1.ClusterReport {
	out := stored.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	maps.Copy(out.Labels, desired.Labels)
	out.OwnerReferences = desired.OwnerReferences
	out.Scope, out.Source, out.Summary, out.Results = desired.Scope, desired.Source, desired.Summary, desired.Results
	return out
}

func typesUID(s string) types.UID { return types.UID(s) }
