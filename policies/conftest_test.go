package policies

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/test/golden"
)

func nodePool(name string, annotations map[string]any, spec map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": map[string]any{"name": name, "annotations": annotations},
		"spec":     spec,
	}
}

// TestConftestPolicyInRegoV0 evaluates a conftest policy written before
// Rego v1 (deny[msg] { ... }) on NodePools as written: a deny, a warn whose
// value is an object with msg, and an exception of the bare deny rule.
func TestConftestPolicyInRegoV0(t *testing.T) {
	e := newTestEngine(t, Options{PolicyDirs: []string{"testdata/conftest/karpenter-v0"}})
	if !e.HasDocumentRules() {
		t.Fatal("a package main policy with deny rules must load as a conftest policy")
	}
	never := map[string]any{"template": map[string]any{"spec": map[string]any{"expireAfter": "Never"}}, "limits": map[string]any{"cpu": "1"}}
	tests := []struct {
		name       string
		object     map[string]any
		wantActive []string // rule: message prefix
		wantWaived []string
	}{
		{"no limits", nodePool("unlimited", nil, map[string]any{}), []string{"main.deny: NodePool unlimited has no spec.limits"}, nil},
		{"never expires", nodePool("old", nil, never), []string{"main.warn_expire: NodePool old never expires its nodes"}, nil},
		{"excepted", nodePool("approved", map[string]any{"example.com/unlimited": "approved"}, map[string]any{}), nil, []string{"main.deny: NodePool approved has no spec.limits"}},
		{"another kind", map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "x"}}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.EvaluateDocument(context.Background(), tt.object)
			if err != nil {
				t.Fatal(err)
			}
			check := func(what string, got []Finding, want []string) {
				if len(got) != len(want) {
					t.Fatalf("%s: got %v, want %v", what, got, want)
				}
				for i, f := range got {
					if s := f.RuleID + ": " + f.Message; !strings.HasPrefix(s, want[i]) || f.Package != "main" {
						t.Errorf("%s[%d] = %q (package %q), want %q in package main", what, i, s, f.Package, want[i])
					}
				}
			}
			check("findings", res.Findings, tt.wantActive)
			check("waived", res.Waived, tt.wantWaived)
			for _, f := range res.Findings {
				if want := map[string]config.Action{"main.deny": config.Deny, "main.warn_expire": config.Warn}[f.RuleID]; f.Action != want {
					t.Errorf("%s acts %s, want %s", f.RuleID, f.Action, want)
				}
			}
		})
	}
}

func TestConftestPoliciesRefused(t *testing.T) {
	tests := []struct {
		name       string
		dir        string
		namespaces []string
		wantErr    string
	}{
		{"boolean rule", "testdata/conftest/boolean", nil, "testdata/conftest/boolean/deny.rego:4: main.deny is a boolean rule"},
		{"bad namespace glob", "testdata/conftest/karpenter-v0", []string{"ma[in"}, `--namespace "ma[in"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), Options{PolicyDirs: []string{tt.dir}, Namespaces: tt.namespaces})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestConftestObjectWithoutMsgIsAnError(t *testing.T) {
	e := newTestEngine(t, Options{PolicyDirs: []string{"testdata/conftest/nomsg"}})
	_, err := e.EvaluateDocument(context.Background(), nodePool("x", nil, map[string]any{}))
	if err == nil || !strings.Contains(err.Error(), "rule main.deny returned an object without a string msg") {
		t.Fatalf("got %v", err)
	}
}

// TestConftestNamespaceSelection: only the namespaces asked for load as
// conftest policies; the others stay libraries.
func TestConftestNamespaceSelection(t *testing.T) {
	for _, tt := range []struct {
		namespaces []string
		want       bool
	}{{nil, true}, {[]string{"main"}, true}, {[]string{"m*"}, true}, {[]string{"*"}, true}, {[]string{"other"}, false}} {
		e := newTestEngine(t, Options{PolicyDirs: []string{"testdata/conftest/karpenter-v0"}, Namespaces: tt.namespaces})
		if got := e.HasDocumentRules(); got != tt.want {
			t.Errorf("namespaces %v: HasDocumentRules = %v, want %v", tt.namespaces, got, tt.want)
		}
	}
}

// FuzzEvaluateDocument feeds arbitrary documents to a conftest policy, as
// lint does with every document of its input: whatever a document holds,
// evaluation must not panic, and only a policy's own mistake (an object
// without msg) may fail it.
func FuzzEvaluateDocument(f *testing.F) {
	for _, s := range golden.Glob(f, "testdata/conftest/karpenter-v0/*.yaml") {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("kind: NodePool\nmetadata: {name: [1]}\nspec: {template: {spec: {expireAfter: Never}}}\n"))
	f.Add([]byte("kind: [NodePool]\nmetadata: 7\n"))
	e := newTestEngine(f, Options{PolicyDirs: []string{"testdata/conftest/karpenter-v0"}})
	f.Fuzz(func(t *testing.T, data []byte) {
		objects, err := manifest.ReadAll([]string{"-"}, bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, o := range objects {
			if _, err := e.EvaluateDocument(context.Background(), o.Content); err != nil {
				t.Fatalf("%s: %v", data, err)
			}
		}
	})
}
