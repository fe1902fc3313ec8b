package lint

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies"
)

// engineJudging is the engine of `karpgate lint --karpenter-version v`.
func engineJudging(t testing.TB, v string, cfg *config.Config) *policies.Engine {
	t.Helper()
	r, exact, err := release.Lookup(v)
	if err != nil {
		t.Fatal(err)
	}
	judged := release.ForRelease(r, exact, "--karpenter-version "+v)
	judged.Chosen = true
	e, err := policies.New(context.Background(), policies.Options{Config: cfg, Karpenter: &judged, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// pool is a NodePool that every known release and the linked CRDs accept,
// with spec lines added at the end of its spec (two-space indented).
func pool(specLines string) string {
	return `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: general
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
` + specLines
}

// nodeClass is an EC2NodeClass every release with EC2NodeClass facts
// accepts, with spec lines added at the end of its spec.
func nodeClass(specLines string) string {
	return `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
` + specLines
}

// What a release's CRDs refuse that the linked ones accept is reported
// through the schema rules when lint judges by that release, pointing at
// the field, naming the release, what it allows and where the value is new;
// the releases that have the value say nothing.
func TestJudgedReleaseRefusesWhatItsCRDsLack(t *testing.T) {
	balanced := pool("  disruption:\n    consolidationPolicy: Balanced\n")
	static := pool("  replicas: 3\n")
	gte := strings.Replace(pool(""), "[on-demand]}\n", "[on-demand]}\n        - {key: karpenter.k8s.aws/instance-cpu, operator: Gte, values: [\"4\"]}\n", 1)
	enclave := nodeClass("  amiSelectorTerms: [{alias: al2023@v20240807}]\n  enclaveOptions: {enabled: true}\n")
	ssm := nodeClass("  amiFamily: AL2023\n  amiSelectorTerms: [{ssmParameter: /my/ami}]\n")
	windows2025 := nodeClass("  amiSelectorTerms: [{alias: windows2025@latest}]\n")
	reservations := nodeClass("  amiSelectorTerms: [{alias: al2023@v20240807}]\n  capacityReservationSelectorTerms: [{id: cr-0123456789abcdef0}]\n")
	overlay := "apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: cheap}\nspec: {weight: 1, requirements: [], priceAdjustment: \"-10%\"}\n"
	buffer := "apiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\nmetadata: {name: spare, namespace: team-a}\nspec: {podTemplateRef: {name: spare-shape}, replicas: 3}\n"
	unhealthy := pool("  disruption:\n    budgets: [{nodes: \"1\", reasons: [Unhealthy]}]\n")
	noKG204, err := config.Parse("karpgate.yaml", []byte("rules:\n  KG204: {enabled: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		finding      string // "KG803 path line:column"; "" for none
		message, fix []string
	}
	tests := []struct {
		name, doc, version string
		cfg                *config.Config
		want               want
	}{
		{"Balanced before v1.14", balanced, "v1.12", nil, want{"KG803 spec.disruption.consolidationPolicy 12:5",
			[]string{`"Balanced" is not a consolidation policy of Karpenter v1.12.0`, "allows WhenEmpty and WhenEmptyOrUnderutilized", "(Balanced is new in Karpenter v1.14)"},
			[]string{"Upgrade Karpenter to v1.14 or later before you use Balanced, or use WhenEmpty or WhenEmptyOrUnderutilized."}}},
		{"Balanced in v1.14", balanced, "v1.14", nil, want{}},
		{"Balanced in v1.15", balanced, "v1.15", nil, want{}},
		{"spec.replicas before v1.8", static, "v1.7", nil, want{"KG807 spec.replicas 11:3",
			[]string{"the NodePool CRD of Karpenter v1.6.4 does not declare spec.replicas", "spec has disruption, limits, template and weight", "(replicas is new since Karpenter v1.6; v1.8 has it)"},
			[]string{"Upgrade Karpenter to v1.8 or later before you use spec.replicas, or remove it."}}},
		{"spec.replicas in v1.8", static, "v1.8", nil, want{}},
		{"operator Gte before v1.9", gte, "v1.8", nil, want{"KG803 spec.template.spec.requirements[1].operator 11:49",
			[]string{`"Gte" is not a requirement operator of Karpenter v1.8.2`, "(Gte is new in Karpenter v1.9)"}, []string{"Upgrade Karpenter to v1.9 or later before you use Gte, or use In, NotIn,"}}},
		{"operator Gte in v1.9", gte, "v1.9", nil, want{}},
		{"enclaveOptions before v1.15", enclave, "v1.14", nil, want{"KG807 spec.enclaveOptions 10:3",
			[]string{"the EC2NodeClass CRD of Karpenter v1.14.3 does not declare spec.enclaveOptions", "(enclaveOptions is new in Karpenter v1.15)"}, nil}},
		{"enclaveOptions in v1.15", enclave, "v1.15", nil, want{}},
		{"ssmParameter in v1.0", ssm, "v1.0", nil, want{"KG807 spec.amiSelectorTerms[0].ssmParameter 10:23",
			[]string{"spec.amiSelectorTerms[0] has alias, id, name, owner and tags", "(ssmParameter is new since Karpenter v1.0; v1.8 has it)"}, nil}},
		// v1.1 to v1.7 have no AWS provider module, so no EC2NodeClass facts:
		// nothing is said rather than a guess.
		{"EC2NodeClass fields of a line without facts of them", reservations, "v1.6", nil, want{}},
		{"capacityReservationSelectorTerms in v1.0", reservations, "v1.0", nil, want{"KG807 spec.capacityReservationSelectorTerms 10:3", nil, nil}},
		{"alias windows2025 before v1.9", windows2025, "v1.8", nil, want{"KG806 spec.amiSelectorTerms[0].alias 9:23",
			[]string{`alias family "windows2025" is not one of Karpenter v1.8.2`, "(windows2025 is new in Karpenter v1.9)"}, nil}},
		{"NodeOverlay before its CRD", overlay, "v1.6", nil, want{"KG810 kind 2:1",
			[]string{"Karpenter v1.6.4 has no NodeOverlay CRD in karpenter.sh"}, []string{"Upgrade Karpenter to v1.8 or later before you apply a NodeOverlay, or remove it."}}},
		{"NodeOverlay in v1.8", overlay, "v1.8", nil, want{}},
		// No release before v1.14 has a kind of autoscaling.x-k8s.io: the
		// kind being new in a later line is what says the release lacks it.
		{"CapacityBuffer before its CRD", buffer, "v1.12", nil, want{"KG810 kind 2:1",
			[]string{"Karpenter v1.12.0 has no CapacityBuffer CRD in autoscaling.x-k8s.io", "(CapacityBuffer is new in Karpenter v1.14)"},
			[]string{"Upgrade Karpenter to v1.14 or later before you apply a CapacityBuffer, or remove it."}}},
		{"CapacityBuffer in a line without AWS facts", buffer, "v1.6", nil, want{"KG810 kind 2:1", []string{"Karpenter v1.6.4 has no CapacityBuffer CRD"}, nil}},
		{"CapacityBuffer in v1.14", buffer, "v1.14", nil, want{}},
		{"CapacityBuffer in v1.15", buffer, "v1.15", nil, want{}},
		// KG204 says it with the fix; one problem, one finding.
		{"Unhealthy before v1.15 is KG204's", unhealthy, "v1.14", nil, want{"KG204 spec.disruption.budgets[0].reasons[0] 12:38", nil, nil}},
		{"Unhealthy with KG204 off", unhealthy, "v1.14", noKG204, want{"KG803 spec.disruption.budgets[0].reasons[0] 12:38",
			[]string{`"Unhealthy" is not a disruption reason of Karpenter v1.14.3`}, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: strings.NewReader(tt.doc), Engine: engineJudging(t, tt.version, tt.cfg), CRDs: linkedCRDs(t)})
			if err != nil {
				t.Fatal(err)
			}
			var got []Located
			for _, f := range r.Findings() {
				if f.Action == config.Deny {
					got = append(got, f)
				}
			}
			if tt.want.finding == "" {
				if len(got) > 0 {
					t.Fatalf("want no denial, got:\n%s", describe(r))
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one denial, got:\n%s", describe(r))
			}
			f := got[0]
			if at := fmt.Sprintf("%s %s %d:%d", f.RuleID, f.Path, f.Line, f.Column); at != tt.want.finding {
				t.Errorf("got %s, want %s", at, tt.want.finding)
			}
			for _, m := range tt.want.message {
				if !strings.Contains(f.Message, m) {
					t.Errorf("message %q lacks %q", f.Message, m)
				}
			}
			for _, m := range tt.want.fix {
				if !strings.Contains(f.Fix, m) {
					t.Errorf("fix %q lacks %q", f.Fix, m)
				}
			}
		})
	}
}

// Judged by the linked release, chosen or not, lint reports exactly what
// it reported before the release's facts took part: every rule fixture
// gets the same findings.
func TestJudgingByTheLinkedReleaseChangesNothing(t *testing.T) {
	lintWith := func(e *policies.Engine) string {
		r, err := Run(context.Background(), Options{Inputs: []string{"../policies/testdata/rules"}, Engine: e, CRDs: linkedCRDs(t), Workers: 4})
		if err != nil {
			t.Fatal(err)
		}
		return describe(r)
	}
	byCRDs := lintWith(engineFor(t, nil))
	if !strings.Contains(byCRDs, "KG803") || !strings.Contains(byCRDs, "KG807") {
		t.Fatal("the fixtures no longer exercise the schema rules")
	}
	if chosen := lintWith(engineJudging(t, "v1.15", nil)); chosen != byCRDs {
		t.Errorf("--karpenter-version v1.15 changed the findings:\n%s\nwant\n%s", chosen, byCRDs)
	}
}

// Odd input (a spec that is no map, lists where maps belong, numbers where
// strings belong) gets no finding from the release's facts and no panic:
// the CRD verdict is the one that speaks about the shape.
func TestJudgedReleaseChecksTakeAnyShape(t *testing.T) {
	checks, err := newReleaseSchema(linkedCRDs(t), engineJudging(t, "v1.0", nil).Karpenter())
	if err != nil || checks == nil {
		t.Fatalf("no checks for v1.0: %v", err)
	}
	pool := schema.GroupVersion{Group: "karpenter.sh", Version: "v1"}
	class := schema.GroupVersion{Group: "karpenter.k8s.aws", Version: "v1"}
	specs := []any{
		nil, 3, "x", []any{"a"}, map[string]any{},
		map[string]any{"disruption": []any{1}, "template": "x"},
		map[string]any{"disruption": map[string]any{"consolidationPolicy": 5, "budgets": map[string]any{"a": 1}}},
		map[string]any{"disruption": map[string]any{"budgets": []any{nil, 3, map[string]any{"reasons": "Unhealthy"}, map[string]any{"reasons": []any{nil, 1.5, []any{}}}}}},
		map[string]any{"template": map[string]any{"spec": map[string]any{"requirements": map[string]any{"operator": "Gte"}}}},
		map[string]any{"template": map[string]any{"spec": map[string]any{"requirements": []any{nil, "Gte", 3, map[string]any{"operator": true}}}}},
		map[string]any{"amiSelectorTerms": map[string]any{"alias": "windows2025@latest"}},
		map[string]any{"amiSelectorTerms": []any{nil, "ssmParameter", map[string]any{"alias": 7}, map[string]any{"alias": "@"}, map[string]any{"alias": ""}}},
	}
	for _, gv := range []schema.GroupVersion{pool, class} {
		for _, kind := range []string{"NodePool", "EC2NodeClass", "NodeClaim", ""} {
			for i, spec := range specs {
				content := map[string]any{"spec": spec}
				if vs := checks.violations(gv, kind, content, true); len(vs) > 0 {
					t.Errorf("%s %s spec #%d: %+v", gv, kind, i, vs)
				}
			}
			if vs := checks.violations(gv, kind, nil, true); len(vs) > 0 {
				t.Errorf("%s %s without content: %+v", gv, kind, vs)
			}
		}
	}
}
