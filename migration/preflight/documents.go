package preflight

import (
	"fmt"
	"sort"
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/migration/snapshot"
)

// PF107: v1beta1 documents in files, one finding per file, and CRDs in
// files that still serve v1beta1.
func checkDocuments(sc *scope) []Finding {
	if sc.s.Live || !sc.target.DropsV1Beta1() {
		return nil
	}
	bySource := map[string][]snapshot.Object{}
	for _, kind := range karpenter.Kinds {
		for _, o := range sc.s.Objects[kind.Kind] {
			if version(o) == karpenter.V1Beta1 {
				bySource[o.Source] = append(bySource[o.Source], o)
			}
		}
	}
	sources := make([]string, 0, len(bySource))
	for s := range bySource {
		sources = append(sources, s)
	}
	sort.Strings(sources)
	var out []Finding
	for _, source := range sources {
		objects := bySource[source]
		sort.Slice(objects, func(i, j int) bool { return objects[i].Line < objects[j].Line })
		var refs []ObjectRef
		for _, o := range objects {
			refs = append(refs, ref(o, o.APIVersion()))
		}
		fix := Fix{Commands: []string{"karpgate convert -w " + source}}
		if source == manifest.StdinName {
			fix = Fix{Commands: []string{"karpgate convert - < FILE > FILE.v1.yaml"}}
		}
		out = append(out, Finding{
			Severity: Deny,
			Title:    fmt.Sprintf("%s holds %s", manifest.DisplayName(source), plural(len(objects), "v1beta1 document", "v1beta1 documents")),
			Detail: fmt.Sprintf("Karpenter %s serves only v1: applying these fails (`no matches for kind ... in version .../v1beta1`), and a GitOps sync with them fails with it. "+
				"`karpgate convert` rewrites them as v1 in place, keeping comments, and moves NodePools' kubelet blocks into their EC2NodeClasses.", sc.target),
			Objects: refs,
			Fix:     fix,
		})
	}
	for _, crd := range sc.s.CRDs {
		v := versionsOf(crd)
		if !v.serves(karpenter.V1Beta1) || v.storage != karpenter.V1 {
			continue // PF100 covers CRDs from before v1.0
		}
		out = append(out, Finding{
			Severity: Deny,
			Title:    fmt.Sprintf("CustomResourceDefinition %s still serves v1beta1 (%s)", crd.Name(), strings.Join(v.served, ", ")),
			Detail:   fmt.Sprintf("This is Karpenter v1.0's CRD. Applied after the upgrade it would serve v1beta1 again, or be refused once v1beta1 is gone from status.storedVersions; Karpenter %s ships its own CRDs.", sc.target),
			Objects:  []ObjectRef{ref(crd, "")},
			Fix:      Fix{Edits: []string{fmt.Sprintf("Replace this file's CRD with Karpenter %s's (pkg/apis/crds in its release, or the karpenter-crd chart).", sc.target)}},
		})
	}
	return out
}
