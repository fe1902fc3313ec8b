package install

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// AdmittedResources are the only resources the admission webhooks see:
// NodePools and EC2NodeClasses, at every version. NodeClaims are written by
// Karpenter itself and carry nothing an operator chose.
var AdmittedResources = []struct{ Group, Resource string }{
	{karpenter.CoreGroup, "nodepools"},
	{karpenter.AWSGroup, "ec2nodeclasses"},
}

// AdmissionRules matches CREATE and UPDATE of AdmittedResources. Status
// subresources are not matched: Karpenter's own status writes never wait for
// karpgate.
func AdmissionRules() []admissionregistrationv1.RuleWithOperations {
	rules := make([]admissionregistrationv1.RuleWithOperations, 0, len(AdmittedResources))
	for _, r := range AdmittedResources {
		rules = append(rules, admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{r.Group},
				APIVersions: []string{"*"},
				Resources:   []string{r.Resource},
				Scope:       ptr.To(admissionregistrationv1.ClusterScope),
			},
		})
	}
	return rules
}

func clientConfig(opts Options, path string) admissionregistrationv1.WebhookClientConfig {
	return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
		Namespace: opts.Namespace,
		Name:      deploy.Name,
		Path:      ptr.To(path),
		Port:      ptr.To[int32](deploy.ServicePort),
	}}
}

func validatingWebhook(opts Options) *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   typeMeta(admissionregistrationv1.SchemeGroupVersion, "ValidatingWebhookConfiguration"),
		ObjectMeta: objectMeta(deploy.WebhookConfigurationName, ""),
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    deploy.ValidatingWebhookName,
			ClientConfig:            clientConfig(opts, deploy.ValidatePath),
			Rules:                   AdmissionRules(),
			FailurePolicy:           ptr.To(opts.Validating.FailurePolicy),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds:          ptr.To(opts.Validating.TimeoutSeconds),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

func mutatingWebhook(opts Options) *admissionregistrationv1.MutatingWebhookConfiguration {
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   typeMeta(admissionregistrationv1.SchemeGroupVersion, "MutatingWebhookConfiguration"),
		ObjectMeta: objectMeta(deploy.WebhookConfigurationName, ""),
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    deploy.MutatingWebhookName,
			ClientConfig:            clientConfig(opts, deploy.MutatePath),
			Rules:                   AdmissionRules(),
			FailurePolicy:           ptr.To(opts.Mutating.FailurePolicy),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds:          ptr.To(opts.Mutating.TimeoutSeconds),
			AdmissionReviewVersions: []string{"v1"},
			// karpgate's mutations do not depend on other webhooks' output.
			ReinvocationPolicy: ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
		}},
	}
}
