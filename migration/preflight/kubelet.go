package preflight

import (
	"fmt"
	"strings"

	"github.com/karpgate/karpgate/conversion/kubeletplan"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/migration/kubeletfix"
)

const kubeletWhy = "Karpenter %s refuses to start while any NodePool carries " + karpenter.KubeletCompatibilityAnnotation +
	", and Karpenter v1.0 prefers that annotation over the EC2NodeClass's spec.kubelet: removing it alone switches where the nodes' kubelet settings come from, and drifts them."

// PF102: NodePools whose kubelet lives only in Karpenter's annotation, with
// the plan that moves it (the one `karpgate convert` uses for files).
func checkKubelet(sc *scope) []Finding {
	if !sc.target.DropsV1Beta1() {
		return nil
	}
	plan := kubeletfix.PlanFor(sc.s)
	var out []Finding
	for _, cp := range plan.Classes {
		if cp.Missing {
			out = append(out, missingClass(sc, plan, cp))
			continue
		}
		one := plan
		one.Classes = []kubeletplan.ClassPlan{cp}
		steps := one.Steps()
		var objects []ObjectRef
		replaced := 0
		for _, step := range steps {
			kind, name, _ := strings.Cut(step.Object, "/")
			o := ObjectRef{Kind: kind, Name: name, Note: step.Change + "; drift: " + step.Drift}
			if p, ok := plan.Pools[name]; ok && kind == karpenter.KindNodePool {
				o.Where = p.Where()
			} else if c, ok := plan.ClassByName[name]; ok && kind == karpenter.KindEC2NodeClass {
				o.Where = c.Where()
			}
			objects = append(objects, o)
			replaced += step.Replaces
		}
		n := len(cp.Move) + countPools(cp.Copies)
		title := fmt.Sprintf("%s of EC2NodeClass %s %s kubelet settings only in Karpenter's annotation", pluralKind(n, karpenter.KindNodePool), cp.Class, verb(n, "keeps its", "keep their"))
		detail := fmt.Sprintf(kubeletWhy, sc.target)
		switch {
		case len(cp.Copies) == 0:
			detail += " Here they agree with each other and with the NodePools that use the EC2NodeClass's own kubelet, so the block moves into the EC2NodeClass and no node drifts."
		default:
			detail += fmt.Sprintf(" Here the NodePools of %s disagree, so %s split off for the NodePools whose block differs, and their %s replaced.",
				cp.Class, plural(len(cp.Copies), "copy of it is", "copies of it are"), plural(replaced, "node is", "nodes are"))
		}
		fix := Fix{}
		if sc.s.Live {
			fix.Commands = []string{fmt.Sprintf("karpgate preflight --to %s --fix-kubelet", sc.target)}
		} else {
			for _, step := range steps {
				fix.Edits = append(fix.Edits, step.Object+": "+step.Change)
			}
		}
		out = append(out, Finding{Severity: Deny, Title: title, Detail: detail, Objects: objects, Fix: fix})
	}
	for _, u := range plan.Unplaced {
		out = append(out, Finding{
			Severity: Deny,
			Title:    fmt.Sprintf("NodePool %s keeps kubelet settings in Karpenter's annotation that no EC2NodeClass can take", u.Pool.Name()),
			Detail:   fmt.Sprintf(kubeletWhy, sc.target) + " Here " + u.Reason + ".",
			Objects:  []ObjectRef{ref(u.Pool, u.Reason)},
			Fix:      unplacedFix(sc, u.Pool.Name()),
		})
	}
	return out
}

var nodePoolKind, _ = karpenter.KindOf(karpenter.KindNodePool)

func countPools(copies []kubeletplan.Copy) int {
	n := 0
	for _, c := range copies {
		n += len(c.Pools)
	}
	return n
}

func missingClass(sc *scope, plan kubeletfix.Plan, cp kubeletplan.ClassPlan) Finding {
	var objects []ObjectRef
	for _, name := range cp.Stay {
		objects = append(objects, ref(plan.Pools[name], "nodeClassRef names EC2NodeClass "+cp.Class))
	}
	where := "does not exist"
	if !sc.s.Live {
		where = "is not among the files"
	}
	return Finding{
		Severity: Deny,
		Title:    fmt.Sprintf("%s %s kubelet settings in Karpenter's annotation for EC2NodeClass %s, which %s", pluralKind(len(cp.Stay), karpenter.KindNodePool), verb(len(cp.Stay), "keeps its", "keep their"), cp.Class, where),
		Detail:   fmt.Sprintf(kubeletWhy, sc.target) + " The block can only move into the EC2NodeClass the NodePool uses.",
		Objects:  objects,
		Fix:      Fix{Edits: []string{fmt.Sprintf("Create EC2NodeClass %s (or point the NodePools at one that exists, or give preflight the file that holds it); then run preflight again.", cp.Class)}},
	}
}

func unplacedFix(sc *scope, pool string) Fix {
	edit := "Put these kubelet settings where the NodePool's node class takes them, by hand; then remove the annotation."
	if !sc.s.Live {
		return Fix{Edits: []string{edit}}
	}
	return Fix{Edits: []string{edit}, Commands: annotateCommands(nodePoolKind, []string{pool}, karpenter.KubeletCompatibilityAnnotation)}
}
