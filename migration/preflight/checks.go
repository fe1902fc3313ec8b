package preflight

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/migration/snapshot"
)

// check is one kind of problem; run returns its findings without ID and
// name, which Run fills in.
type check struct {
	id, name string
	run      func(*scope) []Finding
}

var checks = []check{
	{"PF100", "crds", checkCRDVersions},
	{"PF101", "stored-versions", checkStoredVersions},
	{"PF102", "kubelet-annotation", checkKubelet},
	{"PF103", "compat-annotations", checkCompatAnnotations},
	{"PF104", "ubuntu-incompatible", checkUbuntu},
	{"PF105", "leftover-webhooks", checkWebhooks},
	{"PF106", "conversion-stanza", checkConversionStanzas},
	{"PF107", "v1beta1-documents", checkDocuments},
	{"PF108", "v1beta1-writers", checkWriters},
	{"PF109", "uninstall-conversion", checkUninstall},
	{"PF110", "unreadable", checkUnreadable},
	{"PF111", "upgrade-path", checkUpgradePath},
	{"PF112", "crds-first", checkCRDsFirst},
	{"PF113", "hash-versions", checkHashes},
	{"PF114", "removed-fields", checkRemovedFields},
}

// scope is what every check may read.
type scope struct {
	s       *snapshot.Snapshot
	target  Target
	running Running
}

// Run checks a snapshot for an upgrade from the release running (see
// DetectRunning) to target.
func Run(s *snapshot.Snapshot, running Running, target Target) *Report {
	r := &Report{Target: target.String(), From: running, Source: s.Source, Read: map[string]int{}}
	for kind, objects := range s.Objects {
		r.Read[kind] = len(objects)
	}
	r.Read["CustomResourceDefinition"] = len(s.CRDs)
	r.Read["WebhookConfiguration"] = len(s.Webhooks)
	sc := &scope{s: s, target: target, running: running}
	for _, c := range checks {
		for _, f := range c.run(sc) {
			f.ID, f.Check = c.id, c.name
			if f.Objects == nil {
				f.Objects = []ObjectRef{}
			}
			r.Findings = append(r.Findings, f)
		}
	}
	r.finish()
	return r
}

func ref(o snapshot.Object, note string) ObjectRef {
	return ObjectRef{Kind: o.Kind(), Name: o.Name(), Namespace: o.Namespace(), Where: o.Where(), Note: note}
}

// resource is how kubectl names a kind at v1: nodepools.v1.karpenter.sh, so
// that it never falls back to v1beta1.
func resource(k karpenter.Kind) string {
	return k.Resource + "." + karpenter.V1 + "." + k.Group
}

// commandsPerChunk keeps each generated kubectl command a readable length.
const commandsPerChunk = 50

// annotateCommands removes annotation key from the named objects.
func annotateCommands(kind karpenter.Kind, names []string, key string) []string {
	sort.Strings(names)
	var out []string
	for len(names) > 0 {
		n := min(len(names), commandsPerChunk)
		out = append(out, fmt.Sprintf("kubectl annotate %s %s %s-", resource(kind), strings.Join(names[:n], " "), key))
		names = names[n:]
	}
	return out
}

// pluralKind is "1 NodePool", "2 EC2NodeClasses".
func pluralKind(n int, kind string) string {
	if strings.HasSuffix(kind, "s") {
		return plural(n, kind, kind+"es")
	}
	return plural(n, kind, kind+"s")
}

// verb agrees a verb with a count: verb(1, "keeps", "keep").
func verb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func checkUnreadable(sc *scope) []Finding {
	var out []Finding
	for _, u := range sc.s.Unreadable {
		out = append(out, Finding{
			Severity: Deny,
			Title:    "cannot read " + u.What,
			Detail:   fmt.Sprintf("%v. preflight cannot vouch for what it cannot read, and whatever stops it (a conversion webhook that fails, missing permissions) stops Karpenter and your tools too.", u.Err),
			Fix:      Fix{Edits: []string{"Fix the error above (PF106 names a conversion webhook that does not answer), then run preflight again."}},
		})
	}
	return out
}

// describe writes a value as compact JSON for a note.
func describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return short(string(b))
}
