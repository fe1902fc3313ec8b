package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/policies"
)

// A v1beta1 write's karpgate.io/restore-v1 annotation is the client's: an
// honest one is what karpgate's conversion wrote when the client read the
// stored v1 object as v1beta1, and it gives back, on the way to storage,
// the fields v1beta1 cannot hold. A record is trusted when it restores
// what the object stores already (the old object, converted, holds the
// record's value at its path). Any other record is refused when it
// changes a judged field of the stored object:
//
//   - a judged key: a label or annotation under karpgate.io/ (waivers, the
//     waiver record, the rollout guard's hold record and resume, the
//     environment label; not the restore annotations themselves), or a
//     label or EC2NodeClass tag that karpgate.yaml's production section
//     reads. The stored object must hold these as the write shows them.
//     Even a record that restores the stored value is refused when the
//     write changes the key (the mutating webhook's waiver record or hold
//     record, say): the record would undo that change unseen.
//   - a finding: the stored object's findings with the untrusted records
//     differ from its findings without them.
//
// Conversion's own rules never change a judged key, so an honest round
// trip (read as v1beta1, written back unchanged or with other edits) is
// never refused.

// recordCheck decides which restore records a v1beta1 write may carry.
type recordCheck struct {
	ctx    context.Context
	engine *policies.Engine
	r      review
	// stored is the object converted with every record; storedOld the old
	// object converted (nil on CREATE).
	stored, storedOld map[string]any
	now               time.Time

	records []conversion.RestoreRecord
	refused map[int]string
}

// run returns why each refused record (by index) is refused.
func (c *recordCheck) run() (map[int]string, error) {
	records, err := conversion.RestoreRecords(c.r.object, karpenter.V1)
	if err != nil || len(records) == 0 {
		return nil, err
	}
	c.records, c.refused = records, map[int]string{}
	c.checkJudgedKeys()
	if err := c.checkFindings(); err != nil {
		return nil, err
	}
	return c.refused, nil
}

func (c *recordCheck) refuse(i int, why string) {
	if c.refused[i] != "" {
		c.refused[i] += "; "
	}
	c.refused[i] += why
}

// keyPlace is a map of keys some of which are judged.
type keyPlace struct {
	path   []string
	what   string
	judged func(cfg *config.Config, key string) bool
}

var keyPlaces = []keyPlace{
	{[]string{"metadata", "labels"}, "label", func(cfg *config.Config, key string) bool {
		return karpgateKey(key) || slices.Contains(cfg.Production.Labels, key)
	}},
	{[]string{"metadata", "annotations"}, "annotation", func(_ *config.Config, key string) bool {
		return karpgateKey(key) && key != karpenter.RestoreV1Annotation && key != karpenter.RestoreV1Beta1Annotation
	}},
	{[]string{"spec", "tags"}, "tag", func(cfg *config.Config, key string) bool {
		return slices.Contains(cfg.Production.Tags, key)
	}},
}

func karpgateKey(key string) bool { return strings.HasPrefix(key, "karpgate.io/") }

// checkJudgedKeys refuses the records behind every judged key the stored
// object holds other than the write shows it, unless the write leaves the
// key as it was and the stored object keeps it as it is stored.
func (c *recordCheck) checkJudgedKeys() {
	cfg := c.engine.Config()
	for _, place := range keyPlaces {
		stored, sent := mapAt(c.stored, place.path), mapAt(c.r.object, place.path)
		storedOld, sentOld := mapAt(c.storedOld, place.path), mapAt(c.r.oldObject, place.path)
		for _, key := range unionKeys(stored, sent) {
			if !place.judged(cfg, key) || sameEntry(stored, sent, key) {
				continue
			}
			if c.storedOld != nil && sameEntry(stored, storedOld, key) && sameEntry(sent, sentOld, key) {
				continue // the write leaves it alone; the record keeps what is stored
			}
			why := fmt.Sprintf("it would store %s %s %s, where this write has %s; a restore record may not set karpgate.io/ labels or annotations or what makes an object production",
				place.what, key, describeEntry(stored, key), describeEntry(sent, key))
			path := append(append([]any{}, toAny(place.path)...), key)
			named := false
			for i, rec := range c.records {
				if isPrefix(rec.Path, path) {
					c.refuse(i, why)
					named = true
				}
			}
			if !named { // cannot happen: only a record moves a judged key
				for i := range c.records {
					c.refuse(i, why)
				}
			}
		}
	}
}

// checkFindings refuses the untrusted records when they change what the
// rules find in the stored object. It blames the records at or around the
// path of a finding that changes, then, should the rest still change the
// findings, the rest: at most four evaluations, however many records.
func (c *recordCheck) checkFindings() error {
	untrusted := map[int]bool{}
	for i, rec := range c.records {
		if c.storedOld == nil || !rec.HeldBy(c.storedOld) {
			untrusted[i] = true
		}
	}
	if len(untrusted) == 0 {
		return nil
	}
	without, base, err := c.convertAndJudge(func(i int) bool { return !untrusted[i] })
	if err != nil {
		return err
	}
	with, err := c.findings(c.stored)
	if err != nil {
		return err
	}
	changed := findingChange(base, with)
	if len(changed) == 0 {
		return nil
	}
	why := "it would store a value this write does not show, and the rules judge the stored object differently with it: " + describeChange(changed)
	var effective []int // the records that change the stored object
	for _, i := range sortedSet(untrusted) {
		if c.records[i].HeldBy(c.stored) && !c.records[i].HeldBy(without) {
			effective = append(effective, i)
		}
	}
	if len(effective) == 0 { // records that act only together
		effective = sortedSet(untrusted)
	}
	var blamed, rest []int
	for _, i := range effective {
		if slices.ContainsFunc(changed, func(f findingDelta) bool { return relatedPaths(c.records[i].FieldPath(), f.Path) }) {
			blamed = append(blamed, i)
		} else {
			rest = append(rest, i)
		}
	}
	if len(blamed) == 0 {
		blamed, rest = rest, nil
	}
	for _, i := range blamed {
		c.refuse(i, why)
	}
	if len(rest) == 0 {
		return nil
	}
	_, remaining, err := c.convertAndJudge(func(i int) bool { return !slices.Contains(blamed, i) })
	if err != nil {
		return err
	}
	if changed := findingChange(base, remaining); len(changed) > 0 {
		for _, i := range rest {
			c.refuse(i, "it would store a value this write does not show, and with the other records the rules judge the stored object differently: "+describeChange(changed))
		}
	}
	return nil
}

// convertAndJudge converts the write with the records keep accepts and
// evaluates the result.
func (c *recordCheck) convertAndJudge(keep func(i int) bool) (map[string]any, map[string]policies.Finding, error) {
	kept, err := conversion.WithRestoreRecords(c.r.object, karpenter.V1, keep)
	if err != nil {
		return nil, nil, err
	}
	object, err := conversion.Convert(c.ctx, kept, karpenter.V1, conversion.Options{})
	if err != nil {
		return nil, nil, err
	}
	found, err := c.findings(object)
	return object, found, err
}

// findings evaluates a stored object as the request would have it judged.
func (c *recordCheck) findings(object map[string]any) (map[string]policies.Finding, error) {
	req := c.r.request()
	req.Object, req.OldObject, req.Now = object, c.storedOld, c.now
	res, err := c.engine.Evaluate(c.ctx, req)
	if err != nil {
		return nil, err
	}
	out := make(map[string]policies.Finding, len(res.Findings)+len(res.Waived))
	for _, f := range append(res.Findings, res.Waived...) {
		out[strings.Join([]string{f.RuleID, f.Path, string(f.Action), fmt.Sprint(f.Waived), f.Message}, "\x00")] = f
	}
	return out, nil
}

// findingDelta is a finding the untrusted records add or remove.
type findingDelta struct {
	policies.Finding
	removed bool
}

// findingChange lists the findings the records add, then those they
// remove, in order.
func findingChange(base, with map[string]policies.Finding) (changed []findingDelta) {
	for _, k := range sortedKeys(with) {
		if _, ok := base[k]; !ok {
			changed = append(changed, findingDelta{Finding: with[k]})
		}
	}
	for _, k := range sortedKeys(base) {
		if _, ok := with[k]; !ok {
			changed = append(changed, findingDelta{Finding: base[k], removed: true})
		}
	}
	return changed
}

func describeChange(changed []findingDelta) string {
	parts := make([]string, len(changed))
	for i, f := range changed {
		verb, what, where := "adds", string(f.Action), f.Path
		if f.removed {
			verb = "removes"
		}
		if f.Waived {
			what = "waived"
		}
		if where == "" {
			where = "the object"
		}
		parts[i] = fmt.Sprintf("%s %s (%s) at %s", verb, f.RuleID, what, where)
	}
	return strings.Join(parts, ", ")
}

// relatedPaths reports whether one field path is the other or inside it.
func relatedPaths(a, b string) bool {
	inside := func(child, parent string) bool {
		rest, ok := strings.CutPrefix(child, parent)
		return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
	}
	return a != "" && b != "" && (inside(a, b) || inside(b, a))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedSet(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for i := range m {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

func sortedIndices(m map[int]string) []int {
	out := make([]int, 0, len(m))
	for i := range m {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// mapAt is the map at path in obj; nil when there is none.
func mapAt(obj map[string]any, path []string) map[string]any {
	m := obj
	for _, k := range path {
		m, _ = m[k].(map[string]any)
	}
	return m
}

func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// sameEntry reports whether a and b hold the same value at key, or both
// none.
func sameEntry(a, b map[string]any, key string) bool {
	av, inA := a[key]
	bv, inB := b[key]
	return inA == inB && (!inA || conversion.Equal(av, bv))
}

// describeEntry is m[key] for a message: its JSON, shortened, or "none".
func describeEntry(m map[string]any, key string) string {
	v, ok := m[key]
	if !ok {
		return "none"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if r := []rune(string(b)); len(r) > 80 {
		return string(r[:77]) + "..."
	}
	return string(b)
}

func toAny(path []string) []any {
	out := make([]any, len(path))
	for i, p := range path {
		out[i] = p
	}
	return out
}

// isPrefix reports whether prefix is path or a parent of it.
func isPrefix(prefix, path []any) bool {
	if len(prefix) > len(path) {
		return false
	}
	for i := range prefix {
		if prefix[i] != path[i] {
			return false
		}
	}
	return true
}
