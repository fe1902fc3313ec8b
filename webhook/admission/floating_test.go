package admission

import (
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
)

// TestFloatingAMISelectorInProduction: the admission webhook judges a
// production EC2NodeClass whose AMI follows AWS's "recommended" parameter
// like one on @latest (KG109 denies it), and lets the write that pins it
// through, so a team can always move off a floating selector.
func TestFloatingAMISelectorInProduction(t *testing.T) {
	hook := NewValidatingWebhook(newEngine(t, ""), logr.Discard())
	const recommended = "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id"
	withTerm := func(labels map[string]any, term string) map[string]any {
		return patch(t, nodeClass("ssm", labels, "al2023@v20240807"), `[{"op":"replace","path":"/spec/amiSelectorTerms","value":[`+term+`]}]`)
	}
	floating := withTerm(production, `{"ssmParameter":"`+recommended+`"}`)
	pinned := withTerm(production, `{"ssmParameter":"/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.33-v20250519/image_id"}`)
	byID := withTerm(production, `{"id":"ami-0123456789abcdef0"}`)

	tests := []struct {
		name     string
		req      request
		allowed  bool
		denied   []string
		warnings []string // prefixes, in order
	}{
		{
			name: "create with the recommended parameter", req: request{op: admissionv1.Create, object: floating},
			denied: []string{"KG109"},
		},
		{
			name: "create outside production warns", req: request{op: admissionv1.Create, object: withTerm(nil, `{"ssmParameter":"`+recommended+`"}`)}, allowed: true,
			warnings: []string{`KG110 spec.amiSelectorTerms[0].ssmParameter: AMI selector term 0 floats: ssmParameter "` + recommended + `" is a public AWS parameter that moves to each new AMI ("recommended")`},
		},
		{
			name: "create with a versioned parameter", req: request{op: admissionv1.Create, object: pinned}, allowed: true,
		},
		{
			name: "update from the floating parameter to a versioned one", req: request{op: admissionv1.Update, object: pinned, old: floating}, allowed: true,
			// Changing the terms re-resolves the AMI: KG603 says so, nothing denies.
			warnings: []string{"KG603 spec.amiSelectorTerms"},
		},
		{
			name: "update from the floating parameter to an id", req: request{op: admissionv1.Update, object: byID, old: floating}, allowed: true,
			warnings: []string{"KG603 spec.amiSelectorTerms"},
		},
		{
			name: "update from a versioned parameter to the floating one", req: request{op: admissionv1.Update, object: floating, old: pinned},
			denied: []string{"KG109"}, warnings: []string{"KG603 spec.amiSelectorTerms"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allowed, denied, warnings := verdict(t, hook, tt.req)
			if allowed != tt.allowed || !slices.Equal(denied, tt.denied) {
				t.Fatalf("allowed=%v denied=%v, want allowed=%v denied=%v (warnings %q)", allowed, denied, tt.allowed, tt.denied, warnings)
			}
			if len(warnings) != len(tt.warnings) {
				t.Fatalf("warnings:\n%s\nwant %d", strings.Join(warnings, "\n"), len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if !strings.HasPrefix(warnings[i], w) {
					t.Errorf("warning %d:\n%s\nwant prefix:\n%s", i, warnings[i], w)
				}
			}
		})
	}
}
