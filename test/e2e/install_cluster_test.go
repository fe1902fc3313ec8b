package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/test/testenv"
)

// checkPodSecurityAdmission submits the Deployment's pod to the API server
// (server-side dry run) in the namespace that enforces the restricted
// profile. Each weakened copy must be refused: that proves the enforcement
// is live, so the accepted pod passes on its own settings.
func checkPodSecurityAdmission(t *testing.T, env *testenv.Env, objs []*manifest.Object) {
	var d appsv1.Deployment
	if !decodeOne(t, objs, "Deployment", &d) {
		t.Fatal("no Deployment")
	}
	tests := []struct {
		name     string
		weaken   func(*corev1.PodSpec)
		accepted bool
	}{
		{"as rendered", func(*corev1.PodSpec) {}, true},
		{"privilege escalation allowed", func(p *corev1.PodSpec) {
			p.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
		}, false},
		{"capabilities kept", func(p *corev1.PodSpec) { p.Containers[0].SecurityContext.Capabilities = nil }, false},
		{"may run as root", func(p *corev1.PodSpec) {
			p.SecurityContext.RunAsNonRoot, p.Containers[0].SecurityContext.RunAsNonRoot = nil, nil
		}, false},
		{"no seccomp profile", func(p *corev1.PodSpec) {
			p.SecurityContext.SeccompProfile, p.Containers[0].SecurityContext.SeccompProfile = nil, nil
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := *d.Spec.Template.Spec.DeepCopy()
			tt.weaken(&spec)
			pod := corev1.Pod{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: "karpgate-psa-probe", Namespace: d.Namespace, Labels: d.Spec.Template.Labels},
				Spec:       spec,
			}
			data, err := json.Marshal(pod)
			if err != nil {
				t.Fatal(err)
			}
			res := env.Kubectl(data, "create", "--dry-run=server", "-f", "-")
			switch {
			case tt.accepted && res.ExitCode != 0:
				t.Errorf("the rendered pod was refused:\n%s", res.Stderr)
			case !tt.accepted && res.ExitCode == 0:
				t.Errorf("a pod with %s was accepted: the namespace does not enforce the restricted profile", tt.name)
			case !tt.accepted && !strings.Contains(res.Stderr, "violates PodSecurity"):
				t.Errorf("refused for another reason than pod security:\n%s", res.Stderr)
			}
		})
	}
}

// checkServiceAccountAccess asks the API server what karpgate's service
// account may do: the contract's permissions and nothing next to them.
func checkServiceAccountAccess(t *testing.T, env *testenv.Env, namespace string) {
	as := "--as=system:serviceaccount:" + namespace + ":" + deploy.Name
	tests := []struct {
		args    []string
		allowed bool
	}{
		{[]string{"get", "nodepools.karpenter.sh"}, true},
		{[]string{"watch", "nodeclaims.karpenter.sh"}, true},
		{[]string{"list", "ec2nodeclasses.karpenter.k8s.aws"}, true},
		{[]string{"list", "nodes"}, true},
		{[]string{"patch", "nodepools.karpenter.sh"}, true},
		{[]string{"update", "nodepools.karpenter.sh"}, true},
		{[]string{"create", "events", "-n", "default"}, true},
		{[]string{"patch", "events.events.k8s.io", "-n", "default"}, true},
		{[]string{"create", "leases.coordination.k8s.io", "-n", namespace}, true},
		{[]string{"update", "leases.coordination.k8s.io/" + deploy.LeaderElectionID, "-n", namespace}, true},
		// Who calls /metrics and /status, and may they.
		{[]string{"create", "tokenreviews.authentication.k8s.io"}, true},
		{[]string{"create", "subjectaccessreviews.authorization.k8s.io"}, true},
		// Karpenter's CRDs, each by name, and no other CRD.
		{[]string{"watch", "customresourcedefinitions.apiextensions.k8s.io/nodepools.karpenter.sh"}, true},
		{[]string{"list", "customresourcedefinitions.apiextensions.k8s.io"}, false},
		{[]string{"get", "/metrics"}, false}, // reading them is the scraper's role, not karpgate's
		{[]string{"delete", "nodepools.karpenter.sh"}, false},
		{[]string{"create", "nodepools.karpenter.sh"}, false},
		{[]string{"update", "nodeclaims.karpenter.sh"}, false},
		{[]string{"patch", "ec2nodeclasses.karpenter.k8s.aws"}, false},
		{[]string{"update", "nodes"}, false},
		{[]string{"get", "secrets", "-n", namespace}, false},
		{[]string{"list", "secrets", "--all-namespaces"}, false},
		{[]string{"get", "configmaps", "-n", namespace}, false},
		{[]string{"update", "leases.coordination.k8s.io/kube-controller-manager", "-n", namespace}, false},
		{[]string{"create", "leases.coordination.k8s.io", "-n", "kube-system"}, false},
		{[]string{"delete", "leases.coordination.k8s.io/" + deploy.LeaderElectionID, "-n", namespace}, false},
		{[]string{"patch", "customresourcedefinitions.apiextensions.k8s.io"}, false},
		{[]string{"create", "pods", "-n", namespace}, false},
	}
	for _, tt := range tests {
		res := env.Kubectl(nil, append(append([]string{"auth", "can-i"}, tt.args...), as)...)
		got := strings.TrimSpace(res.Stdout)
		if want := map[bool]string{true: "yes", false: "no"}[tt.allowed]; got != want {
			t.Errorf("can-i %s as %s: %q (exit %d, %s), want %s", strings.Join(tt.args, " "), namespace+"/"+deploy.Name, got, res.ExitCode, res.Stderr, want)
		}
	}
}

// checkFailurePolicies runs what install.md says happens while karpgate is
// unreachable (here: registered, but no pod serves), and its recovery step.
func checkFailurePolicies(t *testing.T, env *testenv.Env) {
	// Conversion has no failure policy: reads at the non-stored version fail.
	kubectlOK(t, env, nil, "get", "nodepools.v1.karpenter.sh", "stored")
	res := env.Kubectl(nil, "get", "nodepools.v1beta1.karpenter.sh", "stored")
	if res.ExitCode == 0 || !containsAll(res.Stderr, "conversion webhook", "karpgate.karpgate.svc") {
		t.Errorf("reading v1beta1 with karpgate down: exit %d, stderr %q; want a conversion webhook error naming karpgate", res.ExitCode, res.Stderr)
	}
	// The validating webhook fails closed; the mutating one fails open.
	res = env.Kubectl(nil, "create", "-f", "../testdata/install/nodepool-new.yaml")
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, `failed calling webhook "`+deploy.ValidatingWebhookName+`"`) {
		t.Errorf("creating a NodePool with karpgate down: exit %d, stderr %q; want the validating webhook to refuse", res.ExitCode, res.Stderr)
	}
	// Only Karpenter's kinds wait for karpgate.
	kubectlOK(t, env, nil, "create", "configmap", "not-karpenter", "-n", "default")
	// The documented recovery lifts the gate; the mutating webhook, still
	// registered and still unreachable, lets the write through.
	kubectlOK(t, env, nil, "delete", "validatingwebhookconfiguration", deploy.WebhookConfigurationName)
	kubectlOK(t, env, nil, "get", "mutatingwebhookconfiguration", deploy.WebhookConfigurationName)
	kubectlOK(t, env, nil, "create", "-f", "../testdata/install/nodepool-new.yaml")
}
