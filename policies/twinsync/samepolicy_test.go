package twinsync

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/karpgate/karpgate/internal/webhookconfig"
)

// TestSamePolicyNoticesEveryFieldThatDecides edits, one at a time, each
// field of the generated policy that changes what the API server enforces;
// samePolicy must notice every edit. (The covered test applies the
// policy to a real API server: what it stores, defaults and all, is the
// same.)
func TestSamePolicyNoticesEveryFieldThatDecides(t *testing.T) {
	want := webhookconfig.AdmissionPolicy(webhookconfig.PolicyCEL{
		Variables:   []admissionregistrationv1.Variable{{Name: "v", Expression: "object.kind"}},
		Validations: []admissionregistrationv1.Validation{{Expression: "variables.v != ''", Message: "m"}},
	}).Spec
	if len(want.MatchConditions) == 0 || want.MatchConstraints == nil || len(want.MatchConstraints.ResourceRules) == 0 {
		t.Fatal("the generated policy has no match conditions or rules to edit")
	}
	for _, tt := range []struct {
		name string
		edit func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec)
		same bool
	}{
		{"as generated", func(*admissionregistrationv1.ValidatingAdmissionPolicySpec) {}, true},
		{"a rule's scope", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.MatchConstraints.ResourceRules[0].Scope = ptr.To(admissionregistrationv1.AllScopes)
		}, false},
		{"a validation", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Validations[0].Expression = "true"
		}, false},
		{"a variable", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Variables[0].Expression = "'x'"
		}, false},
		{"a match condition", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.MatchConditions[0].Expression = "false"
		}, false},
		{"a match condition removed", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.MatchConditions = s.MatchConditions[1:]
		}, false},
		{"the parameter kind", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "Secret"}
		}, false},
		{"the failure policy", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
		}, false},
		{"a resource rule", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.MatchConstraints.ResourceRules[0].Resources = []string{"configmaps"}
		}, false},
		{"an excluded resource", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.MatchConstraints.ExcludeResourceRules = []admissionregistrationv1.NamedRuleWithOperations{s.MatchConstraints.ResourceRules[0]}
		}, false},
		{"an object selector", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.MatchConstraints.ObjectSelector.MatchLabels = map[string]string{"judged": "no"}
		}, false},
		{"the match policy", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.MatchConstraints.MatchPolicy = ptr.To(admissionregistrationv1.Exact)
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			live := want.DeepCopy()
			tt.edit(live)
			if got := samePolicy(*live, want); got != tt.same {
				t.Errorf("samePolicy = %v, want %v", got, tt.same)
			}
		})
	}
}
