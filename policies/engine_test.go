package policies

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// fixedNow is the clock of every test: Wednesday 5 June 2024, noon UTC.
var fixedNow = time.Date(2024, 6, 5, 12, 0, 0, 0, time.UTC)

func newTestEngine(t testing.TB, opts Options) *Engine {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return fixedNow }
	}
	e, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func nodeClass(labels map[string]any, annotations map[string]any, alias string) map[string]any {
	return map[string]any{
		"apiVersion": "karpenter.k8s.aws/v1",
		"kind":       "EC2NodeClass",
		"metadata":   map[string]any{"name": "default", "labels": labels, "annotations": annotations},
		"spec":       map[string]any{"amiSelectorTerms": []any{map[string]any{"alias": alias}}},
	}
}

var production = map[string]any{"karpgate.io/environment": "production"}

// summary renders findings as "RULE action path" for comparisons.
func summary(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %s", f.RuleID, f.Action, f.Path))
	}
	return out
}

func TestUserPoliciesAreCheckedWhenLoaded(t *testing.T) {
	tests := []struct {
		dir, want string
	}{
		{"nometa", "needs a METADATA annotation"},
		{"kgprefix", `custom.id "KG900": the KG prefix is reserved`},
		{"reserved", "package data.karpgate.lib.extra is reserved for karpgate"},
		{"dupid", "rule ID ACME1 is used by both data.karpgate.rules.acme_one"},
		{"noviolation", "rule ACME3 (data.karpgate.rules.acme_deny) defines no `violation contains ...` rule"},
		{"nested", "a rule package must sit directly under data.karpgate.rules"},
		{"badpoints", `custom.points: "audit" is not an enforcement point`},
		{"badoperations", `custom.operations: "DELETE" is not an operation karpgate judges; use CREATE or UPDATE`},
		{"overlaykind", `custom.kinds: "NodeOverlay": only the rules for every kind judge NodeOverlays; list kinds: ["*"] and test input.object.kind == "NodeOverlay"`},
		{"undeclaredpatch", "rule ACME200 returns a \"patch\" but does not declare `mutates: true`"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			_, err := New(context.Background(), Options{PolicyDirs: []string{"testdata/userpolicy/" + tt.dir}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestDataAliasBombIsRefused: OPA's loader expands every alias of a
// --data YAML file; nine levels of ten aliases would be a billion nodes.
func TestDataAliasBombIsRefused(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	if err := os.WriteFile(filepath.Join(dir, "bomb.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New(context.Background(), Options{DataDirs: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), "bomb.yaml:6: the YAML alias *l4") {
		t.Fatalf("got %v, want the alias bomb refused at bomb.yaml:6", err)
	}
}

func TestUserPoliciesAndDataRunWithTheBuiltins(t *testing.T) {
	e := newTestEngine(t, Options{PolicyDirs: []string{"testdata/userpolicy/good"}, DataDirs: []string{"testdata/userdata"}})
	rule, ok := e.Catalog().Lookup("ACME100")
	if !ok || rule.Builtin || rule.Title != "EC2NodeClass without the team tag" {
		t.Fatalf("user rule missing from the catalog: %+v", rule)
	}
	obj := nodeClass(production, nil, "al2023@latest")
	res, err := e.Evaluate(context.Background(), Request{Object: obj})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ACME100 deny spec.tags", "KG101 deny spec.amiSelectorTerms[0].alias"}
	if got := summary(res.Findings); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if res.Findings[0].Message != `tag team must be one of ["payments", "search"]` || res.Findings[0].Fix != "Add spec.tags.team." {
		t.Fatalf("user data or metadata fix not used: %+v", res.Findings[0])
	}
}

func TestUpdateRulesSeeTheOldObjectAndMayPatch(t *testing.T) {
	e := newTestEngine(t, Options{PolicyDirs: []string{"testdata/userpolicy/good"}, DataDirs: []string{"testdata/userdata"}})
	pool := func(weight int64) map[string]any {
		return map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p"},
			"spec": map[string]any{"weight": weight, "template": map[string]any{"spec": map[string]any{"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}}
	}
	res, err := e.Evaluate(context.Background(), Request{Object: pool(20), OldObject: pool(10), Operation: Update, Point: config.Admission, MutationsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(res.Findings); !slices.Equal(got, []string{"ACME200 warn spec.weight"}) {
		t.Fatalf("got %v", got)
	}
	f := res.Findings[0]
	if f.Message != "weight changed from 10 to 20" || len(f.Patch) != 1 || f.Patch[0] != (PatchOperation{Op: "replace", Path: "/spec/weight", Value: float64(10)}) {
		t.Fatalf("unexpected finding %+v", f)
	}
	res, err = e.Evaluate(context.Background(), Request{Object: pool(20), Operation: Create, Point: config.Admission, MutationsOnly: true})
	if err != nil || len(res.Findings) != 0 {
		t.Fatalf("CREATE must not compare with an old object: %v %v", res, err)
	}
}

// The mutating webhook asks only for the rules that return patches; a full
// evaluation (lint, the validating webhook) gets every other rule and never
// those.
func TestMutationsOnlyRunsTheRulesThatPatch(t *testing.T) {
	e := newTestEngine(t, Options{})
	pool := map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"disruption": map[string]any{"budgets": []any{map[string]any{"nodes": "0", "schedule": "0 9 * * sat-sun", "duration": "8h"}}},
			"template": map[string]any{"spec": map[string]any{"nodeClassRef": map[string]any{"name": "default"}}}}}
	tests := []struct {
		name          string
		mutationsOnly bool
		want          func([]string) bool
	}{
		{"full evaluation", false, func(got []string) bool {
			return !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "KG7") }) && slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "KG201 deny") })
		}},
		{"mutations only", true, func(got []string) bool {
			return slices.Equal(got, []string{"KG701 warn spec.template.spec.nodeClassRef"})
		}},
	}
	for _, tt := range tests {
		res, err := e.Evaluate(context.Background(), Request{Object: pool, Operation: Create, Point: config.Admission, MutationsOnly: tt.mutationsOnly})
		if err != nil {
			t.Fatal(err)
		}
		if got := summary(res.Findings); !tt.want(got) {
			t.Errorf("%s: findings %v", tt.name, got)
		}
	}
	for _, r := range e.Catalog() {
		if r.Mutates != strings.HasPrefix(r.ID, "KG7") && r.Builtin {
			t.Errorf("%s: mutates=%v; the built-in mutation rules are exactly KG7xx", r.ID, r.Mutates)
		}
	}
}

// A rule that builds its patch where the load-time check cannot see it,
// without declaring mutates, fails its evaluation instead of patching
// nothing in silence.
func TestUndeclaredPatchFailsEvaluation(t *testing.T) {
	e := newTestEngine(t, Options{PolicyDirs: []string{"testdata/userpolicy/hiddenpatch"}})
	pool := map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p"}, "spec": map[string]any{}}
	_, err := e.Evaluate(context.Background(), Request{Object: pool, Operation: Create, Point: config.Admission})
	if err == nil || !strings.Contains(err.Error(), "rule ACME800 returned a patch but does not declare `mutates: true`") {
		t.Fatalf("got %v", err)
	}
}

func TestPointsLimitWhereARuleRuns(t *testing.T) {
	e := newTestEngine(t, Options{PolicyDirs: []string{"testdata/userpolicy/points"}})
	if rule, _ := e.Catalog().Lookup("ACME6"); !slices.Equal(rule.Points, []config.EnforcementPoint{config.Admission}) {
		t.Fatalf("points not read from METADATA: %+v", rule)
	}
	pool := map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"weight": int64(10), "template": map[string]any{"spec": map[string]any{"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}}
	tests := []struct {
		point config.EnforcementPoint
		want  []string
	}{
		{"", nil},
		{config.CI, nil},
		{config.Admission, []string{"ACME6 warn spec.weight"}},
	}
	for _, tt := range tests {
		res, err := e.Evaluate(context.Background(), Request{Object: pool, Point: tt.point})
		if err != nil {
			t.Fatal(err)
		}
		if got := summary(res.Findings); !slices.Equal(got, tt.want) {
			t.Errorf("point %q: got %v, want %v", tt.point, got, tt.want)
		}
	}
}

// A rule that declares custom.operations is evaluated only for requests
// of those operations, whatever its body checks; an offline evaluation is
// a CREATE. Both webhooks' selections and lint's follow it.
func TestOperationsLimitWhichRequestsARuleJudges(t *testing.T) {
	e := newTestEngine(t, Options{PolicyDirs: []string{"testdata/userpolicy/operations"}})
	if rule, _ := e.Catalog().Lookup("ACME7"); !slices.Equal(rule.Operations, []Operation{Update}) {
		t.Fatalf("operations not read from METADATA: %+v", rule)
	}
	pool := map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"weight": int64(10), "template": map[string]any{"spec": map[string]any{"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}}
	old := map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p"}, "spec": map[string]any{}}
	tests := []struct {
		name string
		req  Request
		want []string
	}{
		{"create", Request{Object: pool, Operation: Create, Point: config.Admission}, []string{"ACME8 warn spec.weight"}},
		{"update", Request{Object: pool, OldObject: old, Operation: Update, Point: config.Admission}, []string{"ACME7 warn spec.weight"}},
		{"lint", Request{Object: pool, Point: config.CI}, []string{"ACME8 warn spec.weight"}},
		{"lint, cross-object rules apart", Request{Object: pool, Point: config.CI, SkipCrossObject: true}, []string{"ACME8 warn spec.weight"}},
	}
	for _, tt := range tests {
		res, err := e.Evaluate(context.Background(), tt.req)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.DeleteFunc(summary(res.Findings), func(s string) bool { return !strings.HasPrefix(s, "ACME") })
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestActionsFollowConfigAndEnforcementPoint(t *testing.T) {
	cfg, err := config.Parse("karpgate.yaml", []byte(`
rules:
  KG101:
    actions: {admission: warn}
  KG105:
    severity: deny
  KG001:
    enabled: false
`))
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEngine(t, Options{Config: cfg})
	obj := nodeClass(production, map[string]any{"karpgate.io/waive-KG102": ""}, "al2023@latest")
	obj["spec"].(map[string]any)["amiFamily"] = "AL2"
	tests := []struct {
		point config.EnforcementPoint
		want  []string
	}{
		{config.CI, []string{"KG101 deny spec.amiSelectorTerms[0].alias", "KG105 deny spec.amiFamily"}},
		{config.Admission, []string{"KG101 warn spec.amiSelectorTerms[0].alias", "KG105 deny spec.amiFamily"}},
	}
	for _, tt := range tests {
		res, err := e.Evaluate(context.Background(), Request{Object: obj, Point: tt.point})
		if err != nil {
			t.Fatal(err)
		}
		if got := summary(res.Findings); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v (KG001 is disabled)", tt.point, got, tt.want)
		}
		if res.Findings[0].Severity != config.Deny {
			t.Errorf("%s: severity must stay the rule's, got %s", tt.point, res.Findings[0].Severity)
		}
	}
}

func TestUnknownRuleInConfigIsAnError(t *testing.T) {
	cfg, err := config.Parse("karpgate.yaml", []byte("rules:\n  KG999: {enabled: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(context.Background(), Options{Config: cfg})
	if err == nil || !strings.Contains(err.Error(), `karpgate.yaml:2:3: rules[KG999]: "KG999" is not a rule`) {
		t.Fatalf("got %v", err)
	}
}

func TestWaiversAreListedApart(t *testing.T) {
	e := newTestEngine(t, Options{})
	obj := nodeClass(production, map[string]any{
		"karpgate.io/waive-KG101": "  staging AMIs are promoted by the release job ",
		"karpgate.io/waive-KG001": "cannot waive the waiver rules",
		"karpgate.io/waive-KG105": "",
	}, "al2023@latest")
	obj["spec"].(map[string]any)["amiFamily"] = "AL2"
	res, err := e.Evaluate(context.Background(), Request{Object: obj})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := summary(res.Findings), []string{"KG001 warn metadata.annotations[karpgate.io/waive-KG105]", "KG005 warn metadata.annotations[karpgate.io/waive-KG001]", "KG105 warn spec.amiFamily"}; !slices.Equal(got, want) {
		t.Fatalf("active: got %v, want %v (an empty reason waives nothing; the waiver rules cannot be waived)", got, want)
	}
	if got := summary(res.Waived); !slices.Equal(got, []string{"KG101 deny spec.amiSelectorTerms[0].alias"}) {
		t.Fatalf("waived: got %v", got)
	}
	if w := res.Waived[0]; !w.Waived || w.WaiverReason != "staging AMIs are promoted by the release job" {
		t.Fatalf("waiver reason not kept: %+v", w)
	}
	if res.Denied() {
		t.Fatal("a waived deny must not deny")
	}
}

func TestObjectsOfOtherKindsGetNoFindings(t *testing.T) {
	e := newTestEngine(t, Options{})
	res, err := e.Evaluate(context.Background(), Request{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"annotations": map[string]any{"karpgate.io/waive-X1": ""}}}})
	if err != nil || len(res.Findings)+len(res.Waived) != 0 {
		t.Fatalf("got %+v, %v", res, err)
	}
	// Not even a NodeOverlay's kind in another group: the rules for every
	// kind judge Karpenter's rule-only kinds only.
	res, err = e.Evaluate(context.Background(), Request{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "NodeOverlay", "metadata": map[string]any{"annotations": map[string]any{"karpgate.io/waive-X1": ""}}}})
	if err != nil || len(res.Findings)+len(res.Waived) != 0 {
		t.Fatalf("got %+v, %v", res, err)
	}
	if Handles("v1", "ConfigMap") || !Handles("karpenter.sh/v1beta1", "NodePool") {
		t.Fatal("Handles disagrees with the Karpenter kinds")
	}
}

func TestEvaluateIsSafeForConcurrentUse(t *testing.T) {
	e := newTestEngine(t, Options{})
	objects := []map[string]any{
		nodeClass(production, nil, "al2023@latest"),
		nodeClass(nil, nil, "al2023@latest"),
		nodeClass(production, nil, "al2023@v20240807"),
	}
	want := make([][]string, len(objects))
	for i, o := range objects {
		res, err := e.Evaluate(context.Background(), Request{Object: o})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = summary(res.Findings)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 30; n++ {
				i := (g + n) % len(objects)
				res, err := e.Evaluate(context.Background(), Request{Object: objects[i]})
				if err != nil {
					errs <- err
					return
				}
				if got := summary(res.Findings); !slices.Equal(got, want[i]) {
					errs <- fmt.Errorf("object %d: got %v want %v", i, got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestEvaluateHonoursCancellation(t *testing.T) {
	e := newTestEngine(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Evaluate(ctx, Request{Object: nodeClass(nil, nil, "al2023@latest")}); err == nil {
		t.Fatal("a cancelled context must stop evaluation")
	}
}

func TestFindingString(t *testing.T) {
	f := Finding{RuleID: "KG201", Path: "spec.disruption.budgets[0].schedule", Message: "bad cron", Fix: `Use "0 9 * * sat,sun".`}
	if got, want := f.String(), `KG201 spec.disruption.budgets[0].schedule: bad cron (fix: Use "0 9 * * sat,sun".)`; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

// KG401 ships with a per-point default (warn at admission), which
// configuration can still override in either direction.
func TestRuleDefaultActionsPerPointYieldToConfig(t *testing.T) {
	pool := map[string]any{"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool", "metadata": map[string]any{"name": "old"}, "spec": map[string]any{}}
	tests := []struct {
		name   string
		config string
		point  config.EnforcementPoint
		want   config.Action
	}{
		{"built-in default in CI", "", config.CI, config.Deny},
		{"built-in default at admission", "", config.Admission, config.Warn},
		{"configured severity wins over the per-point default", "rules:\n  KG401: {severity: deny}\n", config.Admission, config.Deny},
		{"configured point action wins over everything", "rules:\n  KG401: {actions: {ci: warn}}\n", config.CI, config.Warn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Parse("karpgate.yaml", []byte(tt.config))
			if err != nil {
				t.Fatal(err)
			}
			res, err := newTestEngine(t, Options{Config: cfg}).Evaluate(context.Background(), Request{Object: pool, Point: tt.point})
			if err != nil {
				t.Fatal(err)
			}
			var got []config.Action
			for _, f := range res.Findings {
				if f.RuleID == "KG401" {
					got = append(got, f.Action)
				}
			}
			if len(got) != 1 || got[0] != tt.want {
				t.Fatalf("KG401 actions %v, want [%s]", got, tt.want)
			}
		})
	}
}

// TestBudgetReasonsFollowTheJudgedRelease: a budget without reasons covers
// Unhealthy from Karpenter v1.15 on, so KG302 names it there and not when
// the engine judges by v1.14.
func TestBudgetReasonsFollowTheJudgedRelease(t *testing.T) {
	pool := map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": map[string]any{"name": "nightly"},
		"spec": map[string]any{"disruption": map[string]any{"budgets": []any{
			map[string]any{"nodes": "1", "schedule": "0 2 * * *", "duration": "2h"},
		}}},
	}
	tests := []struct {
		version string
		want    string
	}{
		{"v1.14", "Underutilized, Empty and Drifted disruptions are unlimited"},
		{"v1.15", "Underutilized, Empty, Drifted and Unhealthy disruptions are unlimited"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			r, _, err := release.Lookup(tt.version)
			if err != nil {
				t.Fatal(err)
			}
			judged := release.ForRelease(r, true, "test")
			e := newTestEngine(t, Options{Karpenter: &judged})
			res, err := e.Evaluate(context.Background(), Request{Object: pool})
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(res.Findings, func(f Finding) bool { return f.RuleID == "KG302" })
			if i < 0 || !strings.HasPrefix(res.Findings[i].Message, tt.want) {
				t.Fatalf("findings %v; want KG302 starting %q", summary(res.Findings), tt.want)
			}
		})
	}
}
