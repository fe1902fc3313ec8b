package preflight

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/migration/snapshot"
)

// The checks of any upgrade, from the release running to the target, by
// the two releases' facts (internal/karpenter/release, read from their
// modules): what changes between them, not only what v1.1 removed.

// factsSource names where a fact comes from, for a finding's reader.
func factsSource(r release.Release) string {
	var mods []string
	for _, m := range r.Modules {
		mods = append(mods, m.Path+"@"+m.Version)
	}
	return "karpgate's facts of " + r.Version.String() + ", read from " + strings.Join(mods, " and ")
}

// PF111: the upgrade itself: from which release, how known, and whether
// it goes forward.
func checkUpgradePath(sc *scope) []Finding {
	from := sc.running
	notes := append([]string(nil), from.Notes...)
	if n := sc.target.factsNote(); n != "" {
		notes = append(notes, n)
	}
	if from.Version == "" {
		return []Finding{{
			Severity: Info,
			Title:    "the release running is unknown: " + from.Source,
			Detail: "preflight compares the release running with " + sc.target.String() + " to say which CRDs to install first, whether every node drifts and which fields go. " +
				"Without a Karpenter Deployment or its CRDs in what was read, only the checks of the objects themselves run." + sentences(notes),
			Fix: Fix{Edits: []string{"Pass the release you run with --from (for example --from v1.0.8)."}},
		}}
	}
	fromV := release.MustParseVersion(from.Version)
	switch c := fromV.Compare(sc.target.version); {
	case c > 0:
		return []Finding{{
			Severity: Deny,
			Title:    fmt.Sprintf("Karpenter %s runs, newer than %s: a downgrade", from.Version, sc.target),
			Detail: "Karpenter supports no downgrade across minor releases: objects written by the newer controller (status, annotations, fields of newer CRDs) may not read back. " +
				"Read from " + from.Source + "." + sentences(notes),
			Fix: Fix{Edits: []string{"Check --to, or pass --from if the release read is wrong."}},
		}}
	case c == 0:
		return []Finding{{
			Severity: Info,
			Title:    fmt.Sprintf("Karpenter %s already runs (read from %s)", from.Version, from.Source),
			Detail:   "Nothing changes between a release and itself; the checks of the objects still run." + sentences(notes),
		}}
	}
	return []Finding{{
		Severity: Info,
		Title:    fmt.Sprintf("upgrade from Karpenter %s (read from %s) to %s", from.Version, from.Source, sc.target),
		Detail:   "The checks below compare the two releases' facts: CRDs, hash versions, fields." + sentences(notes),
	}}
}

// sentences appends notes to a detail, each a sentence of its own.
func sentences(notes []string) string {
	out := ""
	for _, n := range notes {
		if n == "" {
			continue
		}
		out += " " + strings.ToUpper(n[:1]) + n[1:]
		if !strings.HasSuffix(n, ".") {
			out += "."
		}
	}
	return out
}

// upgradeFacts returns the facts of both ends when both are known and the
// upgrade goes forward.
func upgradeFacts(sc *scope) (from, to release.Release, ok bool) {
	if !sc.running.known || release.MustParseVersion(sc.running.Version).Compare(sc.target.version) >= 0 {
		return release.Release{}, release.Release{}, false
	}
	return sc.running.facts, sc.target.facts, true
}

// PF112: CRDs the target serves that the cluster lacks or serves
// otherwise: Karpenter's Helm chart for the controller does not install
// CRDs on upgrade, and a controller that watches a kind whose CRD is
// missing does not start.
func checkCRDsFirst(sc *scope) []Finding {
	from, to, ok := upgradeFacts(sc)
	if !ok {
		return nil
	}
	installed := map[string]snapshot.Object{}
	for _, o := range append(append([]snapshot.Object(nil), sc.s.CRDs...), sc.s.OtherCRDs...) {
		installed[o.Name()] = o
	}
	var objects []ObjectRef
	var names []string
	for _, k := range to.Facts.Schema.Kinds {
		name := k.Plural + "." + k.Group
		crd, have := installed[name]
		note := ""
		switch {
		case !have && !hasKind(from, k):
			note = fmt.Sprintf("new in the target: %s %s/%s", k.Kind, k.Group, strings.Join(k.Served, ","))
		case !have:
			note = "not installed"
		default:
			if v := versionsOf(crd); !slices.Equal(v.served, k.Served) {
				note = fmt.Sprintf("serves %s, %s serves %s", strings.Join(v.served, ","), to.Version, strings.Join(k.Served, ","))
			}
		}
		if note == "" && (!sc.s.Live || have) {
			continue
		}
		if note == "" {
			note = "not installed"
		}
		names = append(names, name)
		objects = append(objects, ObjectRef{Kind: "CustomResourceDefinition", Name: name, Note: note})
	}
	if len(objects) == 0 {
		return nil
	}
	severity := Warn
	detail := fmt.Sprintf("%s's CRDs differ from what %s installed: apply them before the new controller starts, or it fails on a kind it watches (Source: %s.)", to.Version, sc.running.Version, factsSource(to))
	if !sc.s.Live && len(sc.s.CRDs)+len(sc.s.OtherCRDs) == 0 {
		severity, detail = Info, fmt.Sprintf("The files hold no CRDs; %s serves these, and they must be installed before its controller. (Source: %s.)", to.Version, factsSource(to))
	}
	return []Finding{{
		Severity: severity,
		Title:    fmt.Sprintf("install %s's CRDs first: %s", to.Version, strings.Join(names, ", ")),
		Detail:   detail,
		Objects:  objects,
		Fix: Fix{Commands: []string{
			fmt.Sprintf("helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --version %s --namespace <karpenter's namespace>", strings.TrimPrefix(sc.target.String(), "v")),
		}},
	}}
}

func hasKind(r release.Release, k release.Kind) bool {
	for _, have := range r.Facts.Schema.Kinds {
		if have.Group == k.Group && have.Kind == k.Kind {
			return true
		}
	}
	return false
}

// PF113: how the upgrade changes the hashes NodeClaims are compared with.
// A new hash version makes Karpenter rewrite the stored hashes instead of
// drifting (a NodeClaim already Drifted stays so); the same version with
// other hashed fields or inputs drifts every node whose value of them is
// not empty.
func checkHashes(sc *scope) []Finding {
	from, to, ok := upgradeFacts(sc)
	if !ok {
		return nil
	}
	var out []Finding
	for _, h := range []struct {
		kind       string
		from, to   *release.Hash
		objects    []snapshot.Object
		annotation string
	}{
		{karpenter.KindNodePool, from.Facts.Code.NodePoolHash, to.Facts.Code.NodePoolHash, sc.s.NodePools(), karpenter.NodePoolHashVersionAnnotation},
		{karpenter.KindEC2NodeClass, from.Facts.Code.EC2NodeClassHash, to.Facts.Code.EC2NodeClassHash, sc.s.EC2NodeClasses(), karpenter.EC2NodeClassHashVersionAnnotation},
	} {
		switch {
		case h.from == nil || h.to == nil:
			missing := from.Version
			if h.to == nil {
				missing = to.Version
			}
			out = append(out, Finding{
				Severity: Info,
				Title:    fmt.Sprintf("karpgate cannot compare %s hashes: it has no facts of how %s hashes them", h.kind, missing),
				Detail:   fmt.Sprintf("Its notes: %s", strings.Join(append(append([]string(nil), from.Notes...), to.Notes...), "; ")),
			})
		case h.from.Version != h.to.Version:
			out = append(out, Finding{
				Severity: Info,
				Title:    fmt.Sprintf("%s hash version %s -> %s: Karpenter re-hashes, no node drifts for it", h.kind, h.from.Version, h.to.Version),
				Detail: fmt.Sprintf("When %s differs from the controller's, Karpenter %s writes the new hash on every NodeClaim that is not Drifted instead of drifting it; a NodeClaim already Drifted stays Drifted. (Source: %s and %s.)",
					h.annotation, to.Version, factsSource(from), factsSource(to)),
				Objects: driftedClaims(sc),
			})
		default:
			if changed := hashChanges(h.from, h.to); len(changed) > 0 {
				out = append(out, Finding{
					Severity: Warn,
					Title:    fmt.Sprintf("%s hash version stays %s but what it hashes changes: every node whose %s sets these drifts", h.kind, h.to.Version, h.kind),
					Detail: fmt.Sprintf("Changes: %s. Karpenter compares the new hash with the one stored on each NodeClaim, and the version is the same, so it drifts rather than re-hashes. (Source: %s and %s.)",
						strings.Join(changed, "; "), factsSource(from), factsSource(to)),
					Objects: refs(h.objects, "hashed by "+to.Version.String()+" otherwise"),
					Fix:     Fix{Edits: []string{"Plan the rollout: a disruption budget with reasons [Drifted] on the NodePools bounds how many nodes are replaced at once."}},
				})
			}
		}
	}
	return out
}

// hashChanges lists the hashed paths and inputs that differ.
func hashChanges(a, b *release.Hash) []string {
	var out []string
	diff := func(what string, x, y []string) {
		for _, s := range y {
			if !slices.Contains(x, s) {
				out = append(out, what+" "+s+" added")
			}
		}
		for _, s := range x {
			if !slices.Contains(y, s) {
				out = append(out, what+" "+s+" removed")
			}
		}
	}
	diff("hashed", a.Roots, b.Roots)
	diff("ignored", a.Ignored, b.Ignored)
	inputs := func(h *release.Hash) []string {
		var s []string
		for _, in := range h.Inputs {
			b, _ := json.Marshal(in)
			s = append(s, string(b))
		}
		return s
	}
	diff("input", inputs(a), inputs(b))
	return out
}

// driftedClaims are the NodeClaims already Drifted: they stay so.
func driftedClaims(sc *scope) []ObjectRef {
	var out []ObjectRef
	for _, nc := range sc.s.NodeClaims() {
		conds, _ := nc.Content["status"].(map[string]any)
		list, _ := conds["conditions"].([]any)
		for _, c := range list {
			m, _ := c.(map[string]any)
			if m["type"] == karpenter.ConditionDrifted && m["status"] == "True" {
				out = append(out, ref(nc, "already Drifted: stays Drifted"))
			}
		}
	}
	return out
}

func refs(objects []snapshot.Object, note string) []ObjectRef {
	var out []ObjectRef
	for _, o := range objects {
		out = append(out, ref(o, note))
	}
	return out
}

// PF114: spec fields the running release's CRDs define and the target's do
// not, set on objects read: the API server prunes them (or the target's
// schema refuses the object), and what they configured is gone.
func checkRemovedFields(sc *scope) []Finding {
	from, to, ok := upgradeFacts(sc)
	if !ok {
		return nil
	}
	var out []Finding
	for _, k := range []struct {
		kind     string
		from, to []string
		objects  []snapshot.Object
	}{
		{karpenter.KindNodePool, from.Facts.Schema.NodePoolFields, to.Facts.Schema.NodePoolFields, sc.s.NodePools()},
		{karpenter.KindEC2NodeClass, from.Facts.Schema.EC2NodeClassFields, to.Facts.Schema.EC2NodeClassFields, sc.s.EC2NodeClasses()},
	} {
		if len(k.from) == 0 || len(k.to) == 0 {
			continue // no facts of one side's schema: nothing to compare
		}
		var removed []string
		for _, f := range k.from {
			if !slices.Contains(k.to, f) {
				removed = append(removed, f)
			}
		}
		if len(removed) == 0 {
			continue
		}
		var objects []ObjectRef
		for _, o := range k.objects {
			spec, _ := o.Content["spec"].(map[string]any)
			var set []string
			for _, f := range removed {
				if _, ok := spec[f]; ok {
					set = append(set, "spec."+f)
				}
			}
			if len(set) > 0 {
				objects = append(objects, ref(o, "sets "+strings.Join(set, ", ")))
			}
		}
		severity := Info
		if len(objects) > 0 {
			severity = Deny
		}
		out = append(out, Finding{
			Severity: severity,
			Title:    fmt.Sprintf("%s's %s has no spec.%s", to.Version, k.kind, strings.Join(removed, ", spec.")),
			Detail: fmt.Sprintf("%s's CRD defines them, %s's does not: the API server drops them from every %s it stores, and what they configured is gone. (Source: the CRDs' diff; %s and %s.)",
				from.Version, to.Version, k.kind, factsSource(from), factsSource(to)),
			Objects: objects,
			Fix:     Fix{Edits: []string{"Move what these fields say to where " + to.Version.String() + " reads it (its upgrade guide), then run preflight again."}},
		})
	}
	return out
}
