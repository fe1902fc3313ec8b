package preflight

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/migration/snapshot"
)

// PF109: what uninstalling karpgate's conversion (or switching the CRDs back
// to Karpenter v1.0's) would change. Reported whenever karpgate converts, or
// objects carry its restore annotation.
func checkUninstall(sc *scope) []Finding {
	karpgateConverts := false
	for _, crd := range sc.s.CRDs {
		if c, path, ok := converterOf(sc, crd); ok && c.isKarpgate(path) {
			karpgateConverts = true
		}
	}
	var objects []ObjectRef
	restoreNames := map[string][]string{}
	for _, kind := range karpenter.Kinds {
		for _, o := range sc.s.Objects[kind.Kind] {
			if version(o) != karpenter.V1 {
				continue
			}
			var losses []string
			if fields, err := conversion.RestoredFields(o.Content, karpenter.V1Beta1); err == nil && len(fields) > 0 {
				losses = append(losses, "v1beta1 readers lose "+strings.Join(fields, ", ")+" (kept in "+karpenter.RestoreV1Beta1Annotation+")")
				restoreNames[kind.Kind] = append(restoreNames[kind.Kind], o.Name())
			}
			losses = append(losses, karpenterRoundTripLosses(o)...)
			if len(losses) > 0 {
				objects = append(objects, ref(o, strings.Join(losses, "; ")))
			}
		}
	}
	if !karpgateConverts && len(restoreNames) == 0 {
		return nil
	}
	// The restore annotations matter while anything reads v1beta1: their
	// removal is for after the upgrade, so it is an edit, not a command.
	edits := []string{"Keep karpgate's conversion until the upgrade is done."}
	if sc.target.DropsV1Beta1() && sc.s.Live {
		for _, kind := range karpenter.Kinds {
			if names := restoreNames[kind.Kind]; len(names) > 0 {
				for _, c := range annotateCommands(kind, names, karpenter.RestoreV1Beta1Annotation) {
					edits = append(edits, "After the upgrade, the restore annotations are dead weight: "+c)
				}
			}
		}
	}
	after := "After the upgrade to " + sc.target.String() + " nothing reads v1beta1, so uninstalling karpgate's conversion then changes nothing, once every object is stored as v1 (PF101) and no managedFields entry is v1beta1 (PF108)."
	if !sc.target.DropsV1Beta1() {
		after = "Karpenter " + sc.target.String() + " still serves v1beta1, so these changes would reach every v1beta1 client."
	}
	if len(objects) == 0 {
		return []Finding{{
			Severity: Info,
			Title:    "uninstalling karpgate's conversion changes nothing for the objects read",
			Detail:   "No object holds data that only karpgate's conversion gives back to v1beta1 readers, and Karpenter v1.0's conversion reads karpgate's compatibility annotations as its own. " + after,
		}}
	}
	sort.SliceStable(objects, func(i, j int) bool { return objects[i].Kind < objects[j].Kind })
	fix := Fix{Edits: edits}
	return []Finding{{
		Severity: Info,
		Title:    fmt.Sprintf("uninstalling karpgate's conversion, or switching back to Karpenter v1.0's, changes what v1beta1 clients see of %s", plural(len(objects), "object", "objects")),
		Detail: "Karpenter v1.0's conversion drops what v1beta1 cannot hold, and a v1beta1 client that writes the object back erases it; karpgate's keeps it. " +
			"Before the upgrade, a GitOps tool still applying v1beta1 manifests would do exactly that. " + after,
		Objects: objects,
		Fix:     fix,
	}}
}

// karpenterRoundTripLosses lists what a v1 object loses when a v1beta1
// client reads it through Karpenter v1.0's conversion and writes it back.
func karpenterRoundTripLosses(o snapshot.Object) []string {
	var out []string
	str := func(path ...string) (string, bool) {
		s, found, _ := unstructured.NestedString(o.Content, path...)
		return s, found
	}
	switch o.Kind() {
	case karpenter.KindNodePool:
		policy, _ := str("spec", "disruption", "consolidationPolicy")
		if after, _ := str("spec", "disruption", "consolidateAfter"); after == karpenter.Never && policy != karpenter.ConsolidationWhenEmpty {
			out = append(out, "consolidateAfter Never is dropped, so a v1beta1 write-back turns consolidation on (0s)")
		}
		budgets, _, _ := unstructured.NestedSlice(o.Content, "spec", "disruption", "budgets")
		for _, b := range budgets {
			if m, _ := b.(map[string]any); m != nil && m["reasons"] != nil {
				out = append(out, "budget reasons are dropped, so a v1beta1 write-back makes every budget apply to every reason")
				break
			}
		}
		if _, found := str("spec", "template", "spec", "terminationGracePeriod"); found {
			out = append(out, "terminationGracePeriod is dropped")
		}
		if group, _ := str("spec", "template", "spec", "nodeClassRef", "group"); group != "" && group != karpenter.DefaultNodeClassGroup {
			out = append(out, "nodeClassRef group "+group+" is dropped and reads back as "+karpenter.DefaultNodeClassGroup)
		}
	case karpenter.KindEC2NodeClass:
		if _, found, _ := unstructured.NestedMap(o.Content, "spec", "kubelet"); found {
			out = append(out, "spec.kubelet is dropped, so a v1beta1 write-back removes the kubelet settings of every node of this EC2NodeClass")
		}
	}
	return out
}
