package jsonschema_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	validator "github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/config/jsonschema"
	"github.com/karpgate/karpgate/test/golden"
)

const schemaFile = "../karpgate.schema.json"

func generate(t *testing.T) []byte {
	t.Helper()
	docs, err := jsonschema.ReadDocs("..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := jsonschema.Generate(docs)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestSchemaIsUpToDate fails when config's types changed and the checked-in
// schema did not follow: go test ./config/jsonschema -update rewrites it.
func TestSchemaIsUpToDate(t *testing.T) {
	golden.Assert(t, schemaFile, generate(t))
}

func compile(t *testing.T, schema []byte) *validator.Schema {
	t.Helper()
	doc, err := validator.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := validator.NewCompiler()
	if err := c.AddResource(jsonschema.ID, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(jsonschema.ID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(s *validator.Schema, yamlDoc []byte) error {
	js, err := yaml.YAMLToJSON(yamlDoc)
	if err != nil {
		return err
	}
	v, err := validator.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// TestSchemaRefusesWhatKarpgateRefuses feeds the same files to config.Parse
// and to the schema: each must accept what the other accepts. The checks
// a schema cannot make are listed as such.
func TestSchemaRefusesWhatKarpgateRefuses(t *testing.T) {
	s := compile(t, generate(t))
	tests := []struct {
		name string
		yaml string
		// schemaCannotTell: config refuses it for a reason no schema can
		// express (a time zone the Go runtime does not know).
		schemaCannotTell bool
		// schemaStricter: the schema refuses on purpose what karpgate
		// reads. An unquoted 1.30 is the number 1.3 to every YAML tool but
		// karpgate's reader, so editors ask for the quotes.
		schemaStricter bool
	}{
		{"empty", "", false, false},
		{"only the header", "apiVersion: karpgate.io/v1alpha1\nkind: Config\n", false, false},
		{"empty keys read as unset", "production:\namis:\nrules:\nenvironment:\n", false, false},
		{"wrong apiVersion", "apiVersion: karpgate.io/v1\n", false, false},
		{"wrong kind", "kind: Settings\n", false, false},
		{"unknown top-level key", "environmnt: production\n", false, false},
		{"unknown nested key", "production:\n  value: [prod]\n", false, false},
		{"production lists", "production:\n  values: [prod]\n  labels: [env]\n  tags: [Environment]\n", false, false},
		{"production value not a list", "production:\n  values: prod\n", false, false},
		{"kubernetes version", "kubernetesVersion: \"1.33\"\n", false, false},
		{"kubernetes version with v", "kubernetesVersion: v1.33\n", false, false},
		{"kubernetes version with a patch", "kubernetesVersion: 1.33.1\n", false, false},
		{"kubernetes version as a number", "kubernetesVersion: 1.33\n", false, true},
		{"approved versions", "amis:\n  approvedAliasVersions:\n    al2023: [v20240807]\n", false, false},
		{"unknown alias family", "amis:\n  approvedAliasVersions:\n    ubuntu: [v1]\n", false, false},
		{"windows has no versions", "amis:\n  approvedAliasVersions:\n    windows2022: [v1]\n", false, false},
		{"latest is no pin", "amis:\n  approvedAliasVersions:\n    al2023: [latest]\n", false, false},
		{"the whole alias is no version", "amis:\n  approvedAliasVersions:\n    al2023: [al2023@v20240807]\n", false, false},
		{"empty version", "amis:\n  approvedAliasVersions:\n    al2023: [\"\"]\n", false, false},
		{"pin @latest with versions", "mutations:\n  pinLatestAlias: true\namis:\n  approvedAliasVersions:\n    al2023: [v20240807]\n", false, false},
		{"pin @latest without versions", "mutations:\n  pinLatestAlias: true\n", false, false},
		{"mutation not a boolean", "mutations:\n  nodeClassRefDefaults: sometimes\n", false, false},
		{"rule settings", "rules:\n  KG101:\n    enabled: false\n    severity: warn\n    actions: {ci: deny, admission: warn}\n", false, false},
		{"unknown severity", "rules:\n  KG101:\n    severity: error\n", false, false},
		{"unknown enforcement point", "rules:\n  KG101:\n    actions: {cd: deny}\n", false, false},
		{"unknown action", "rules:\n  KG101:\n    actions: {ci: block}\n", false, false},
		{"unknown rule setting", "rules:\n  KG101:\n    enable: false\n", false, false},
		{"audit action", "rules:\n  KG101:\n    actions: {admission: audit}\n", false, false},
		{"unwaivable rule", "rules:\n  KG101:\n    waivable: false\n", false, false},
		{"waiver approvers", "waivers:\n  approvers:\n    users: [alice]\n    groups: [platform]\n", false, false},
		{"waiver approvers unknown key", "waivers:\n  approvers:\n    teams: [platform]\n", false, false},
		{"same-write waivers allowed", "waivers:\n  allowSameWrite: true\n", false, false},
		{"same-write waivers not a boolean", "waivers:\n  allowSameWrite: sometimes\n", false, false},
		{"karpenter version", "karpenterVersion: v1.15\n", false, false},
		{"karpenter version with a patch", "karpenterVersion: 1.15.1\n", false, false},
		{"karpenter version not a version", "karpenterVersion: latest\n", false, false},
		{"karpenter version with a leading zero", "karpenterVersion: v1.05\n", false, false},
		// Before v1.0: the grammar holds, the release is unknown to karpgate.
		{"karpenter version before v1.0", "karpenterVersion: v0.37\n", true, false},
		{"time zone", "timezone: Europe/Paris\n", false, false},
		{"unknown time zone", "timezone: Mars/Olympus\n", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, parseErr := config.Parse("karpgate.yaml", []byte(tt.yaml))
			schemaErr := validate(s, []byte(tt.yaml))
			if tt.schemaCannotTell {
				if parseErr == nil || schemaErr != nil {
					t.Fatalf("expected karpgate alone to refuse it: karpgate %v, schema %v", parseErr, schemaErr)
				}
				return
			}
			if tt.schemaStricter {
				if parseErr != nil || schemaErr == nil {
					t.Fatalf("expected the schema alone to refuse it: karpgate %v, schema %v", parseErr, schemaErr)
				}
				return
			}
			if (parseErr == nil) != (schemaErr == nil) {
				t.Fatalf("karpgate and the schema disagree:\nkarpgate: %v\nschema:   %v", parseErr, schemaErr)
			}
		})
	}
}

// TestExampleConfigsValidate: every example karpgate.yaml carries the
// yaml-language-server comment, pointing at a schema that exists, and
// validates against it and in karpgate.
func TestExampleConfigsValidate(t *testing.T) {
	checkedIn, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	s := compile(t, checkedIn)
	examples := append(golden.Glob(t, "../*.example.yaml"), golden.Glob(t, "../../examples/*/karpgate.yaml")...)
	for _, file := range examples {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(data), "\n")
			target, ok := strings.CutPrefix(first, "# yaml-language-server: $schema=")
			if !ok {
				t.Fatalf("the first line must be the yaml-language-server schema comment, got %q", first)
			}
			if target != jsonschema.ID {
				ref, err := filepath.Abs(filepath.Join(filepath.Dir(file), target))
				if err != nil {
					t.Fatal(err)
				}
				want, _ := filepath.Abs(schemaFile)
				if ref != want {
					t.Fatalf("the comment points at %s, not at %s or %s", target, schemaFile, jsonschema.ID)
				}
			}
			if err := validate(s, data); err != nil {
				var ve *validator.ValidationError
				if errors.As(err, &ve) {
					out, _ := json.MarshalIndent(ve.BasicOutput(), "", "  ")
					t.Fatalf("%s does not validate:\n%s", file, out)
				}
				t.Fatal(err)
			}
			if _, err := config.Parse(file, data); err != nil {
				t.Fatal(err)
			}
		})
	}
}
