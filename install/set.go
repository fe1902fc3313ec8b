package install

import (
	"fmt"
	"maps"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/serving"
)

// Labels every object carries; SelectorLabels is the subset the Deployment,
// Service, PodDisruptionBudget and topology spread select pods by.
var (
	SelectorLabels = map[string]string{"app.kubernetes.io/name": deploy.Name}
	Labels         = map[string]string{"app.kubernetes.io/name": deploy.Name, "app.kubernetes.io/part-of": deploy.Name}
)

// Set is one complete install. Issuers and Certificates are set only with
// Options.CertManager.
type Set struct {
	// CRDs are karpgate's own (the RolloutPlan); Karpenter's are not here.
	CRDs               []*apiextensionsv1.CustomResourceDefinition
	Namespace          *corev1.Namespace
	ServiceAccount     *corev1.ServiceAccount
	ClusterRole        *rbacv1.ClusterRole
	ClusterRoleBinding *rbacv1.ClusterRoleBinding
	// OwnReports keeps karpgate's service account to its own OpenReports
	// reports, which RBAC alone cannot (see ownReportsPolicy).
	OwnReports          *admissionregistrationv1.ValidatingAdmissionPolicy
	OwnReportsBinding   *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	MetricsReader       *rbacv1.ClusterRole
	Role                *rbacv1.Role
	RoleBinding         *rbacv1.RoleBinding
	ConfigMap           *corev1.ConfigMap
	Service             *corev1.Service
	Deployment          *appsv1.Deployment
	PodDisruptionBudget *policyv1.PodDisruptionBudget
	// NetworkPolicy is set only with Options.NetworkPolicy.Enabled.
	NetworkPolicy *networkingv1.NetworkPolicy
	Validating    *admissionregistrationv1.ValidatingWebhookConfiguration
	Mutating      *admissionregistrationv1.MutatingWebhookConfiguration
	// AdmissionPolicy, its Bindings and their Params are set only with
	// Options.AdmissionPolicy: the rules' CEL twins, which the API server
	// enforces itself.
	AdmissionPolicy         *admissionregistrationv1.ValidatingAdmissionPolicy
	AdmissionPolicyBindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	AdmissionPolicyParams   []*corev1.ConfigMap
	Issuers                 []*cmv1.Issuer
	Certificates            []*cmv1.Certificate
}

// Build makes every object of an install with the given options.
func Build(opts Options) (*Set, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	s := &Set{
		CRDs:                customResourceDefinitions(),
		Namespace:           namespace(opts),
		ServiceAccount:      serviceAccount(opts),
		ClusterRole:         clusterRole(),
		ClusterRoleBinding:  clusterRoleBinding(opts),
		OwnReports:          ownReportsPolicy(opts),
		OwnReportsBinding:   ownReportsPolicyBinding(),
		MetricsReader:       metricsReader(),
		Role:                leaderElectionRole(opts),
		RoleBinding:         leaderElectionRoleBinding(opts),
		ConfigMap:           configMap(opts),
		Service:             service(opts),
		Deployment:          deployment(opts),
		PodDisruptionBudget: podDisruptionBudget(opts),
		Validating:          validatingWebhook(opts),
		Mutating:            mutatingWebhook(opts),
	}
	if opts.NetworkPolicy.Enabled {
		s.NetworkPolicy = networkPolicy(opts)
	}
	if opts.AdmissionPolicy {
		var err error
		if s.AdmissionPolicy, s.AdmissionPolicyBindings, s.AdmissionPolicyParams, err = admissionPolicy(opts); err != nil {
			return nil, err
		}
	}
	if opts.CertManager {
		s.Issuers = issuers(opts)
		s.Certificates = certificates(opts)
		injectCA(opts, &s.Validating.ObjectMeta)
		injectCA(opts, &s.Mutating.ObjectMeta)
	}
	return s, nil
}

// Objects lists the set's objects in the order they can be applied in.
func (s *Set) Objects() []runtime.Object {
	var objs []runtime.Object
	for _, crd := range s.CRDs {
		objs = append(objs, crd)
	}
	objs = append(objs, s.Namespace, s.ServiceAccount, s.ClusterRole, s.ClusterRoleBinding, s.OwnReports, s.OwnReportsBinding, s.MetricsReader,
		s.Role, s.RoleBinding, s.ConfigMap)
	for _, cm := range s.AdmissionPolicyParams {
		objs = append(objs, cm)
	}
	objs = append(objs, s.Service, s.Deployment, s.PodDisruptionBudget)
	if s.NetworkPolicy != nil {
		objs = append(objs, s.NetworkPolicy)
	}
	for _, i := range s.Issuers {
		objs = append(objs, i)
	}
	for _, c := range s.Certificates {
		objs = append(objs, c)
	}
	// The policy before its bindings, and both before the webhooks: with
	// them in place a validating webhook that fails open still leaves the
	// twinned rules enforced.
	if s.AdmissionPolicy != nil {
		objs = append(objs, s.AdmissionPolicy)
	}
	for _, b := range s.AdmissionPolicyBindings {
		objs = append(objs, b)
	}
	return append(objs, s.Validating, s.Mutating)
}

func (o Options) validate() error {
	switch {
	case o.Namespace == "":
		return fmt.Errorf("install options: namespace is empty; set it (the default is %q)", deploy.Namespace)
	case o.Image == "":
		return fmt.Errorf("install options: image is empty; set repository:tag")
	case o.Replicas < 1:
		return fmt.Errorf("install options: replicas %d: run at least 1, and 2 or more for a PodDisruptionBudget to leave room for node drains", o.Replicas)
	}
	for _, w := range []struct {
		name string
		p    WebhookPolicy
	}{{"validating", o.Validating}, {"mutating", o.Mutating}} {
		if w.p.FailurePolicy != admissionregistrationv1.Fail && w.p.FailurePolicy != admissionregistrationv1.Ignore {
			return fmt.Errorf("install options: %s webhook failurePolicy %q: use Fail or Ignore", w.name, w.p.FailurePolicy)
		}
		// The API server accepts 1 to 30 seconds.
		if w.p.TimeoutSeconds < 1 || w.p.TimeoutSeconds > deploy.MaxWebhookTimeoutSeconds {
			return fmt.Errorf("install options: %s webhook timeoutSeconds %d: the API server accepts 1 to 30", w.name, w.p.TimeoutSeconds)
		}
	}
	if _, err := serving.ParseTrustedSources(o.TrustedSourceCIDRs); err != nil {
		return fmt.Errorf("install options: trustedSourceCIDRs: %w", err)
	}
	if o.NetworkPolicy.Enabled && len(apiServerCIDRs(o)) == 0 {
		return fmt.Errorf("install options: the NetworkPolicy admits no API server address to the webhook port, so every webhook call would fail; list the API server's CIDRs (or %q for any)", DefaultAPIServerCIDRs)
	}
	return nil
}

func typeMeta(gv schema.GroupVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: gv.String(), Kind: kind}
}

// objectMeta names a namespaced object (namespace "" for cluster-scoped ones)
// and gives it the common labels.
func objectMeta(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: maps.Clone(Labels)}
}
