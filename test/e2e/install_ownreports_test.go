package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

// ownReportsPolicy names the install's ValidatingAdmissionPolicy and
// binding (install.OwnReportsPolicyName).
const ownReportsPolicy = "karpgate-own-reports"

// clusterReport is a ClusterReport labelled as written by managedBy, at
// resourceVersion ("" to create it).
func clusterReport(name, managedBy, source, resourceVersion string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"openreports.io/v1alpha1","kind":"ClusterReport","metadata":{"name":%q,"resourceVersion":%q,"labels":{"app.kubernetes.io/managed-by":%q}},"source":%q,"summary":{"pass":1}}`,
		name, resourceVersion, managedBy, source)
}

// checkOwnReports: karpgate's service account, which RBAC lets create,
// update and delete any ClusterReport, is refused every write to a report
// another tool wrote, and to a report not labelled as its own, by the
// install's ValidatingAdmissionPolicy; its own reports it still writes and
// deletes. With the policy's binding gone, as in an install without it,
// the same delete of the other tool's report is allowed. The refusal is
// the one docs/audit.md shows.
func checkOwnReports(t *testing.T, env *testenv.Env, root, namespace string) {
	as := "--as=system:serviceaccount:" + namespace + ":" + deploy.Name
	kubectlOK(t, env, clusterReport("kyverno-report", "kyverno", "kyverno", ""), "create", "-f", "-")
	version := func(name string) string {
		t.Helper()
		return kubectlOK(t, env, nil, "get", "clusterreport", name, "-o", "jsonpath={.metadata.resourceVersion}")
	}
	deleteForeign := []string{"delete", "clusterreport", "kyverno-report", "--dry-run=server", as}

	// RBAC alone: the install before the policy.
	kubectlOK(t, env, nil, "delete", "validatingadmissionpolicybinding", ownReportsPolicy)
	wait.ForNoError(t, "karpgate's delete of another tool's report allowed without the policy", func() error {
		if res := env.Kubectl(nil, deleteForeign...); res.ExitCode != 0 {
			return errors.New(res.Stderr)
		}
		return nil
	})
	kubectlOK(t, env, nil, "apply", "--server-side", "--field-manager=karpgate", "-f", filepath.Join(root, "manifests", "base", "validatingadmissionpolicybinding.yaml"))
	wait.ForNoError(t, "the policy in force again", func() error {
		if res := env.Kubectl(nil, deleteForeign...); res.ExitCode == 0 {
			return errors.New("karpgate may still delete another tool's report")
		}
		return nil
	})

	refused := func(what string, stdin []byte, args ...string) string {
		t.Helper()
		res := env.Kubectl(stdin, append(args, as)...)
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, "ValidatingAdmissionPolicy '"+ownReportsPolicy+"'") {
			t.Errorf("%s: exit %d, %s; want the policy to refuse it", what, res.ExitCode, res.Stderr)
		}
		return res.Stderr
	}
	stderr := refused("deleting another tool's report", nil, "delete", "clusterreport", "kyverno-report")
	refused("taking another tool's report over", clusterReport("kyverno-report", "karpgate", "karpgate", version("kyverno-report")), "replace", "-f", "-")
	refused("writing a report not labelled as karpgate's", clusterReport("karpgate-unlabelled", "someone", "karpgate", ""), "create", "-f", "-")
	if got := kubectlOK(t, env, nil, "get", "clusterreport", "kyverno-report", "-o", "jsonpath={.source} {.metadata.labels.app\\.kubernetes\\.io/managed-by}"); got != "kyverno kyverno" {
		t.Errorf("the other tool's report now says %q", got)
	}

	// What the audit does to its own reports is allowed.
	kubectlOK(t, env, clusterReport("karpgate-nodepool-web", "karpgate", "karpgate", ""), "create", "-f", "-", as)
	refused("giving its own report away", clusterReport("karpgate-nodepool-web", "kyverno", "karpgate", version("karpgate-nodepool-web")), "replace", "-f", "-")
	kubectlOK(t, env, clusterReport("karpgate-nodepool-web", "karpgate", "karpgate-again", version("karpgate-nodepool-web")), "replace", "-f", "-", as)
	kubectlOK(t, env, nil, "delete", "clusterreport", "karpgate-nodepool-web", as)

	doc, err := os.ReadFile(filepath.Join(root, "docs", "audit.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown := "$ kubectl delete clusterreport kyverno-report --as system:serviceaccount:karpgate:karpgate\n" + strings.TrimSpace(stderr) + "\n"
	if namespace == deploy.Namespace && !strings.Contains(string(doc), shown) {
		t.Errorf("docs/audit.md does not show the refusal as kubectl prints it:\n%s", shown)
	}
	kubectlOK(t, env, nil, "delete", "clusterreport", "kyverno-report")
}
