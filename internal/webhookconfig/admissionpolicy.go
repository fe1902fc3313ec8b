package webhookconfig

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// PolicyCEL is what the rules' CEL twins make of the policy
// (twin.Spec, in policies/twin): variables, one validation per twin, audit
// annotations.
type PolicyCEL struct {
	Variables        []admissionregistrationv1.Variable
	Validations      []admissionregistrationv1.Validation
	AuditAnnotations []admissionregistrationv1.AuditAnnotation
}

// PolicyActions are the validation actions the policy is bound with, by
// the action names of karpgate.yaml: one binding, and one parameter
// object, each.
var PolicyActions = []struct {
	Name   string
	Action admissionregistrationv1.ValidationAction
	// IfParamsMissing: a deny binding without its parameters refuses
	// every judged write, failing closed as the validating webhook does; a
	// warn or audit binding without them does nothing, since an error under
	// any binding would refuse the write too.
	IfParamsMissing admissionregistrationv1.ParameterNotFoundActionType
}{
	{"deny", admissionregistrationv1.Deny, admissionregistrationv1.DenyAction},
	{"warn", admissionregistrationv1.Warn, admissionregistrationv1.AllowAction},
	{"audit", admissionregistrationv1.Audit, admissionregistrationv1.AllowAction},
}

// PolicyVersions are the API versions the policy matches: its CEL reads
// v1 objects, and the API server converts a write of another served
// version (v1beta1 on Karpenter v1.0) to v1 through the CRD's conversion
// webhook before evaluating it (matchPolicy Equivalent). The policy so
// judges the object as it will be stored, whatever a client writes.
var PolicyVersions = []string{karpenter.V1}

// AdmissionPolicy is karpgate's ValidatingAdmissionPolicy: the
// validating webhook's NodePool and EC2NodeClass rules (AdmissionRules,
// not RuleOnlyRules: no twin is about a NodeOverlay) and match conditions,
// at v1, with a ConfigMap for parameters. Its failure policy is Fail: a
// twin whose CEL errs refuses the write, as the webhook fails closed.
func AdmissionPolicy(cel PolicyCEL) *admissionregistrationv1.ValidatingAdmissionPolicy {
	rules := AdmissionRules()
	named := make([]admissionregistrationv1.NamedRuleWithOperations, len(rules))
	for i, r := range rules {
		r.APIVersions = PolicyVersions
		named[i] = admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: r}
	}
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   typeMeta("ValidatingAdmissionPolicy"),
		ObjectMeta: metav1.ObjectMeta{Name: deploy.AdmissionPolicyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules:     named,
				MatchPolicy:       ptr.To(admissionregistrationv1.Equivalent),
				NamespaceSelector: &metav1.LabelSelector{},
				ObjectSelector:    &metav1.LabelSelector{},
			},
			MatchConditions:  MatchConditions(),
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			Variables:        cel.Variables,
			Validations:      cel.Validations,
			AuditAnnotations: cel.AuditAnnotations,
		},
	}
}

// AdmissionPolicyBindings bind the policy once per action, each to its
// parameter object in namespace.
func AdmissionPolicyBindings(namespace string) []*admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	out := make([]*admissionregistrationv1.ValidatingAdmissionPolicyBinding, 0, len(PolicyActions))
	for _, a := range PolicyActions {
		out = append(out, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			TypeMeta:   typeMeta("ValidatingAdmissionPolicyBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: deploy.AdmissionPolicyBindingName(a.Name)},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName: deploy.AdmissionPolicyName,
				ParamRef: &admissionregistrationv1.ParamRef{
					Name:                    deploy.AdmissionPolicyParamsName(a.Name),
					Namespace:               namespace,
					ParameterNotFoundAction: ptr.To(a.IfParamsMissing),
				},
				ValidationActions: []admissionregistrationv1.ValidationAction{a.Action},
			},
		})
	}
	return out
}

// AdmissionPolicyParams is the parameter object of the binding with
// action (deny, warn, audit), holding data (twin.Params, in policies/twin).
func AdmissionPolicyParams(namespace, action string, data map[string]string) (*corev1.ConfigMap, error) {
	known := false
	for _, a := range PolicyActions {
		known = known || a.Name == action
	}
	if !known {
		return nil, fmt.Errorf("%q is not a validation action of karpgate's policy; use deny, warn or audit", action)
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: deploy.AdmissionPolicyParamsName(action), Namespace: namespace},
		Data:       data,
	}, nil
}

// AdmissionPolicyBindingNames are the names of the policy's bindings.
func AdmissionPolicyBindingNames() []string {
	var out []string
	for _, a := range PolicyActions {
		out = append(out, deploy.AdmissionPolicyBindingName(a.Name))
	}
	return out
}

// AdmissionPolicyParamsNames are the names of the parameter objects.
func AdmissionPolicyParamsNames() []string {
	var out []string
	for _, a := range PolicyActions {
		out = append(out, deploy.AdmissionPolicyParamsName(a.Name))
	}
	return out
}
