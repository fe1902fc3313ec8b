package install

import (
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/internal/deploy"
)

// cert-manager object names. The chain is self-signed Issuer -> CA
// Certificate -> CA Issuer -> serving Certificate, rather than a self-signed
// serving certificate, because the caBundle the API server trusts must not
// change each time the serving certificate renews: with a self-signed leaf
// the new certificate and the new caBundle reach the pods and the API server
// at different moments, and in between every conversion fails (a Karpenter
// outage). The CA keeps its key when it renews, so certificates it signed
// before stay valid across that renewal too.
const (
	SelfSignedIssuerName   = deploy.Name + "-selfsigned"
	CAName                 = deploy.Name + "-ca" // CA Certificate, its Secret and the CA Issuer
	ServingCertificateName = deploy.Name + "-serving"
)

const (
	caDuration      = 10 * 365 * 24 * time.Hour
	servingDuration = 90 * 24 * time.Hour
	servingRenewal  = 30 * 24 * time.Hour
)

// ServiceDNSName is the name the API server dials and the serving
// certificate must carry.
func ServiceDNSName(namespace string) string {
	return deploy.Name + "." + namespace + ".svc"
}

// CAInjectionAnnotations has cert-manager's cainjector copy the CA of the
// serving Certificate into a webhook configuration's or CRD's caBundle.
func CAInjectionAnnotations(namespace string) map[string]string {
	return map[string]string{cmv1.WantInjectAnnotation: namespace + "/" + ServingCertificateName}
}

func injectCA(opts Options, meta *metav1.ObjectMeta) {
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	for k, v := range CAInjectionAnnotations(opts.Namespace) {
		meta.Annotations[k] = v
	}
}

func issuers(opts Options) []*cmv1.Issuer {
	issuer := func(name string, config cmv1.IssuerConfig) *cmv1.Issuer {
		return &cmv1.Issuer{
			TypeMeta:   typeMeta(cmv1.SchemeGroupVersion, cmv1.IssuerKind),
			ObjectMeta: objectMeta(name, opts.Namespace),
			Spec:       cmv1.IssuerSpec{IssuerConfig: config},
		}
	}
	return []*cmv1.Issuer{
		issuer(SelfSignedIssuerName, cmv1.IssuerConfig{SelfSigned: &cmv1.SelfSignedIssuer{}}),
		issuer(CAName, cmv1.IssuerConfig{CA: &cmv1.CAIssuer{SecretName: CAName}}),
	}
}

func certificates(opts Options) []*cmv1.Certificate {
	certificate := func(name string, spec cmv1.CertificateSpec) *cmv1.Certificate {
		return &cmv1.Certificate{
			TypeMeta:   typeMeta(cmv1.SchemeGroupVersion, cmv1.CertificateKind),
			ObjectMeta: objectMeta(name, opts.Namespace),
			Spec:       spec,
		}
	}
	ecdsa := func(rotation cmv1.PrivateKeyRotationPolicy) *cmv1.CertificatePrivateKey {
		return &cmv1.CertificatePrivateKey{Algorithm: cmv1.ECDSAKeyAlgorithm, Size: 256, RotationPolicy: rotation}
	}
	return []*cmv1.Certificate{
		certificate(CAName, cmv1.CertificateSpec{
			IsCA:       true,
			CommonName: CAName,
			SecretName: CAName,
			Duration:   &metav1.Duration{Duration: caDuration},
			PrivateKey: ecdsa(cmv1.RotationPolicyNever),
			IssuerRef:  cmmeta.IssuerReference{Name: SelfSignedIssuerName, Kind: cmv1.IssuerKind, Group: cmv1.SchemeGroupVersion.Group},
		}),
		certificate(ServingCertificateName, cmv1.CertificateSpec{
			DNSNames:    []string{ServiceDNSName(opts.Namespace)},
			SecretName:  deploy.CertSecretName,
			Duration:    &metav1.Duration{Duration: servingDuration},
			RenewBefore: &metav1.Duration{Duration: servingRenewal},
			PrivateKey:  ecdsa(cmv1.RotationPolicyAlways),
			Usages:      []cmv1.KeyUsage{cmv1.UsageServerAuth, cmv1.UsageDigitalSignature},
			IssuerRef:   cmmeta.IssuerReference{Name: CAName, Kind: cmv1.IssuerKind, Group: cmv1.SchemeGroupVersion.Group},
		}),
	}
}

// CAInjectionPatches add the cainjector annotation to the two webhook
// configurations of the kustomize base, which has no cert-manager in it.
func CAInjectionPatches(opts Options) []Partial {
	meta := metav1.ObjectMeta{Name: deploy.WebhookConfigurationName}
	injectCA(opts, &meta)
	return []Partial{
		{Object: &admissionregistrationv1.ValidatingWebhookConfiguration{
			TypeMeta: typeMeta(admissionregistrationv1.SchemeGroupVersion, "ValidatingWebhookConfiguration"), ObjectMeta: meta,
		}, Fields: partialIdentity()},
		{Object: &admissionregistrationv1.MutatingWebhookConfiguration{
			TypeMeta: typeMeta(admissionregistrationv1.SchemeGroupVersion, "MutatingWebhookConfiguration"), ObjectMeta: *meta.DeepCopy(),
		}, Fields: partialIdentity()},
	}
}
