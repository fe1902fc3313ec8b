package render

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/install"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// TestCheckedInManifestsAreCurrent fails when manifests/ is not what the
// generator writes today.
func TestCheckedInManifestsAreCurrent(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tree, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := tree.Diff(filepath.Join(root, "manifests"))
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("manifests/ is stale; run `make manifests`:\n  %s", strings.Join(problems, "\n  "))
	}
}

func TestTreeDiffAndWrite(t *testing.T) {
	tree := Tree{"base/a.yaml": []byte("a\n"), "base/b.yaml": []byte("b\n"), "charts/karpgate/Chart.yaml": []byte("c\n")}
	tests := []struct {
		name    string
		disturb func(dir string) error
		want    []string
	}{
		{"as written", func(string) error { return nil }, nil},
		{"edited by hand", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "base", "a.yaml"), []byte("edited\n"), 0o644)
		},
			[]string{"base/a.yaml: differs from the generator's output"}},
		{"deleted", func(dir string) error { return os.Remove(filepath.Join(dir, "charts", "karpgate", "Chart.yaml")) },
			[]string{"charts/karpgate/Chart.yaml: missing"}},
		{"left over", func(dir string) error { return os.WriteFile(filepath.Join(dir, "base", "old.yaml"), nil, 0o644) },
			[]string{"base/old.yaml: not generated any more"}},
		{"outside the generated folders", func(dir string) error {
			if err := os.MkdirAll(filepath.Join(dir, "overlays", "mine"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "overlays", "mine", "kustomization.yaml"), nil, 0o644)
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tree.Write(dir); err != nil {
				t.Fatal(err)
			}
			if err := tt.disturb(dir); err != nil {
				t.Fatal(err)
			}
			got, err := tree.Diff(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Diff = %q, want %q", got, tt.want)
			}
			// Writing again repairs the generated folders and nothing else.
			if err := tree.Write(dir); err != nil {
				t.Fatal(err)
			}
			if got, _ := tree.Diff(dir); len(got) != 0 {
				t.Errorf("after Write, Diff = %q", got)
			}
		})
	}
}

// TestConversionPatchCarriesOnlyConversion: a typed CRD has zero values in
// required fields (spec.group, spec.names); applying them would fight
// Karpenter's installer for fields karpgate has no business owning.
func TestConversionPatchCarriesOnlyConversion(t *testing.T) {
	for _, p := range install.ConversionPatches(install.Defaults()) {
		content, err := partialContent(p)
		if err != nil {
			t.Fatal(err)
		}
		shape := map[string][]string{}
		for k, v := range content {
			if m, ok := v.(map[string]any); ok {
				for kk := range m {
					shape[k] = append(shape[k], kk)
				}
				slices.Sort(shape[k])
			} else {
				shape[k] = nil
			}
		}
		want := map[string][]string{"apiVersion": nil, "kind": nil, "metadata": {"annotations", "name"}, "spec": {"conversion"}}
		if !reflect.DeepEqual(shape, want) {
			t.Errorf("patch shape %v, want %v", shape, want)
		}
	}
	_, err := partialContent(install.Partial{Object: install.ConversionPatches(install.Defaults())[0].Object, Fields: [][]string{{"spec", "group"}, {"status", "storedVersions"}}})
	if err == nil || !strings.Contains(err.Error(), "[status storedVersions] is not set") {
		t.Errorf("a patch naming an unset field must fail, got %v", err)
	}
}

func TestHoles(t *testing.T) {
	const doc = `spec:
  replicas: 2
  resources:
    cpu: "1"
  args:
    - serve
    - --env=TOKENENV
  service:
    name: karpgate
`
	tests := []struct {
		name    string
		hole    hole
		want    string // a line or lines the template must contain
		wantErr string
	}{
		{"inline", hole{path: []string{"spec", "replicas"}, inline: "{{ .Values.replicas }}"}, "  replicas: {{ .Values.replicas }}\n", ""},
		{"block", hole{path: []string{"spec", "resources"}, block: "{{- toYaml .Values.resources | nindent %d }}"},
			"  resources:\n    {{- toYaml .Values.resources | nindent 4 }}\n", ""},
		{"when on an item", hole{path: []string{"spec", "args", "--env="}, when: ".Values.env"},
			"    {{- if .Values.env }}\n    - --env=TOKENENV\n    {{- end }}\n  service:", ""},
		{"when on a key", hole{path: []string{"spec", "service"}, when: ".Values.service"},
			"  {{- if .Values.service }}\n  service:\n    name: karpgate\n  {{- end }}\n", ""},
		{"add to a mapping", hole{path: []string{"spec", "service"}, add: "{{- if .x }}\nport: 1\n{{- end }}"},
			"    name: karpgate\n    {{- if .x }}\n    port: 1\n    {{- end }}\n", ""},
		{"add to a sequence", hole{path: []string{"spec", "args"}, add: "- --extra"}, "    - --env=TOKENENV\n    - --extra\n", ""},
		{"missing key", hole{path: []string{"spec", "replica"}, inline: "x"}, "", `no key "replica"`},
		{"missing item", hole{path: []string{"spec", "args", "--nope"}, inline: "x"}, "", `no item "--nope"`},
		{"ambiguous item", hole{path: []string{"spec", "args", "e"}, inline: "x"}, "", `more than one item contains "e"`},
		{"under a scalar", hole{path: []string{"spec", "replicas", "x"}, inline: "x"}, "", `"x" is under a scalar`},
		{"nothing to do", hole{path: []string{"spec"}}, "", "the hole says nothing to do"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var root yaml.Node
			if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
				t.Fatal(err)
			}
			tm := newTemplater()
			tok, err := tm.dig(root.Content[0], tt.hole)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("dig: %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := tm.template([]*yaml.Node{root.Content[0]}, []string{tok})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("template\n%s\nlacks\n%s", got, tt.want)
			}
		})
	}
}

func TestFinishRefusesLostTokens(t *testing.T) {
	tm := newTemplater()
	value := tm.value("{{ .Release.Namespace }}")
	if _, err := tm.finish("name: x\n", []string{"HELMTOKEN99X"}); err == nil {
		t.Error("a hole whose token never reached the text must be an error")
	}
	got, err := tm.finish("namespace: \""+value+"\"\n", nil)
	if err != nil || got != "namespace: \"{{ .Release.Namespace }}\"\n" {
		t.Errorf("finish = %q, %v", got, err)
	}
}

func TestValuesNeedATaggedImage(t *testing.T) {
	opts := install.Defaults()
	opts.Image = "ghcr.io/karpgate/karpgate"
	if _, err := valuesFile(opts); err == nil || !strings.Contains(err.Error(), "has no tag") {
		t.Errorf("valuesFile: %v, want a missing-tag error", err)
	}
}
