package install

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// ConversionPatches point the conversion webhook of every Karpenter CRD
// (NodePool, NodeClaim, EC2NodeClass) at karpgate's /convert and have
// cert-manager inject the CA. Without cert-manager there is no caBundle to
// inject, so they come only with Options.CertManager.
func ConversionPatches(opts Options) []Partial {
	patches := make([]Partial, 0, len(karpenter.Kinds))
	for _, k := range karpenter.Kinds {
		crd := &apiextensionsv1.CustomResourceDefinition{
			TypeMeta: typeMeta(apiextensionsv1.SchemeGroupVersion, "CustomResourceDefinition"),
			ObjectMeta: metav1.ObjectMeta{
				Name:        k.Resource + "." + k.Group,
				Annotations: CAInjectionAnnotations(opts.Namespace),
			},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Conversion: &apiextensionsv1.CustomResourceConversion{
					Strategy: apiextensionsv1.WebhookConverter,
					Webhook: &apiextensionsv1.WebhookConversion{
						ConversionReviewVersions: []string{"v1"},
						ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{
							Namespace: opts.Namespace,
							Name:      deploy.Name,
							Path:      ptr.To(deploy.ConvertPath),
							Port:      ptr.To[int32](deploy.ServicePort),
						}},
					},
				},
			},
		}
		patches = append(patches, Partial{Object: crd, Fields: append(partialIdentity(), []string{"spec", "conversion"})})
	}
	return patches
}
