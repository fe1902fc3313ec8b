package install

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter"
)

func TestBuildRefusesUnsafeOptions(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*Options)
		wantErr string
	}{
		{"no namespace", func(o *Options) { o.Namespace = "" }, "namespace is empty"},
		{"no image", func(o *Options) { o.Image = "" }, "image is empty"},
		{"no replicas", func(o *Options) { o.Replicas = 0 }, "replicas 0"},
		{"lower-case failure policy", func(o *Options) { o.Validating.FailurePolicy = "fail" }, `validating webhook failurePolicy "fail": use Fail or Ignore`},
		{"zero timeout", func(o *Options) { o.Mutating.TimeoutSeconds = 0 }, "mutating webhook timeoutSeconds 0"},
		{"timeout above the API server's limit", func(o *Options) { o.Validating.TimeoutSeconds = 31 }, "accepts 1 to 30"},
		{"a NetworkPolicy that shuts the API server out", func(o *Options) { o.NetworkPolicy.APIServerCIDRs = nil }, "admits no API server address to the webhook port"},
		{"trusted sources that trust everyone", func(o *Options) { o.TrustedSourceCIDRs = []string{"10.0.16.0/28", "::/0"} },
			`trustedSourceCIDRs: "::/0" holds every address, so every caller would be trusted as the API server`},
		{"a trusted source that is no address", func(o *Options) { o.TrustedSourceCIDRs = []string{"eks-control-plane"} }, `trustedSourceCIDRs: "eks-control-plane" is not a CIDR or an address`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Defaults()
			tt.change(&opts)
			_, err := Build(opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Build: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestOptionsReachTheObjects(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Options)
		check  func(t *testing.T, s *Set)
	}{
		{"defaults", func(*Options) {}, func(t *testing.T, s *Set) {
			d := s.Deployment.Spec
			if *d.Replicas != 2 || d.Template.Spec.PriorityClassName != PriorityClassName {
				t.Errorf("replicas %d, priority %q", *d.Replicas, d.Template.Spec.PriorityClassName)
			}
			if *s.Validating.Webhooks[0].FailurePolicy != admissionregistrationv1.Fail || *s.Mutating.Webhooks[0].FailurePolicy != admissionregistrationv1.Ignore {
				t.Error("the validating webhook must fail closed and the mutating one open")
			}
			if args := d.Template.Spec.Containers[0].Args; !slices.Contains(args, "--controller=true") || !slices.Contains(args, "--rollout-guard=false") || slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--environment") }) {
				t.Errorf("args %q", args)
			}
		}},
		{"choices", func(o *Options) {
			o.Replicas, o.Environment, o.Controller, o.RolloutGuard = 3, "production", false, true
			o.Validating = WebhookPolicy{FailurePolicy: admissionregistrationv1.Ignore, TimeoutSeconds: 5}
		}, func(t *testing.T, s *Set) {
			args := s.Deployment.Spec.Template.Spec.Containers[0].Args
			if *s.Deployment.Spec.Replicas != 3 || !slices.Contains(args, "--environment=production") || !slices.Contains(args, "--controller=false") || !slices.Contains(args, "--rollout-guard=true") {
				t.Errorf("replicas %d, args %q", *s.Deployment.Spec.Replicas, args)
			}
			if w := s.Validating.Webhooks[0]; *w.FailurePolicy != admissionregistrationv1.Ignore || *w.TimeoutSeconds != 5 {
				t.Errorf("validating webhook %v/%d", *w.FailurePolicy, *w.TimeoutSeconds)
			}
		}},
		{"another namespace", func(o *Options) { o.Namespace = "platform" }, func(t *testing.T, s *Set) {
			for _, meta := range []metav1.ObjectMeta{s.ServiceAccount.ObjectMeta, s.Role.ObjectMeta, s.RoleBinding.ObjectMeta, s.ConfigMap.ObjectMeta,
				s.Service.ObjectMeta, s.Deployment.ObjectMeta, s.PodDisruptionBudget.ObjectMeta, s.Issuers[0].ObjectMeta, s.Certificates[1].ObjectMeta} {
				if meta.Namespace != "platform" {
					t.Errorf("%s in %q", meta.Name, meta.Namespace)
				}
			}
			if got := s.Validating.Webhooks[0].ClientConfig.Service.Namespace; got != "platform" {
				t.Errorf("webhook service namespace %q", got)
			}
			if got := s.ClusterRoleBinding.Subjects[0].Namespace; got != "platform" {
				t.Errorf("ClusterRoleBinding subject namespace %q", got)
			}
			if got := s.OwnReports.Spec.MatchConditions[0].Expression; got != "request.userInfo.username == 'system:serviceaccount:platform:karpgate'" {
				t.Errorf("the reports policy matches %s", got)
			}
			if got := s.Mutating.Annotations[cmv1.WantInjectAnnotation]; got != "platform/"+ServingCertificateName {
				t.Errorf("inject-ca-from %q", got)
			}
			if got := s.Certificates[1].Spec.DNSNames; !slices.Equal(got, []string{"karpgate.platform.svc"}) {
				t.Errorf("dnsNames %q", got)
			}
		}},
		{"trusted sources", func(o *Options) { o.TrustedSourceCIDRs = []string{"10.0.16.0/28", "10.0.32.0/28"} }, func(t *testing.T, s *Set) {
			if args := s.Deployment.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--trusted-source-cidrs=10.0.16.0/28,10.0.32.0/28") {
				t.Errorf("args %q", args)
			}
			var admitted []string
			for _, peer := range s.NetworkPolicy.Spec.Ingress[0].From {
				admitted = append(admitted, peer.IPBlock.CIDR)
			}
			if !slices.Equal(admitted, []string{"10.0.16.0/28", "10.0.32.0/28"}) {
				t.Errorf("the NetworkPolicy admits %q to the webhook port, want exactly the trusted sources", admitted)
			}
		}},
		{"without trusted sources the NetworkPolicy admits its own CIDRs", func(o *Options) { o.NetworkPolicy.APIServerCIDRs = []string{"10.0.0.0/16"} }, func(t *testing.T, s *Set) {
			if args := s.Deployment.Spec.Template.Spec.Containers[0].Args; slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--trusted-source-cidrs") }) {
				t.Errorf("args %q trust addresses nobody gave", args)
			}
			if from := s.NetworkPolicy.Spec.Ingress[0].From; len(from) != 1 || from[0].IPBlock.CIDR != "10.0.0.0/16" {
				t.Errorf("the NetworkPolicy admits %v to the webhook port", from)
			}
		}},
		{"without cert-manager", func(o *Options) { o.CertManager = false }, func(t *testing.T, s *Set) {
			if len(s.Issuers)+len(s.Certificates) != 0 || len(s.Validating.Annotations)+len(s.Mutating.Annotations) != 0 {
				t.Errorf("cert-manager objects or annotations without cert-manager: %d issuers, %d certificates, %v, %v",
					len(s.Issuers), len(s.Certificates), s.Validating.Annotations, s.Mutating.Annotations)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Defaults()
			tt.change(&opts)
			s, err := Build(opts)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}

// TestCertificateChain follows the issuer references from the serving
// certificate to the self-signed root.
func TestCertificateChain(t *testing.T) {
	s, err := Build(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	issuers := map[string]*cmv1.Issuer{}
	for _, i := range s.Issuers {
		issuers[i.Name] = i
	}
	certs := map[string]*cmv1.Certificate{}
	for _, c := range s.Certificates {
		certs[c.Name] = c
		if c.Spec.IssuerRef.Kind != cmv1.IssuerKind || issuers[c.Spec.IssuerRef.Name] == nil {
			t.Errorf("certificate %s: issuer %+v is not in the set", c.Name, c.Spec.IssuerRef)
		}
	}
	serving := certs[ServingCertificateName]
	if serving == nil || serving.Spec.SecretName != deploy.CertSecretName {
		t.Fatalf("the serving certificate must fill Secret %s, which the pod mounts: %+v", deploy.CertSecretName, serving)
	}
	if want := s.Service.Name + "." + s.Service.Namespace + ".svc"; !slices.Contains(serving.Spec.DNSNames, want) {
		t.Errorf("serving certificate names %q, the API server dials %s", serving.Spec.DNSNames, want)
	}
	if serving.Spec.RenewBefore.Duration >= serving.Spec.Duration.Duration {
		t.Errorf("renewBefore %v must be shorter than duration %v", serving.Spec.RenewBefore, serving.Spec.Duration)
	}
	caIssuer := issuers[serving.Spec.IssuerRef.Name]
	if caIssuer.Spec.CA == nil {
		t.Fatalf("the serving certificate's issuer %s must be a CA issuer", caIssuer.Name)
	}
	var ca *cmv1.Certificate
	for _, c := range certs {
		if c.Spec.SecretName == caIssuer.Spec.CA.SecretName {
			ca = c
		}
	}
	if ca == nil || !ca.Spec.IsCA {
		t.Fatalf("no CA certificate fills Secret %s", caIssuer.Spec.CA.SecretName)
	}
	// A CA that kept its key on renewal keeps every certificate it signed
	// valid: the caBundle change is then harmless.
	if ca.Spec.PrivateKey.RotationPolicy != cmv1.RotationPolicyNever || ca.Spec.Duration.Duration <= serving.Spec.Duration.Duration {
		t.Errorf("CA: rotation %q, duration %v", ca.Spec.PrivateKey.RotationPolicy, ca.Spec.Duration)
	}
	if root := issuers[ca.Spec.IssuerRef.Name]; root == nil || root.Spec.SelfSigned == nil {
		t.Errorf("the CA must be issued by the self-signed issuer, got %+v", ca.Spec.IssuerRef)
	}
	for _, meta := range []metav1.ObjectMeta{s.Validating.ObjectMeta, s.Mutating.ObjectMeta} {
		if got, want := meta.Annotations[cmv1.WantInjectAnnotation], s.Deployment.Namespace+"/"+serving.Name; got != want {
			t.Errorf("%s: inject-ca-from %q, want %q", meta.Name, got, want)
		}
	}
}

func TestConversionPatchesCoverEveryKarpenterKind(t *testing.T) {
	patches := ConversionPatches(Defaults())
	if len(patches) != len(karpenter.Kinds) {
		t.Fatalf("%d patches for %d kinds", len(patches), len(karpenter.Kinds))
	}
	for i, k := range karpenter.Kinds {
		crd := patches[i].Object.(*apiextensionsv1.CustomResourceDefinition)
		if want := k.Resource + "." + k.Group; crd.Name != want {
			t.Errorf("patch %d names %s, want %s", i, crd.Name, want)
		}
		svc := crd.Spec.Conversion.Webhook.ClientConfig.Service
		if crd.Spec.Conversion.Strategy != apiextensionsv1.WebhookConverter || svc.Name != deploy.Name || svc.Namespace != deploy.Namespace ||
			*svc.Path != deploy.ConvertPath || *svc.Port != deploy.ServicePort {
			t.Errorf("%s: conversion %+v via %+v", crd.Name, crd.Spec.Conversion, svc)
		}
		if !slices.ContainsFunc(patches[i].Fields, func(f []string) bool { return slices.Equal(f, []string{"spec", "conversion"}) }) ||
			slices.ContainsFunc(patches[i].Fields, func(f []string) bool { return slices.Equal(f, []string{"spec"}) }) {
			t.Errorf("%s: the patch must carry spec.conversion and nothing else of spec: %v", crd.Name, patches[i].Fields)
		}
	}
}

// TestPortsLineUp: the Service's target port and the probes' ports name
// container ports that carry the numbers serve listens on.
func TestPortsLineUp(t *testing.T) {
	s, err := Build(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	c := s.Deployment.Spec.Template.Spec.Containers[0]
	byName := map[string]int32{}
	for _, p := range c.Ports {
		byName[p.Name] = p.ContainerPort
	}
	tests := []struct {
		what     string
		portName string
		want     int32
	}{
		{"Service target", s.Service.Spec.Ports[0].TargetPort.StrVal, deploy.WebhookPort},
		{"liveness probe", c.LivenessProbe.HTTPGet.Port.StrVal, deploy.HealthPort},
		{"readiness probe", c.ReadinessProbe.HTTPGet.Port.StrVal, deploy.HealthPort},
		{"NetworkPolicy webhook rule", s.NetworkPolicy.Spec.Ingress[0].Ports[0].Port.StrVal, deploy.WebhookPort},
		{"NetworkPolicy metrics rule", s.NetworkPolicy.Spec.Ingress[1].Ports[0].Port.StrVal, deploy.MetricsPort},
		{"NetworkPolicy probe rule", s.NetworkPolicy.Spec.Ingress[2].Ports[0].Port.StrVal, deploy.HealthPort},
	}
	for _, tt := range tests {
		if got := byName[tt.portName]; got != tt.want {
			t.Errorf("%s port %q is container port %d, want %d", tt.what, tt.portName, got, tt.want)
		}
	}
	if s.Service.Spec.Ports[0].Port != deploy.ServicePort {
		t.Errorf("Service port %d, want %d", s.Service.Spec.Ports[0].Port, deploy.ServicePort)
	}
}

// TestDefaultConfigIsTheDefault: the ConfigMap's karpgate.yaml parses with
// the same strict reader serve uses, and changes nothing.
func TestDefaultConfigIsTheDefault(t *testing.T) {
	got, err := config.Parse(deploy.ConfigKey, []byte(DefaultConfig))
	if err != nil {
		t.Fatal(err)
	}
	want := config.Default()
	if !reflect.DeepEqual(got.Production, want.Production) || got.Environment != want.Environment ||
		got.KubernetesVersion != want.KubernetesVersion || !reflect.DeepEqual(got.AMIs, want.AMIs) || len(got.Rules) != 0 {
		t.Errorf("the shipped karpgate.yaml means %+v, want the defaults %+v", got, want)
	}
}

// TestRequestTimeoutFollowsTheWebhookTimeouts: karpgate's own budget is
// below the shorter webhook timeout, whatever the operator picks.
func TestRequestTimeoutFollowsTheWebhookTimeouts(t *testing.T) {
	for _, tt := range []struct {
		validating, mutating int32
		want                 string
	}{{10, 10, "--request-timeout=8000ms"}, {10, 3, "--request-timeout=2400ms"}, {30, 30, "--request-timeout=24000ms"}, {1, 5, "--request-timeout=800ms"}} {
		opts := Defaults()
		opts.Validating.TimeoutSeconds, opts.Mutating.TimeoutSeconds = tt.validating, tt.mutating
		if args := ServeArgs(opts); !slices.Contains(args, tt.want) {
			t.Errorf("timeouts %d/%d: args %q lack %s", tt.validating, tt.mutating, args, tt.want)
		}
	}
}

// TestMetricsAccess: karpgate may check its callers; the reader role grants
// exactly get on the two paths, and nothing binds it by default.
func TestMetricsAccess(t *testing.T) {
	s, err := Build(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if s.MetricsReader.Name != deploy.MetricsReaderClusterRole || len(s.MetricsReader.Rules) != 1 ||
		!slices.Equal(s.MetricsReader.Rules[0].NonResourceURLs, []string{"/metrics", "/status", "/explain"}) || !slices.Equal(s.MetricsReader.Rules[0].Verbs, []string{"get"}) {
		t.Errorf("metrics reader %+v", s.MetricsReader)
	}
	for _, want := range MetricsAuthRules() {
		if !slices.ContainsFunc(s.ClusterRole.Rules, func(r rbacv1.PolicyRule) bool { return reflect.DeepEqual(r, want) }) {
			t.Errorf("karpgate's ClusterRole lacks %+v", want)
		}
	}
	if s.ClusterRoleBinding.RoleRef.Name == deploy.MetricsReaderClusterRole {
		t.Error("the install must not decide who reads the metrics")
	}
}
