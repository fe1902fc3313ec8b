package install

import (
	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/installed"
	"github.com/karpgate/karpgate/internal/webhookconfig"
)

// ClusterRules are everything karpgate may do cluster-wide: read Karpenter's
// kinds and nodes (conversion looks up NodePools; the controller watches all
// four), read pods and PodDisruptionBudgets (what stops a node's eviction,
// for status and /explain), write NodePools for the rollout guard, write the
// audit's OpenReports ClusterReports (its own only: the
// ValidatingAdmissionPolicy of ownReportsPolicy narrows what no RBAC rule
// can), record events, and check the callers of /metrics
// (MetricsAuthRules). No wildcards and no secrets: the serving certificate
// is a mounted file.
func ClusterRules() []rbacv1.PolicyRule {
	read := []string{"get", "list", "watch"}
	return append([]rbacv1.PolicyRule{
		{APIGroups: []string{karpenter.CoreGroup}, Resources: []string{"nodepools", "nodeclaims"}, Verbs: read},
		{APIGroups: []string{karpenter.AWSGroup}, Resources: []string{"ec2nodeclasses"}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: read},
		{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: read},
		{APIGroups: []string{karpenter.CoreGroup}, Resources: []string{"nodepools"}, Verbs: []string{"patch", "update"}},
		{APIGroups: []string{orv1.GroupName}, Resources: []string{"clusterreports"}, Verbs: []string{"get", "list", "watch", "create", "update", "delete"}},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		// The rollout plans' controller reads every plan and writes their
		// status; the admission webhook lists them to refuse a NodePool in two.
		{APIGroups: []string{v1alpha1.Group}, Resources: []string{"rolloutplans"}, Verbs: read},
		{APIGroups: []string{v1alpha1.Group}, Resources: []string{"rolloutplans/status"}, Verbs: []string{"patch", "update"}},
		// Karpenter's CRDs say which release the webhooks and the loop judge
		// by (Unhealthy from v1.15 on), watched so that an upgrade of them
		// changes the verdicts without a restart. Named: list and watch
		// hold for them alone because the watch selects each by name.
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, ResourceNames: installed.CRDNames(), Verbs: read},
		// The twins' policy and bindings, read to tell whether the API
		// server enforces the twins as karpgate would write them
		// (policies/twinsync): only karpgate's own, and only read.
		{APIGroups: []string{admissionregistrationv1.GroupName}, Resources: []string{"validatingadmissionpolicies"},
			ResourceNames: []string{deploy.AdmissionPolicyName}, Verbs: []string{"get"}},
		{APIGroups: []string{admissionregistrationv1.GroupName}, Resources: []string{"validatingadmissionpolicybindings"},
			ResourceNames: webhookconfig.AdmissionPolicyBindingNames(), Verbs: []string{"get"}},
	}, MetricsAuthRules()...)
}

// LeaderElectionRoleName names the Role and RoleBinding for the Lease.
const LeaderElectionRoleName = deploy.Name + "-leader-election"

// LeaderElectionRules are namespaced to karpgate's own namespace: its
// Lease, the ConfigMap that keeps the last good policy
// (policies/lastgood) and the parameter objects of the twins' policy
// (policies/twinsync). Create cannot be limited to a name (the object does
// not exist yet); reading and writing can, so they are limited to
// karpgate's own objects.
func LeaderElectionRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{deploy.LeaderElectionID}, Verbs: []string{"get", "update"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: append([]string{deploy.LastGoodConfigMapName}, webhookconfig.AdmissionPolicyParamsNames()...), Verbs: []string{"get", "update"}},
	}
}

func clusterRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   typeMeta(rbacv1.SchemeGroupVersion, "ClusterRole"),
		ObjectMeta: objectMeta(deploy.Name, ""),
		Rules:      ClusterRules(),
	}
}

func clusterRoleBinding(opts Options) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		TypeMeta:   typeMeta(rbacv1.SchemeGroupVersion, "ClusterRoleBinding"),
		ObjectMeta: objectMeta(deploy.Name, ""),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: deploy.Name},
		Subjects:   []rbacv1.Subject{serviceAccountSubject(opts)},
	}
}

func leaderElectionRole(opts Options) *rbacv1.Role {
	return &rbacv1.Role{
		TypeMeta:   typeMeta(rbacv1.SchemeGroupVersion, "Role"),
		ObjectMeta: objectMeta(LeaderElectionRoleName, opts.Namespace),
		Rules:      LeaderElectionRules(),
	}
}

func leaderElectionRoleBinding(opts Options) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		TypeMeta:   typeMeta(rbacv1.SchemeGroupVersion, "RoleBinding"),
		ObjectMeta: objectMeta(LeaderElectionRoleName, opts.Namespace),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: LeaderElectionRoleName},
		Subjects:   []rbacv1.Subject{serviceAccountSubject(opts)},
	}
}

func serviceAccountSubject(opts Options) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: deploy.Name, Namespace: opts.Namespace}
}
