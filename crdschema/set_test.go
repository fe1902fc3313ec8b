package crdschema

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// smallCRD is written for these tests (not Karpenter's): one served and one
// unserved version.
const smallCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [size]
              properties:
                size: {type: integer, minimum: 1, default: 1}
                colour: {type: string, enum: [red, green]}
    - name: v0
      served: false
      storage: false
      schema:
        openAPIV3Schema: {type: object}
`

func TestParseCRDsAndNew(t *testing.T) {
	crds, err := ParseCRDs("widgets.yaml", []byte(smallCRD+"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: skipped}\n"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := New("test widgets", crds)
	if err != nil {
		t.Fatal(err)
	}
	if !set.Has("example.com", "Widget") || set.Has("example.com", "Gadget") {
		t.Error("Has")
	}
	if got := set.Served("example.com", "Widget"); !slices.Equal(got, []string{"v1"}) {
		t.Errorf("served %v: an unserved version must not be judged", got)
	}
	if _, ok := set.Lookup("example.com/v0", "Widget"); ok {
		t.Error("unserved version looked up")
	}
	v, ok := set.Lookup("example.com/v1", "Widget")
	if !ok {
		t.Fatal("v1 not found")
	}
	verdict, err := v.Create(context.Background(), map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"},
		"spec":     map[string]any{"colour": "blue"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := brief(verdict.Violations); !slices.Equal(got, []string{"enum spec.colour"}) {
		t.Errorf("got %q", got)
	}
	// A namespaced object without namespace gets kubectl's default.
	if ns := verdict.Stored["metadata"].(map[string]any)["namespace"]; ns != "default" {
		t.Errorf("namespace %v", ns)
	}
	if size := verdict.Stored["spec"].(map[string]any)["size"]; size != int64(1) {
		t.Errorf("default size %v (%T)", size, size)
	}
	if len(set.CRDs()) != 1 || set.CRDs()[0] == set.crds[0] {
		t.Error("CRDs must return copies")
	}
}

func TestBrokenCRDsAreRefusedWhenLoaded(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"old API", strings.Replace(smallCRD, "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1", 1), "only apiextensions.k8s.io/v1 CRDs"},
		{"no schema", strings.Replace(smallCRD, "      schema:\n        openAPIV3Schema:\n          type: object\n          properties:", "      x:\n        openAPIV3Schema:\n          type: object\n          properties:", 1), "no openAPIV3Schema"},
		{"not structural", strings.Replace(smallCRD, "size: {type: integer, minimum: 1, default: 1}", "size: {minimum: 1}", 1), "not structural"},
		{"twice", smallCRD + "---\n" + smallCRD, "two CustomResourceDefinitions for Widget.example.com"},
		{"Helm template", smallCRD + "  {{- if .Values.webhook.enabled }}\n  conversion: {{ .Values.x }}\n", "looks like a Helm template"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crds, err := ParseCRDs("crds.yaml", []byte(tt.yaml))
			if err == nil {
				_, err = New("test", crds)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestLoadFiles(t *testing.T) {
	if _, err := LoadFiles([]string{"-"}); err == nil || !strings.Contains(err.Error(), "standard input") {
		t.Errorf("stdin: %v", err)
	}
	if _, err := LoadFiles([]string{"doc.go"}); err == nil {
		t.Error("a file without CRDs must be refused")
	}
}

// The linked set's name must say which release go.mod links: `karpgate
// version` and every lint report print it.
func TestLinkedReleaseMatchesGoMod(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-json", LinkedModule).Output()
	if err != nil {
		t.Fatal(err)
	}
	var mod struct{ Version string }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	if mod.Version != LinkedRelease {
		t.Fatalf("go.mod links %s %s but LinkedRelease says %s: update it", LinkedModule, mod.Version, LinkedRelease)
	}
	set := linked(t)
	for _, kind := range []string{"NodePool", "NodeClaim"} {
		if _, ok := set.Lookup("karpenter.sh/v1", kind); !ok {
			t.Errorf("linked set lacks karpenter.sh/v1 %s", kind)
		}
	}
	if _, ok := set.Lookup("karpenter.k8s.aws/v1", "EC2NodeClass"); !ok {
		t.Error("linked set lacks EC2NodeClass")
	}
}

// The linked set is every CRD of the linked release, as the release table
// (read from the provider module's CRD folder, which the karpenter-crd
// chart installs) states them: CapacityBuffer too, which LinkedModule's
// Go package does not embed.
func TestLinkedSetIsTheReleasesCRDs(t *testing.T) {
	r, exact, err := release.Lookup(LinkedRelease)
	if err != nil || !exact {
		t.Fatalf("release %s: %v (exact %t)", LinkedRelease, err, exact)
	}
	facts, err := linked(t).Facts()
	if err != nil {
		t.Fatal(err)
	}
	key := func(k release.Kind) string { return k.Kind + "." + k.Group + " " + strings.Join(k.Served, ",") }
	var got, want []string
	for _, k := range facts.Kinds {
		got = append(got, key(k))
	}
	for _, k := range r.Facts.Schema.Kinds {
		want = append(want, key(k))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the linked set has %q; Karpenter %s's CRDs are %q", got, LinkedRelease, want)
	}
}

func TestLinkedSetIsJudgedAsTheLinkedRelease(t *testing.T) {
	set, err := Linked()
	if err != nil {
		t.Fatal(err)
	}
	j, err := set.Judged()
	if err != nil {
		t.Fatal(err)
	}
	if j.Release.Version.String() != LinkedRelease || !j.Exact {
		t.Fatalf("linked set judged as %s", j)
	}
	// The same CRDs under another name are detected from what they state.
	facts, err := set.Facts()
	if err != nil {
		t.Fatal(err)
	}
	d := release.Detect(facts)
	if d.Release.Version.String() != LinkedRelease || !d.Exact {
		t.Fatalf("the linked CRDs detected as %s (exact %t, differences %v); want %s", d.Release.Version, d.Exact, d.Differences, LinkedRelease)
	}
}

// HasGroup: the linked set speaks for Karpenter's groups, NodeOverlay and
// CapacityBuffer included, and for no other group.
func TestHasGroup(t *testing.T) {
	set, err := Linked()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		group, kind       string
		hasGroup, hasKind bool
	}{
		{"karpenter.sh", "NodeOverlay", true, true},
		{"karpenter.sh", "NoSuchKind", true, false},
		{"karpenter.k8s.aws", "EC2NodeClass", true, true},
		{"karpenter.kwok.sh", "KWOKNodeClass", false, false},
		{"autoscaling.x-k8s.io", "CapacityBuffer", true, true},
		// Cluster Autoscaler's: lint asks Has in this shared group.
		{"autoscaling.x-k8s.io", "ProvisioningRequest", true, false},
		{"", "ConfigMap", false, false},
	} {
		if got := set.HasGroup(tt.group); got != tt.hasGroup {
			t.Errorf("HasGroup(%q) = %v, want %v", tt.group, got, tt.hasGroup)
		}
		if got := set.Has(tt.group, tt.kind); got != tt.hasKind {
			t.Errorf("Has(%q, %q) = %v, want %v", tt.group, tt.kind, got, tt.hasKind)
		}
	}
}
