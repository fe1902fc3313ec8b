package install

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/webhookconfig"
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
				Conversion: webhookconfig.Conversion(webhookconfig.ServiceEndpoint(opts.Namespace, nil), []string{"v1"}),
			},
		}
		patches = append(patches, Partial{Object: crd, Fields: append(partialIdentity(), []string{"spec", "conversion"})})
	}
	return patches
}
