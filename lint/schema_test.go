package lint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/internal/devcluster/controlplane"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/policies"
)

const legacyNodePool = `apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: legacy
spec:
  template:
    spec:
      nodeClassRef: {name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
  disruption:
    consolidationPolicy: WhenUnderutilized
    expireAfter: 30d
`

// A v1beta1 object is judged in v1beta1 by CRDs that serve it, and as
// karpgate's conversion to v1 by CRDs that do not; either way the finding
// points at the field the author wrote.
func TestV1Beta1ObjectsAreJudgedWhereTheyAreServedOrAsTheirConversion(t *testing.T) {
	v108, err := controlplane.LoadCRDSets(context.Background(), crdsource.KarpenterV1_0_8)
	if err != nil {
		t.Fatal(err)
	}
	servesV1Beta1, err := crdschema.New("Karpenter v1.0.8", v108)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		crds    *crdschema.Set
		message string
	}{
		{"as its v1 conversion", linkedCRDs(t), `as v1 (karpgate's conversion) spec.template.spec.expireAfter: Invalid value: "30d"`},
		{"in v1beta1", servesV1Beta1, `Invalid value: "30d": spec.disruption.expireAfter in body should match`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: strings.NewReader(legacyNodePool), Engine: engineFor(t, nil), CRDs: tt.crds})
			if err != nil {
				t.Fatal(err)
			}
			var found bool
			for _, f := range r.Findings() {
				if f.RuleID == "KG804" {
					found = true
					if f.Path != "spec.disruption.expireAfter" || f.Line != 12 || f.Column != 5 || !strings.HasPrefix(f.Message, tt.message) {
						t.Errorf("finding not at the v1beta1 field or without its message: %s:%d:%d %s", f.Path, f.Line, f.Column, f.Message)
					}
				}
			}
			if !found {
				t.Fatalf("no KG804:\n%s", describe(r))
			}
		})
	}
}

// seesDefaults is a user rule that reports what it sees of the budgets and
// of a field the API server would prune.
const seesDefaults = `# METADATA
# title: Shows what rules see
# custom:
#   id: ACME1
#   severity: warn
#   kinds: [NodePool]
#   fix: none
package karpgate.rules.acme_sees

violation contains {"msg": sprintf("budgets %v", [object.get(input.object.spec.disruption, "budgets", "absent")]), "path": "spec.disruption"}
`

// Rules reason about the object with the CRD's defaults (the budgets a
// NodePool gets when it names none), while a field the API server would
// prune stays visible to the rule about it.
func TestRulesSeeTheDefaultedObject(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sees.rego"), []byte(seesDefaults), 0o644); err != nil {
		t.Fatal(err)
	}
	engine, err := policies.New(context.Background(), policies.Options{PolicyDirs: []string{dir}, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	input := `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
  disruption:
    consolidateAfter: 1m
    expireAfter: 720h
`
	for _, tt := range []struct {
		crds *crdschema.Set
		want string
	}{
		{linkedCRDs(t), `budgets [{"nodes": "10%"}]`},
		{nil, "budgets absent"},
	} {
		r, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: strings.NewReader(input), Engine: engine, CRDs: tt.crds})
		if err != nil {
			t.Fatal(err)
		}
		rules := map[string]string{}
		for _, f := range r.Findings() {
			rules[f.RuleID] = f.Message
		}
		if rules["ACME1"] != tt.want {
			t.Errorf("with CRDs %v the rule saw %q, want %q", tt.crds != nil, rules["ACME1"], tt.want)
		}
		// KG402 (expireAfter under disruption) sees the field pruning would
		// drop; the unknown-field finding at that path folds into it.
		if _, ok := rules["KG402"]; !ok {
			t.Errorf("KG402 missing:\n%s", describe(r))
		}
		if _, ok := rules["KG807"]; ok {
			t.Errorf("KG807 should fold into KG402:\n%s", describe(r))
		}
	}
}

// refusedTwice is refused by the API server for two reasons: an unknown
// field (KG807) and a weight above 100 (KG805); it waives a third class.
const refusedTwice = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: refused
  annotations: {karpgate.io/waive-KG806: "checked by hand"}
spec:
  weight: 200
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: Gt, values: ["1", "2"]}
  disruption:
    consolidateAfter: 1m
    consolidateAftr: 2m
`

// The schema stage is a Stage like any other: given through Options.Stages
// on several workers it reports what Options.CRDs does, and its findings
// are configured (actions, disabled rules) and waived like any rule's.
func TestSchemaStageIsConfiguredLikeAnyRule(t *testing.T) {
	cfg, err := config.Parse("karpgate.yaml", []byte("rules:\n  KG807: {severity: warn}\n  KG805: {enabled: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  *config.Config
		want []string
	}{
		{"defaults", nil, []string{"deny KG805 spec.weight", "deny KG807 spec.disruption.consolidateAftr", "waived KG806 spec.template.spec.requirements"}},
		{"configured", cfg, []string{"warn KG807 spec.disruption.consolidateAftr", "waived KG806 spec.template.spec.requirements"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			engine := engineFor(t, tt.cfg)
			stage := NewSchemaStage(linkedCRDs(t), engine)
			input := strings.Repeat(refusedTwice+"---\n", 8)
			r, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: strings.NewReader(input), Engine: engine, Stages: []Stage{stage}, Workers: 4})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Objects) != 8 {
				t.Fatalf("%d objects", len(r.Objects))
			}
			for _, o := range r.Objects {
				var got []string
				for _, f := range o.Findings {
					if strings.HasPrefix(f.RuleID, "KG8") {
						got = append(got, string(f.Action)+" "+f.RuleID+" "+f.Path)
					}
				}
				for _, f := range o.Waived {
					got = append(got, "waived "+f.RuleID+" "+f.Path)
				}
				if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
					t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
				}
			}
		})
	}
}

// A bare YAML 1.1 boolean is judged as kubectl sends it. Where the CRD
// refuses the boolean, the schema finding says to quote it; where it takes
// the boolean, KG811 warns; quoted, it is a string and nothing is said.
func TestYAML11BooleansAreJudgedAsKubectlSendsThem(t *testing.T) {
	pool := func(label string) string {
		return `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: general
spec:
  template:
    metadata:
      labels:
        spot: ` + label + `
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
`
	}
	class := func(encrypted string) string {
		return nodeClass(`  amiSelectorTerms: [{alias: al2023@v20240807}]
  blockDeviceMappings:
    - deviceName: /dev/xvda
      ebs: {volumeSize: 100Gi, encrypted: ` + encrypted + "}\n")
	}
	tests := []struct {
		name, doc       string
		rule, path, fix string // rule "" means no finding
		line, column    int    // of the field's key, where lint puts a finding
	}{
		{"a label refused as a boolean", pool("yes"), "KG802", "spec.template.metadata.labels.spot", `write "yes" in quotes`, 9, 9},
		{"a quoted label", pool(`"yes"`), "", "", "", 0, 0},
		{"a boolean field taking yes", class("yes"), "KG811", "spec.blockDeviceMappings[0].ebs.encrypted", `Write true if a boolean is meant, or "yes" in quotes`, 12, 32},
		{"a boolean field taking true", class("true"), "", "", "", 0, 0},
		{"a boolean field refusing a quoted yes", class(`"yes"`), "KG802", "spec.blockDeviceMappings[0].ebs.encrypted", "", 12, 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: strings.NewReader(tt.doc), Engine: engineFor(t, nil), CRDs: linkedCRDs(t)})
			if err != nil {
				t.Fatal(err)
			}
			var got []Located
			for _, f := range r.Findings() {
				if strings.HasPrefix(f.RuleID, "KG8") {
					got = append(got, f)
				}
			}
			if tt.rule == "" {
				if len(got) > 0 {
					t.Fatalf("want no schema finding, got:\n%s", describe(r))
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one %s, got:\n%s", tt.rule, describe(r))
			}
			f := got[0]
			if f.RuleID != tt.rule || f.Path != tt.path || f.Line != tt.line || f.Column != tt.column || !strings.Contains(f.Fix, tt.fix) {
				t.Errorf("got %s %s at %d:%d, fix %q; want %s %s at %d:%d, fix containing %q", f.RuleID, f.Path, f.Line, f.Column, f.Fix, tt.rule, tt.path, tt.line, tt.column, tt.fix)
			}
		})
	}
}
