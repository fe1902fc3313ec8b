package release

import (
	"slices"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "v1.15.1", want: "v1.15.1"},
		{in: "1.15.1", want: "v1.15.1"},
		{in: "v1.15", want: "v1.15"},
		{in: " 1.0 ", want: "v1.0"},
		{in: "v1", err: "want vMAJOR.MINOR"},
		{in: "v1.x", err: `"x" is not a number`},
		{in: "v1.015", err: `"015" is not a number`},
		{in: "v1.2.3.4", err: "want vMAJOR.MINOR"},
		{in: "", err: "want vMAJOR.MINOR"},
	} {
		v, err := ParseVersion(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseVersion(%q) = %v, %v; want an error with %q", tc.in, v, err, tc.err)
			}
			continue
		}
		if err != nil || v.String() != tc.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %s", tc.in, v, err, tc.want)
		}
	}
}

func TestKnownCoversEveryLineFromV1_0ToNewest(t *testing.T) {
	k := Known()
	if k[0].Version.String() != "v1.0.8" {
		t.Errorf("oldest known release is %s, want v1.0.8 (the last that serves v1beta1)", k[0].Version)
	}
	if got := Newest().Version.String(); got != "v1.15.1" {
		t.Errorf("newest known release is %s, want v1.15.1", got)
	}
	for _, r := range k {
		if len(r.Modules) == 0 || r.Facts.Code.NodePoolHash == nil || len(r.Facts.Schema.BudgetReasons) == 0 {
			t.Errorf("%s: facts incomplete: modules %v, NodePool hash %v, reasons %v", r.Version, r.Modules, r.Facts.Code.NodePoolHash, r.Facts.Schema.BudgetReasons)
		}
		if (r.Facts.Code.EC2NodeClassHash == nil) != (len(r.Notes) > 0 && strings.Contains(r.Notes[0], "serves no")) {
			t.Errorf("%s: an EC2NodeClass hash is missing exactly when a note says the provider module is not served; notes %v", r.Version, r.Notes)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  string
		exact bool
		err   string
	}{
		{in: "v1.15", want: "v1.15.1", exact: true},
		{in: "v1.15.1", want: "v1.15.1", exact: true},
		{in: "v1.15.0", want: "v1.15.1"},
		{in: "1.0", want: "v1.0.8", exact: true},
		{in: "v1.3", want: "v1.3.3", exact: true},
		{in: "v1.6.4", want: "v1.6.3"},
		{in: "v1.7.2", want: "v1.7.1"},
		{in: "v1.16", want: "v1.15.1"},
		{in: "v0.37", err: "predates every Karpenter release"},
		{in: "latest", err: "not a Karpenter version"},
	} {
		r, exact, err := Lookup(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Lookup(%q) = %s, %v; want an error with %q", tc.in, r.Version, err, tc.err)
			}
			continue
		}
		if err != nil || r.Version.String() != tc.want || exact != tc.exact {
			t.Errorf("Lookup(%q) = %s, exact %t, %v; want %s, exact %t", tc.in, r.Version, exact, err, tc.want, tc.exact)
		}
	}
}

// What each release line changed, as karpenter-facts.md and the release
// notes say: the table read from the modules must agree.
func TestFactsPerRelease(t *testing.T) {
	facts := func(v string) Facts {
		r, _, err := Lookup(v)
		if err != nil {
			t.Fatal(err)
		}
		return r.Facts
	}
	for _, tc := range []struct {
		name string
		got  func(Facts) bool
		// first is the first known line where got is true; it stays true.
		first string
	}{
		{"Unhealthy budgets", func(f Facts) bool { return f.AcceptsReason("Unhealthy") }, "v1.15"},
		{"Balanced consolidation", func(f Facts) bool { return f.AcceptsConsolidationPolicy("Balanced") }, "v1.14"},
		{"Gte and Lte", func(f Facts) bool { return f.AcceptsOperator("Gte") && f.AcceptsOperator("Lte") }, "v1.9"},
		{"CapacityBuffer", func(f Facts) bool { return f.HasKind("autoscaling.x-k8s.io", "CapacityBuffer") }, "v1.14"},
		{"static NodePools", func(f Facts) bool { return f.Schema.StaticNodePools }, "v1.8"},
		{"do-not-disrupt durations", func(f Facts) bool { return f.Code.DoNotDisruptDurations }, "v1.12"},
		{"only v1 served", func(f Facts) bool { return !f.NeedsConversion() }, "v1.1"},
		{"ipPrefixCount ignored by the hash", func(f Facts) bool {
			drifts, _ := f.Code.EC2NodeClassHash.Drifts("spec.ipPrefixCount")
			return f.Code.EC2NodeClassHash != nil && !drifts && slices.Contains(f.Schema.EC2NodeClassFields, "ipPrefixCount")
		}, "v1.8"},
	} {
		for _, r := range Known() {
			want := r.Version.AtLeast(tc.first)
			if got := tc.got(r.Facts); got != want {
				t.Errorf("%s in %s: %t, want %t (from %s on)", tc.name, r.Version, got, want, tc.first)
			}
		}
	}
	if f := facts("v1.15"); !f.AcceptsReason("Drifted") || f.AcceptsReason("drifted") {
		t.Error("v1.15 reasons must match case-sensitively")
	}
	if a, ok := facts("v1.9").AliasFamily("windows2025"); !ok || !a.LatestOnly {
		t.Errorf("v1.9 windows2025 alias: %+v, %t; want a latest-only family", a, ok)
	}
	if _, ok := facts("v1.0").AliasFamily("windows2025"); ok {
		t.Error("v1.0 has no windows2025 alias")
	}
	if a, ok := facts("v1.15").AliasFamily("al2023"); !ok || a.LatestOnly {
		t.Errorf("al2023 alias: %+v, %t; want a family that may be pinned", a, ok)
	}
	if !facts("v1.15").Schema.Restricts("karpenter.sh/foo") || facts("v1.15").Schema.Restricts("karpenter.sh/capacity-type") || !facts("v1.15").Schema.Restricts("kubernetes.io/hostname") {
		t.Error("v1.15 restricts karpenter.sh labels but capacity-type, and kubernetes.io/hostname")
	}
}

func TestHashDrifts(t *testing.T) {
	newest, old := Newest().Facts.Code, Oldest().Facts.Code
	for _, tc := range []struct {
		name   string
		hash   *Hash
		path   string
		drifts bool
		how    string
	}{
		{"template label", newest.NodePoolHash, "spec.template.metadata.labels", true, ""},
		{"taint", newest.NodePoolHash, "spec.template.spec.taints[0].effect", true, ""},
		{"requirements", newest.NodePoolHash, "spec.template.spec.requirements[2].values", false, ""},
		{"budgets", newest.NodePoolHash, "spec.disruption.budgets", false, ""},
		{"weight", newest.NodePoolHash, "spec.weight", false, ""},
		{"userData", newest.EC2NodeClassHash, "spec.userData", true, ""},
		{"ipPrefixCount", newest.EC2NodeClassHash, "spec.ipPrefixCount", false, ""},
		{"AMI terms", newest.EC2NodeClassHash, "spec.amiSelectorTerms[0].alias", false, ""},
		{"subnet terms", newest.EC2NodeClassHash, "spec.subnetSelectorTerms", false, ""},
		{"kubelet v1.15", newest.EC2NodeClassHash, "spec.kubelet.maxPods", true, "as String()"},
		{"amiFamily", newest.EC2NodeClassHash, "spec.amiFamily", true, "resolved"},
		{"kubelet v1.0", old.EC2NodeClassHash, "spec.kubelet", true, "its own hash"},
		{"no hash known", nil, "spec.userData", false, ""},
	} {
		drifts, how := tc.hash.Drifts(tc.path)
		if drifts != tc.drifts || how != tc.how {
			t.Errorf("%s: Drifts(%q) = %t, %q; want %t, %q", tc.name, tc.path, drifts, how, tc.drifts, tc.how)
		}
	}
	if got := Newest().Facts.ResolutionDrift()["spec.amiSelectorTerms"]; got != "AMIDrift" {
		t.Errorf("AMI selector terms drift by %q, want AMIDrift", got)
	}
}

func TestDetect(t *testing.T) {
	for _, r := range Known() {
		d := Detect(r.Facts.Schema)
		if !d.Exact || d.Release.Facts.Schema.BudgetReasons == nil {
			t.Errorf("%s's own CRDs: detected %s, exact %t, differences %v", r.Version, d.Release.Version, d.Exact, d.Differences)
		}
		// Patch releases with the same CRDs are indistinguishable; the
		// newest is named, so it is never older than the one asked.
		if d.Release.Version.Compare(r.Version) < 0 {
			t.Errorf("%s's own CRDs detected as the older %s", r.Version, d.Release.Version)
		}
	}
	edited := Newest().Facts.Schema
	edited.BudgetReasons = append(slices.Clone(edited.BudgetReasons), "Expired")
	d := Detect(edited)
	if d.Exact || d.Release.Version != Newest().Version || !slices.Equal(d.Differences, []string{"budgetReasons"}) {
		t.Errorf("edited reasons: detected %s, exact %t, differences %v; want the newest, inexact, budgetReasons", d.Release.Version, d.Exact, d.Differences)
	}
	// Two facts away from every release: still the closest, not none.
	edited.ConsolidationPolicies = append(slices.Clone(edited.ConsolidationPolicies), "Never")
	if d := Detect(edited); d.Exact || d.Release.Version != Newest().Version || !slices.Equal(d.Differences, []string{"budgetReasons", "consolidationPolicies"}) {
		t.Errorf("edited reasons and policies: detected %q, exact %t, differences %v; want the newest, inexact, both", d.Release.Version, d.Exact, d.Differences)
	}
	edited.ConsolidationPolicies = Newest().Facts.Schema.ConsolidationPolicies
	j := ForCRDs(edited, "files crds.yaml")
	if !j.Facts.AcceptsReason("Expired") || j.Note == "" || !strings.HasPrefix(j.String(), "Karpenter ~v1.15.1") {
		t.Errorf("judged by edited CRDs: %s, note %q; the CRDs' own reasons must win", j, j.Note)
	}
}

func TestSchemaFromCRDs(t *testing.T) {
	nodePool := map[string]any{
		"metadata": map[string]any{"name": "nodepools.karpenter.sh"},
		"spec": map[string]any{
			"group": "karpenter.sh",
			"names": map[string]any{"kind": "NodePool", "plural": "nodepools"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"properties": map[string]any{"spec": map[string]any{
					"properties": map[string]any{
						"disruption": map[string]any{"properties": map[string]any{
							"budgets": map[string]any{"items": map[string]any{"properties": map[string]any{
								"reasons": map[string]any{"items": map[string]any{"enum": []any{"Drifted", "Unhealthy"}}},
							}}},
						}},
						"template": map[string]any{"properties": map[string]any{"metadata": map[string]any{"properties": map[string]any{
							"labels": map[string]any{"x-kubernetes-validations": []any{
								map[string]any{"message": `label domain "example.com" is restricted`, "rule": `self.all(x, x in ["example.com/ok"] || !x.find("^([^/]+)").endsWith("example.com"))`},
								map[string]any{"message": `label "example.com/name" is restricted`, "rule": `self.all(x, x != "example.com/name")`},
							}},
						}}}},
					},
				}}}},
			}},
		},
	}
	s, err := SchemaFromCRDs([]map[string]any{nodePool})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.BudgetReasons, []string{"Drifted", "Unhealthy"}) || !s.Restricts("example.com/x") || s.Restricts("example.com/ok") || !s.Restricts("example.com/name") {
		t.Errorf("facts read: %+v", s)
	}
	if _, err := SchemaFromCRDs([]map[string]any{{"metadata": map[string]any{"name": "broken"}}}); err == nil || !strings.Contains(err.Error(), `"broken"`) {
		t.Errorf("a CRD without group and kind: %v; want an error naming it", err)
	}
}

func TestIntroduced(t *testing.T) {
	in := Introduced()
	for _, tc := range []struct{ kind, value, want string }{
		{"budgetReasons", "Unhealthy", "v1.15"},
		{"consolidationPolicies", "Balanced", "v1.14"},
		{"requirementOperators", "Gte", "v1.9"},
		{"aliasFamilies", "windows2025", "v1.9"},
		{"kinds", "CapacityBuffer", "v1.14"},
		{"ec2NodeClassFields", "enclaveOptions", "v1.15"},
		{"nodePoolFields", "replicas", "v1.8"},
		{"budgetReasons", "Drifted", ""},
	} {
		if got := in[tc.kind][tc.value]; got != tc.want {
			t.Errorf("%s %s introduced in %q, want %q", tc.kind, tc.value, got, tc.want)
		}
	}
}
