package install

import (
	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/karpgate/karpgate/audit/report"
	"github.com/karpgate/karpgate/internal/deploy"
)

// OwnReportsPolicyName names the ValidatingAdmissionPolicy and its binding
// that keep karpgate to its own reports.
const OwnReportsPolicyName = deploy.Name + "-own-reports"

// The audit needs update and delete on clusterreports, and RBAC cannot
// narrow a verb to some objects of a resource by label (resourceNames
// cannot name reports that do not exist yet, and a rule with them grants
// no list or watch). Without more, karpgate's service account could
// overwrite or delete the reports of Kyverno or any other tool. The API
// server's own admission closes that: a ValidatingAdmissionPolicy lets
// karpgate's service account create, change and delete only OpenReports
// reports labelled as its own, before and after the write. It needs
// Kubernetes 1.30 (admissionregistration.k8s.io/v1 policies); it matches
// nothing else, so it costs other writers nothing.
func ownReportsPolicy(opts Options) *admissionregistrationv1.ValidatingAdmissionPolicy {
	fail := admissionregistrationv1.Fail
	labelled := func(obj string) string {
		labels := obj + ".metadata.labels"
		return "has(" + labels + ") && '" + report.ManagedByLabel + "' in " + labels + " && " + labels + "['" + report.ManagedByLabel + "'] == '" + report.ManagedBy + "'"
	}
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   typeMeta(admissionregistrationv1.SchemeGroupVersion, "ValidatingAdmissionPolicy"),
		ObjectMeta: objectMeta(OwnReportsPolicyName, ""),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{orv1.GroupName}, APIVersions: []string{"*"}, Resources: []string{"clusterreports", "reports"},
						},
					},
				}},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name:       "karpgate-service-account",
				Expression: "request.userInfo.username == '" + serviceAccountUser(opts) + "'",
			}},
			Validations: []admissionregistrationv1.Validation{
				{
					Expression: "request.operation == 'CREATE' || (" + labelled("oldObject") + ")",
					Message:    "karpgate changes and deletes only the reports it wrote (label " + report.ManagedByLabel + "=" + report.ManagedBy + ")",
				},
				{
					Expression: "request.operation == 'DELETE' || (" + labelled("object") + ")",
					Message:    "karpgate writes only reports labelled " + report.ManagedByLabel + "=" + report.ManagedBy,
				},
			},
		},
	}
}

func ownReportsPolicyBinding() *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   typeMeta(admissionregistrationv1.SchemeGroupVersion, "ValidatingAdmissionPolicyBinding"),
		ObjectMeta: objectMeta(OwnReportsPolicyName, ""),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        OwnReportsPolicyName,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
}

// serviceAccountUser is the user name the API server gives karpgate's
// service account.
func serviceAccountUser(opts Options) string {
	return "system:serviceaccount:" + opts.Namespace + ":" + deploy.Name
}
