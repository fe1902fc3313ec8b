package install

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/webhookconfig"
)

// The webhook configurations are webhookconfig's, pointed at the Service in
// opts.Namespace, with the operator's policies and the install's labels. The
// caBundle is left for cert-manager's cainjector (or the operator) to fill.
func validatingWebhook(opts Options) *admissionregistrationv1.ValidatingWebhookConfiguration {
	obj := webhookconfig.Validating(webhookconfig.ServiceEndpoint(opts.Namespace, nil), opts.Validating)
	obj.ObjectMeta = objectMeta(deploy.WebhookConfigurationName, "")
	return obj
}

func mutatingWebhook(opts Options) *admissionregistrationv1.MutatingWebhookConfiguration {
	obj := webhookconfig.Mutating(webhookconfig.ServiceEndpoint(opts.Namespace, nil), opts.Mutating)
	obj.ObjectMeta = objectMeta(deploy.WebhookConfigurationName, "")
	return obj
}
