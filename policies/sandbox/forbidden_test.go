package sandbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/verify"
)

func TestForbiddenBuiltinsAreRejectedAtCompileTime(t *testing.T) {
	tests := []struct {
		dir, want string
	}{
		{"httpsend", "testdata/userpolicy/httpsend/leak.rego:3: http.send is not available in karpgate policies: policies may not reach the network"},
		{"netlookup", "testdata/userpolicy/netlookup/dns.rego:3: net.lookup_ip_addr is not available in karpgate policies: policies may not reach the network"},
		{"runtime", "testdata/userpolicy/runtime/env.rego:3: opa.runtime is not available in karpgate policies: policies may not read the environment"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			_, err := policies.New(context.Background(), policies.Options{PolicyDirs: []string{"../testdata/userpolicy/" + tt.dir}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v\nwant an error containing %q", err, tt.want)
			}
			_, err = verify.Run(context.Background(), verify.Options{PolicyDirs: []string{"../testdata/userpolicy/" + tt.dir}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("verify: got %v\nwant an error containing %q", err, tt.want)
			}
		})
	}
}

func TestTemplatesAndPathEnumerationAreForbidden(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`strings.render_template("{{.x}}", {"x": 1}) != ""`, "strings.render_template is not available in karpgate policies: a template's output has no size"},
		{`count(graph.reachable_paths({"a": ["b"]}, {"a"})) > 0`, "graph.reachable_paths is not available in karpgate policies"},
	} {
		_, err := policies.New(context.Background(), policies.Options{PolicyDirs: []string{userRule(t, tt.body)}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
}
