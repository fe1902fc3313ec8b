package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseRejectsUnknownKeysByPath(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"top level", "environmnt: prod\n", `karpgate.yaml:1:1: environmnt: unknown key "environmnt"`},
		{"nested", "production:\n  label: [x]\n", `karpgate.yaml:2:3: production.label: unknown key "label"`},
		{"inside a rule", "rules:\n  KG101:\n    action: warn\n", `karpgate.yaml:3:5: rules[KG101].action: unknown key "action"`},
		{"inside amis", "amis:\n  approved: {}\n", `karpgate.yaml:2:3: amis.approved: unknown key "approved"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("karpgate.yaml", []byte(tt.in))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("got %v, want prefix %q", err, tt.want)
			}
		})
	}
}

func TestParseValidatesValues(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"severity", "rules:\n  KG101:\n    severity: block\n", `karpgate.yaml:3:5: rules[KG101].severity: "block" is not an action; use deny, warn or audit`},
		{"point", "rules:\n  KG101:\n    actions: {audit: warn}\n", `rules[KG101].actions[audit]: "audit" is not an enforcement point`},
		{"point action", "rules:\n  KG101:\n    actions: {ci: stop}\n", `rules[KG101].actions[ci]: "stop" is not an action`},
		{"family", "amis:\n  approvedAliasVersions:\n    ubuntu: [v1]\n", `karpgate.yaml:3:5: amis.approvedAliasVersions[ubuntu]: "ubuntu" is not an alias family`},
		{"windows", "amis:\n  approvedAliasVersions:\n    windows2022: [v1]\n", `windows2022 aliases can only be @latest`},
		{"latest", "amis:\n  approvedAliasVersions:\n    al2023: [v20240807, latest]\n", `karpgate.yaml:3:25: amis.approvedAliasVersions[al2023][1]: "latest" is not a pinned version`},
		{"full alias", "amis:\n  approvedAliasVersions:\n    al2023: [al2023@v20240807]\n", `write only the part after @`},
		{"k8s version", "kubernetesVersion: 1.3x\n", `kubernetesVersion: "1.3x" is not a Kubernetes minor version`},
		{"timezone", "timezone: Europe/Pariss\n", `karpgate.yaml:1:1: timezone: "Europe/Pariss" is not a time zone karpgate knows`},
		{"timezone offset", "timezone: \"+02:00\"\n", `write an IANA name such as Europe/Paris`},
		{"kind", "kind: ConfigMap\n", `kind: "ConfigMap" is not supported; use Config`},
		{"type", "production: [a]\n", `karpgate.yaml: yaml: unmarshal errors`},
		{"pin without versions", "mutations:\n  pinLatestAlias: true\n", `karpgate.yaml:2:3: mutations.pinLatestAlias: there is no version to pin @latest to`},
		{"mutation key", "mutations:\n  pinLatest: true\n", `karpgate.yaml:2:3: mutations.pinLatest: unknown key "pinLatest"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("karpgate.yaml", []byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseFullFile(t *testing.T) {
	in := `apiVersion: karpgate.io/v1alpha1
kind: Config
environment: staging
production:
  values: [live]
  labels: [team.example.com/env]
kubernetesVersion: "1.33"
amis:
  approvedAliasVersions:
    al2023: [v20240807]
rules:
  KG102: {enabled: false}
  KG101:
    severity: warn
    actions: {admission: deny}
`
	c, err := Parse("karpgate.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if c.Environment != "staging" || c.KubernetesVersion != "1.33" || !slices.Equal(c.Production.Values, []string{"live"}) {
		t.Fatalf("unexpected %+v", c)
	}
	if !slices.Equal(c.Production.Tags, []string{"environment"}) {
		t.Fatalf("unset tags keep their default, got %v", c.Production.Tags)
	}
	if c.Enabled("KG102") || !c.Enabled("KG101") || !c.Enabled("KG999") {
		t.Fatal("enabled flags wrong")
	}
	actions := []struct {
		id    string
		def   Action
		point EnforcementPoint
		want  Action
	}{
		{"KG101", Deny, CI, Warn},        // severity override
		{"KG101", Deny, Admission, Deny}, // point action wins
		{"KG103", Warn, CI, Warn},        // untouched
	}
	for _, a := range actions {
		if got := c.ActionFor(a.id, a.def, a.point); got != a.want {
			t.Errorf("ActionFor(%s, %s, %s) = %s, want %s", a.id, a.def, a.point, got, a.want)
		}
	}
	err = c.CheckRuleIDs(func(id string) bool { return id == "KG101" }, func(string) bool { return true })
	var ce *Error
	if !errors.As(err, &ce) || ce.Path != "rules[KG102]" || ce.Line != 12 {
		t.Fatalf("unknown rule ID must be reported with its path and line, got %v", err)
	}
}

func TestMutationDefaults(t *testing.T) {
	tests := []struct {
		in               string
		wantRef, wantPin bool
	}{
		{"", true, false},
		{"mutations: {nodeClassRefDefaults: false}\n", false, false},
		{"amis: {approvedAliasVersions: {al2023: [v20240807]}}\nmutations: {pinLatestAlias: true}\n", true, true},
	}
	for _, tt := range tests {
		c, err := Parse("karpgate.yaml", []byte(tt.in))
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		if got := *c.Mutations.NodeClassRefDefaults; got != tt.wantRef || c.Mutations.PinLatestAlias != tt.wantPin {
			t.Errorf("%q: nodeClassRefDefaults=%v pinLatestAlias=%v, want %v %v", tt.in, got, c.Mutations.PinLatestAlias, tt.wantRef, tt.wantPin)
		}
	}
}

func TestEmptyFileIsDefault(t *testing.T) {
	for _, in := range []string{"", "# nothing\n", "---\n"} {
		c, err := Parse("karpgate.yaml", []byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if !slices.Equal(c.Production.Values, Default().Production.Values) {
			t.Fatalf("%q: defaults not applied: %+v", in, c)
		}
	}
}

func TestIsProduction(t *testing.T) {
	labelled := func(v string) map[string]any {
		return map[string]any{"metadata": map[string]any{"labels": map[string]any{"karpgate.io/environment": v}}}
	}
	tagged := func(v string) map[string]any {
		return map[string]any{"spec": map[string]any{"tags": map[string]any{"environment": v}}}
	}
	tests := []struct {
		name   string
		env    string
		object map[string]any
		want   bool
	}{
		{"label prod", "", labelled("prod"), true},
		{"label Production (case)", "", labelled("Production"), true},
		{"label staging", "", labelled("staging"), false},
		{"tag production", "", tagged("production"), true},
		{"tag dev", "", tagged("dev"), false},
		{"nothing", "", map[string]any{}, false},
		{"cluster-wide production", "production", map[string]any{}, true},
		{"cluster-wide wins over label", "staging", labelled("prod"), false},
		{"label not a string", "", map[string]any{"metadata": map[string]any{"labels": map[string]any{"karpgate.io/environment": int64(1)}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default().WithEnvironment(tt.env)
			if got := c.IsProduction(tt.object); got != tt.want {
				t.Fatalf("got %v want %v", got, tt.want)
			}
		})
	}
}

func TestExampleFileParses(t *testing.T) {
	c, err := Load("karpgate.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.ActionFor("KG101", Deny, Admission) != Warn || c.SeverityFor("KG302", Warn) != Deny || c.Enabled("KG501") {
		t.Fatalf("example settings not read: %+v", c.Rules)
	}
	if !slices.Equal(c.AMIs.ApprovedAliasVersions["bottlerocket"], []string{"v1.20.3"}) {
		t.Fatalf("approved versions: %v", c.AMIs.ApprovedAliasVersions)
	}
}

func TestTimezoneIsForDisplayAndDefaultsToUTC(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "UTC"},
		{"environment: prod\n", "UTC"},
		{"timezone: Europe/Paris\n", "Europe/Paris"},
		{"timezone: UTC\n", "UTC"},
	} {
		c, err := Parse("karpgate.yaml", []byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Location().String(); got != tt.want {
			t.Errorf("%q: Location = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := Default().Location(); got != time.UTC {
		t.Errorf("Default().Location() = %v", got)
	}
	if got := (*Config)(nil).Location(); got != time.UTC {
		t.Errorf("nil config Location = %v", got)
	}
}

// TestParseRefusesAliasBombs: the review's 1.8 MB karpgate.yaml, one
// 150,000-key anchor merged 40,000 times, never finished loading; it is
// refused at the alias that takes it past manifest.MaxAliasNodes, and a
// file that uses aliases sparingly still loads.
func TestParseRefusesAliasBombs(t *testing.T) {
	var b strings.Builder
	b.WriteString("rules:\n  <<: [&a {")
	for i := range 150_000 {
		fmt.Fprintf(&b, "k%d: {},", i)
	}
	b.WriteString("}" + strings.Repeat(", *a", 40_000) + "]\n")
	_, err := Parse("bomb.yaml", []byte(b.String()))
	var e *Error
	if !errors.As(err, &e) || e.Line != 2 || !strings.HasPrefix(err.Error(), "bomb.yaml:2:") || !strings.Contains(err.Error(), "the YAML alias *a") {
		t.Fatalf("got %v, want an error at bomb.yaml:2 naming the alias", err)
	}

	c, err := Parse("karpgate.yaml", []byte("production:\n  values: &v [prod, live]\nrules:\n  KG101: &warn {severity: warn}\n  KG102: *warn\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Rules["KG102"].Severity != Warn || len(c.Production.Values) != 2 {
		t.Errorf("aliases not expanded: %+v", c)
	}
}
