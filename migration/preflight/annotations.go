package preflight

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/migration/snapshot"
)

// leftover is a v1beta1-era annotation Karpenter v1.1 and later ignore.
type leftover struct {
	key   string
	kinds []string
	why   string
}

var leftovers = []leftover{
	{
		key:   karpenter.NodeClassReferenceCompatibilityAnnotation,
		kinds: []string{karpenter.KindNodePool, karpenter.KindNodeClaim},
		why: "Karpenter v1.0's conversion (and karpgate's) writes it so that v1beta1 readers get their original nodeClassRef back; " +
			"nothing reads v1beta1 from %s on. Remove it once nothing reads v1beta1 any more (PF108 lists the writers that still use it); a v1beta1 write through the conversion adds it again.",
	},
	{
		key:   karpenter.KubeletCompatibilityAnnotation,
		kinds: []string{karpenter.KindNodeClaim},
		why: "On a NodeClaim it only recorded the kubelet its node was launched with; Karpenter %s ignores it there. " +
			"(On NodePools it blocks the upgrade: PF102.)",
	},
	{
		key:   karpenter.UbuntuCompatibilityAnnotation,
		kinds: []string{karpenter.KindEC2NodeClass},
		why: "Karpenter v1.0's conversion noted here which Ubuntu defaults it replaced (amiFamily AL2, a root volume); Karpenter %s ignores it. " +
			"Check that amiFamily, amiSelectorTerms and blockDeviceMappings are what you want, then remove it.",
	},
	{
		key:   karpenter.AliasVersionCompatibilityAnnotation,
		kinds: []string{karpenter.KindEC2NodeClass},
		why:   "It carries a pinned alias version for v1beta1 readers, which Karpenter %s no longer has.",
	},
	{
		key:   karpenter.StoredVersionMigratedAnnotation,
		kinds: []string{karpenter.KindNodePool, karpenter.KindNodeClaim, karpenter.KindEC2NodeClass},
		why: "Karpenter v1.0's storage migration marked the objects it rewrote; Karpenter %s ignores the mark, and it says nothing about storage " +
			"(`karpgate migrate-storage` rewrites every object, marked or not).",
	},
}

// PF103: v1beta1 compatibility annotations the target ignores.
func checkCompatAnnotations(sc *scope) []Finding {
	if !sc.target.DropsV1Beta1() {
		return nil
	}
	var out []Finding
	for _, l := range leftovers {
		var objects []ObjectRef
		var commands []string
		for _, kindName := range l.kinds {
			var names []string
			for _, o := range sc.s.Objects[kindName] {
				value, ok := o.Annotation(l.key)
				if !ok || version(o) != karpenter.V1 || l.key == karpenter.UbuntuCompatibilityAnnotation && ubuntuIncompatible(value) {
					continue
				}
				objects = append(objects, ref(o, short(value)))
				names = append(names, o.Name())
			}
			if len(names) > 0 {
				kind, _ := karpenter.KindOf(kindName)
				commands = append(commands, annotateCommands(kind, names, l.key)...)
			}
		}
		if len(objects) == 0 {
			continue
		}
		fix := Fix{Commands: commands}
		if !sc.s.Live {
			fix = Fix{Edits: []string{"Remove annotation " + l.key + " from these objects."}}
		}
		out = append(out, Finding{
			Severity: Warn,
			Title:    fmt.Sprintf("%s %s %s, which Karpenter %s ignores", plural(len(objects), "object", "objects"), verb(len(objects), "carries", "carry"), l.key, sc.target),
			Detail:   fmt.Sprintf(l.why, sc.target),
			Objects:  objects,
			Fix:      fix,
		})
	}
	return out
}

func version(o snapshot.Object) string {
	_, v, _ := karpenter.LookupKind(o.APIVersion(), o.Kind())
	return v
}

func ubuntuIncompatible(value string) bool {
	for _, step := range strings.Split(value, ",") {
		if strings.TrimSpace(step) == karpenter.UbuntuCompatibilityIncompatible {
			return true
		}
	}
	return false
}

// short keeps an annotation value readable in a note.
func short(value string) string {
	if len(value) > 60 {
		return value[:57] + "..."
	}
	return value
}

// PF104: EC2NodeClasses Karpenter's conversion left with a placeholder AMI.
func checkUbuntu(sc *scope) []Finding {
	if !sc.target.DropsV1Beta1() {
		return nil
	}
	var out []Finding
	for _, o := range sc.s.EC2NodeClasses() {
		value, ok := o.Annotation(karpenter.UbuntuCompatibilityAnnotation)
		if !ok || version(o) != karpenter.V1 || !ubuntuIncompatible(value) {
			continue
		}
		terms, _, _ := unstructured.NestedSlice(o.Content, "spec", "amiSelectorTerms")
		kind, _ := karpenter.KindOf(karpenter.KindEC2NodeClass)
		out = append(out, Finding{
			Severity: Deny,
			Title:    fmt.Sprintf("EC2NodeClass %s was an Ubuntu EC2NodeClass without amiSelectorTerms: Karpenter's conversion left it a placeholder AMI", o.Name()),
			Detail: fmt.Sprintf("v1 has no Ubuntu family. Karpenter v1.0 holds this EC2NodeClass NotReady while annotation %s says %q; Karpenter %s ignores the annotation "+
				"and would look for AMI %s instead of yours.", karpenter.UbuntuCompatibilityAnnotation, karpenter.UbuntuCompatibilityIncompatible, sc.target, karpenter.UbuntuPlaceholderAMIID),
			Objects: []ObjectRef{ref(o, fmt.Sprintf("amiSelectorTerms %s", describe(terms)))},
			Fix: Fix{
				Edits: []string{"Set spec.amiSelectorTerms to your Ubuntu AMIs (by id, or name and owner), keeping amiFamily AL2 or using Custom with your own userData."},
				Commands: func() []string {
					if !sc.s.Live {
						return nil
					}
					return annotateCommands(kind, []string{o.Name()}, karpenter.UbuntuCompatibilityAnnotation)
				}(),
			},
		})
	}
	return out
}
