package install

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/karpgate/karpgate/internal/deploy"
)

// MetricsAuthRules let karpgate ask the API server who is calling /metrics
// and /status (TokenReview) and whether they may (SubjectAccessReview):
// karpgate serve --metrics-secure, the default.
func MetricsAuthRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
	}
}

// MetricsReaderRules are what a scraper needs: get on /metrics, and on
// /status and /explain for the disruption loop's NodePool and node views.
func MetricsReaderRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics", deploy.StatusPath, deploy.ExplainPath}, Verbs: []string{"get"}}}
}

// metricsReader is the ClusterRole an operator binds to whatever scrapes
// karpgate (Prometheus's service account, say). The install binds it to
// nobody: who may read karpgate's metrics is the operator's choice.
func metricsReader() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   typeMeta(rbacv1.SchemeGroupVersion, "ClusterRole"),
		ObjectMeta: objectMeta(deploy.MetricsReaderClusterRole, ""),
		Rules:      MetricsReaderRules(),
	}
}
