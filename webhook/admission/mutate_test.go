package admission

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

const pinning = `
amis:
  approvedAliasVersions:
    al2023: [v20240807, v20240701]
mutations:
  pinLatestAlias: true
`

func TestMutatingWebhook(t *testing.T) {
	nameOnly := nodePool("ref", map[string]any{"name": "default"})
	broken := nodePool("broken", map[string]any{"name": "default"})
	latestProd := nodeClass("production-latest", production, "al2023@latest")
	beta := patch(t, nameOnly, `[{"op":"replace","path":"/apiVersion","value":"karpenter.sh/v1beta1"}]`)

	tests := []struct {
		name       string
		config     string
		policyDirs []string
		object     map[string]any
		patch      string // the JSON patch expected, "" for none
		warnings   []string
		// want is the object after the patch; nil means unchanged.
		want map[string]any
	}{
		{
			name: "nodeClassRef gets group and kind", object: nameOnly,
			patch:    `[{"op":"add","path":"/spec/template/spec/nodeClassRef/group","value":"karpenter.k8s.aws"},{"op":"add","path":"/spec/template/spec/nodeClassRef/kind","value":"EC2NodeClass"}]`,
			warnings: []string{"KG701 spec.template.spec.nodeClassRef: karpgate set group: karpenter.k8s.aws and kind: EC2NodeClass, which v1 requires and the manifest left out (fix: Write group and kind in the manifest, so that it applies the same without karpgate.)"},
			want:     nodePool("ref", fullRef),
		},
		{name: "complete nodeClassRef", object: nodePool("ref", fullRef)},
		{name: "switched off", config: "mutations: {nodeClassRefDefaults: false}", object: nameOnly},
		{name: "v1beta1 is left to conversion", object: beta},
		{
			name: "production @latest pinned", config: pinning, object: latestProd,
			patch:    `[{"op":"test","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@latest"},{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@v20240807"}]`,
			warnings: []string{`KG702 spec.amiSelectorTerms[0].alias: karpgate pinned "al2023@latest" to "al2023@v20240807", the first approved version for al2023`},
			want:     nodeClass("production-latest", production, "al2023@v20240807"),
		},
		{name: "@latest outside production is not pinned", config: pinning, object: nodeClass("dev", nil, "al2023@latest")},
		{name: "pinning is off by default", object: latestProd},
		{
			name: "a patch that cannot apply is skipped, the others apply", policyDirs: []string{"testdata/policies"}, object: broken,
			patch: `[{"op":"add","path":"/spec/weight","value":0},{"op":"add","path":"/spec/template/spec/nodeClassRef/group","value":"karpenter.k8s.aws"},{"op":"add","path":"/spec/template/spec/nodeClassRef/kind","value":"EC2NodeClass"}]`,
			warnings: []string{
				"ACME701 spec.weight: karpgate set weight: 0",
				"ACME702 could not be applied to NodePool/broken, so karpgate skipped it:",
				"KG701 spec.template.spec.nodeClassRef: karpgate set group",
			},
			want: patch(t, nodePool("broken", fullRef), `[{"op":"add","path":"/spec/weight","value":0}]`),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			engines := newEngine(t, tt.config, tt.policyDirs...)
			body := request{op: admissionv1.Create, object: tt.object}.body(t)
			_, review := post(t, NewMutatingWebhook(engines, logr.Discard()), body, "application/json")
			resp := review.Response
			if !resp.Allowed {
				t.Fatalf("the mutating webhook denied: %+v", resp.Result)
			}
			if string(resp.Patch) != tt.patch {
				t.Fatalf("patch:\n%s\nwant:\n%s", resp.Patch, tt.patch)
			}
			if (resp.PatchType != nil) != (tt.patch != "") {
				t.Fatalf("patchType %v with patch %q", resp.PatchType, resp.Patch)
			}
			if len(resp.Warnings) != len(tt.warnings) {
				t.Fatalf("warnings:\n%s\nwant %d", strings.Join(resp.Warnings, "\n"), len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if !strings.HasPrefix(resp.Warnings[i], w) {
					t.Errorf("warning %d:\n%s\nwant prefix:\n%s", i, resp.Warnings[i], w)
				}
			}
			if tt.want == nil {
				return
			}
			mutated := applyAsAPIServer(t, mustJSON(t, tt.object), resp.Patch)
			// What the API server sends next: the validating webhook
			// admits the mutated object without a word.
			var obj, want map[string]any
			if err := json.Unmarshal(mutated, &obj); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(mustJSON(t, tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(obj, want) {
				t.Fatalf("mutated object:\n%s\nwant:\n%s", mutated, mustJSON(t, tt.want))
			}
			_, validated := post(t, NewValidatingWebhook(newEngine(t, tt.config), logr.Discard()), request{op: admissionv1.Create, object: obj}.body(t), "application/json")
			if !validated.Response.Allowed || len(validated.Response.Warnings) != 0 {
				t.Fatalf("validation after the mutation: %+v %v", validated.Response.Result, validated.Response.Warnings)
			}
		})
	}
}

func TestMutatorAdmitsUnchangedWhenEvaluationFails(t *testing.T) {
	m := &Mutator{Engines: newEngine(t, ""), Log: logr.Discard()}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := ctrladmission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "1", Operation: admissionv1.Create}}
	req.Object.Raw = mustJSON(t, nodePool("ref", map[string]any{"name": "default"}))
	resp := m.Handle(ctx, req)
	if !resp.Allowed || resp.Patch != nil || len(resp.Warnings) != 1 ||
		!strings.HasPrefix(resp.Warnings[0], "karpgate could not evaluate NodePool/ref") ||
		!strings.HasSuffix(resp.Warnings[0], "it is admitted without the rules' mutations") {
		t.Fatalf("got allowed=%v patch=%s warnings=%q", resp.Allowed, resp.Patch, resp.Warnings)
	}
}

func TestApplyRefusesWhatTheAPIServerCannotApply(t *testing.T) {
	doc := map[string]any{"spec": map[string]any{"list": []any{nil, "a"}}}
	tests := []struct {
		name    string
		ops     []patchOperation
		wantErr string
	}{
		{"a missing parent", []patchOperation{{Op: "add", Path: "/spec/x/y", Value: "v"}}, "/spec/x does not exist"},
		// v4 panics comparing arrays that hold null; apply must not.
		{"a test v4 panics on", []patchOperation{{Op: "test", Path: "/spec/list", Value: []any{nil, "a"}}}, "json-patch v4, which the API server applies patches with, fails on it"},
		{"a move, left to v4", []patchOperation{{Op: "move", Path: "/spec/list/0"}}, "missing from field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := apply(doc, tt.ops)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("apply: %v, want an error saying %q", err, tt.wantErr)
			}
		})
	}
}
