package preflight

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// PF108: managedFields entries written at v1beta1. After the upgrade nothing
// serves v1beta1, but the API server converts these entries on every
// server-side apply: karpgate's conversion is still needed until they go.
func checkWriters(sc *scope) []Finding {
	if !sc.target.DropsV1Beta1() {
		return nil
	}
	var out []Finding
	for _, kind := range karpenter.Kinds {
		beta := kind.Group + "/" + karpenter.V1Beta1
		var objects []ObjectRef
		var commands []string
		managers := map[string]bool{}
		for _, o := range sc.s.Objects[kind.Kind] {
			if version(o) != karpenter.V1 {
				continue
			}
			entries, _, _ := unstructured.NestedSlice(o.Content, "metadata", "managedFields")
			var stale []int
			var names []string
			for i, e := range entries {
				m, _ := e.(map[string]any)
				if m["apiVersion"] != beta {
					continue
				}
				stale = append(stale, i)
				manager, _ := m["manager"].(string)
				operation, _ := m["operation"].(string)
				names = append(names, fmt.Sprintf("%s (%s)", manager, operation))
				managers[manager] = true
			}
			if len(stale) == 0 {
				continue
			}
			objects = append(objects, ref(o, "v1beta1 managedFields of "+strings.Join(names, ", ")))
			commands = append(commands, dropEntriesCommand(kind, o.Name(), beta, stale, len(entries)))
		}
		if len(objects) == 0 {
			continue
		}
		list := make([]string, 0, len(managers))
		for m := range managers {
			list = append(list, m)
		}
		sort.Strings(list)
		fix := Fix{
			Edits:    []string{"Make " + strings.Join(list, ", ") + " write v1: run `karpgate convert -w` on the manifests they apply."},
			Commands: commands,
		}
		if !sc.s.Live {
			fix.Commands = nil
			fix.Edits = append(fix.Edits, "Then remove their v1beta1 entries from metadata.managedFields in the cluster (preflight against the cluster prints the commands).")
		}
		out = append(out, Finding{
			Severity: Warn,
			Title:    fmt.Sprintf("%s still %s managedFields written at %s: karpgate's conversion is still needed after the upgrade", pluralKind(len(objects), kind.Kind), verb(len(objects), "has", "have"), beta),
			Detail: fmt.Sprintf("After the upgrade to %s nothing serves v1beta1, but these entries still name it: the API server converts managedFields on every server-side apply, "+
				"which then fails with \"request to convert CR to an invalid group/version\" (kubernetes/kubernetes#111937). "+
				"The managers that wrote them still write v1beta1, and their writes fail after the upgrade too. "+
				"The commands drop only the v1beta1 entries, each guarded by a test of its apiVersion; a manager that applies again takes its fields back at v1.", sc.target),
			Objects: objects,
			Fix:     fix,
		})
	}
	return out
}

// dropEntriesCommand removes the managedFields entries at indices (all of
// apiVersion beta), highest first so the lower indices stay put. Removing
// every entry resets managedFields with [{}]: the API server ignores an
// empty list.
func dropEntriesCommand(kind karpenter.Kind, name, beta string, indices []int, total int) string {
	var ops []map[string]any
	for i := len(indices) - 1; i >= 0; i-- {
		path := fmt.Sprintf("/metadata/managedFields/%d", indices[i])
		ops = append(ops, map[string]any{"op": "test", "path": path + "/apiVersion", "value": beta})
		if len(indices) < total {
			ops = append(ops, map[string]any{"op": "remove", "path": path})
		}
	}
	if len(indices) == total {
		ops = append(ops, map[string]any{"op": "replace", "path": "/metadata/managedFields", "value": []any{map[string]any{}}})
	}
	patch, _ := json.Marshal(ops)
	return fmt.Sprintf("kubectl patch %s %s --type=json -p '%s'", resource(kind), name, patch)
}
