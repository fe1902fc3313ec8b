package admission

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/guard"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/policies/waiver"
)

// keep returns the operations that keep what karpgate owns on an object
// across a write, whatever the write says: the record of who set each
// waiver (rebuilt from the stored object, so that a client can neither
// forge nor drop it) and a NodePool's freeze or rollout-guard hold (so that
// a GitOps apply of the NodePool's Git version leaves it in place). doc is
// the object after the rules' mutations. They do not depend on the rules,
// so they apply even when the policies cannot be evaluated.
func keep(r review, doc map[string]any, now time.Time) (ops []patchOperation, warnings []string, err error) {
	record := waiver.NextRecord(doc, r.oldObject, r.user.Username, now)
	if op, changed := setAnnotation(doc, waiver.RecordAnnotation, record.Encode()); changed {
		ops = append(ops, op)
		if rules := changedRules(doc, r.oldObject); len(rules) > 0 {
			warnings = append(warnings, fmt.Sprintf("karpgate recorded %s as the author of the waiver of %s (annotation %s)", describeUser(r.user.Username), strings.Join(rules, ", "), waiver.RecordAnnotation))
		}
	}
	if r.kind != karpenter.KindNodePool || r.oldObject == nil {
		return ops, warnings, nil
	}
	kept, err := guard.Keep(doc, r.oldObject, now)
	if err != nil || kept == nil {
		return ops, warnings, err
	}
	if kept.Restored {
		ops = append(ops, setField(doc, []string{"spec", "disruption", "budgets"}, kept.Budgets))
		warnings = append(warnings, fmt.Sprintf("karpgate kept %s in spec.disruption.budgets[%d] (since %s: %s); only `karpgate resume %s` lifts it",
			holdName(kept.Marker), kept.Marker.Index, kept.Marker.Since.UTC().Format(time.RFC3339), kept.Marker.Reason, objectName(doc)))
	}
	if op, changed := setAnnotation(doc, karpenter.RolloutGuardAnnotation, kept.Record); changed {
		ops = append(ops, op)
	}
	return ops, warnings, nil
}

func holdName(m *holdrecord.Marker) string {
	switch {
	case m.Frozen():
		return "its freeze of drift"
	case m.RolloutPlan() != "":
		return "the wave hold of rollout plan " + m.RolloutPlan()
	}
	return "the rollout guard's hold of drift"
}

func describeUser(name string) string {
	if name == "" {
		return "an unnamed user"
	}
	return name
}

// changedRules are the rule IDs whose waivers the write adds or changes.
func changedRules(object, oldObject map[string]any) []string {
	var out []string
	for key := range waiver.Changed(object, oldObject) {
		out = append(out, strings.TrimPrefix(key, karpenter.WaiverAnnotationPrefix))
	}
	sort.Strings(out)
	return out
}

// setAnnotation is the operation that makes annotation key hold value (""
// removes it), and whether doc needs it.
func setAnnotation(doc map[string]any, key, value string) (patchOperation, bool) {
	metadata, _ := doc["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	current, present := annotations[key]
	switch {
	case value == "" && !present:
		return patchOperation{}, false
	case value == "":
		return patchOperation{Op: "remove", Path: pointer("metadata", "annotations", key)}, true
	case current == value:
		return patchOperation{}, false
	}
	return setField(doc, []string{"metadata", "annotations", key}, value), true
}

// setField is the "add" operation that sets path in doc to value, adding
// the missing parents with it: "add" replaces a member that exists.
func setField(doc map[string]any, path []string, value any) patchOperation {
	cur := doc
	for i, k := range path[:len(path)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			for j := len(path) - 1; j > i; j-- {
				value = map[string]any{path[j]: value}
			}
			return patchOperation{Op: "add", Path: pointer(path[:i+1]...), Value: value}
		}
		cur = next
	}
	return patchOperation{Op: "add", Path: pointer(path...), Value: value}
}

// pointer is an RFC 6901 JSON pointer.
func pointer(keys ...string) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString("/")
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(k))
	}
	return b.String()
}
