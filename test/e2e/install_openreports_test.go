package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/test/testenv"
)

// checkOpenReportsCRDs: the chart renders the openreports.io CRDs only
// (karpgate's own RolloutPlan CRD always)
// with audit.installReportCRDs, marked for Helm to keep on uninstall; the
// kustomize component holds the same CRDs; the API server takes them, and
// then serves ClusterReports.
func checkOpenReportsCRDs(t *testing.T, env *testenv.Env, kubectl, helm, root string) {
	chart := filepath.Join(root, "manifests", "charts", "karpgate")
	if objs := parseObjects(t, "helm default values", run(t, helm, "template", "karpgate", chart, "--namespace", deploy.Namespace)); countKind(objs, "CustomResourceDefinition") != 1 {
		t.Fatalf("the chart renders CRDs other than karpgate's own RolloutPlan by default")
	}
	fromHelm := parseObjects(t, "helm with audit.installReportCRDs", run(t, helm, "template", "karpgate", chart, "--namespace", deploy.Namespace,
		"--set", "audit.installReportCRDs=true", "--show-only", "templates/openreports-crds.yaml"))
	names := map[string]bool{}
	for _, o := range fromHelm {
		names[o.Name()] = true
		if keep, _ := o.Content["metadata"].(map[string]any)["annotations"].(map[string]any)["helm.sh/resource-policy"].(string); keep != "keep" {
			t.Errorf("%s: helm.sh/resource-policy %q, want keep", o.Name(), keep)
		}
	}
	if len(fromHelm) != 2 || !names["clusterreports.openreports.io"] || !names["reports.openreports.io"] {
		t.Fatalf("the chart's OpenReports CRDs: %v", names)
	}

	// A kustomization that includes the component, as docs/install.md says.
	dir := t.TempDir()
	component, err := filepath.Rel(dir, filepath.Join(root, "manifests", "components", "openreports"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\ncomponents:\n  - "+component+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	built := run(t, kubectl, "kustomize", dir)
	fromKustomize := parseObjects(t, "kustomize with components/openreports", built)
	if len(fromKustomize) != 2 {
		t.Fatalf("the component holds %d objects, want the 2 CRDs", len(fromKustomize))
	}
	kubectlOK(t, env, built, "apply", "--server-side", "-f", "-")
	kubectlOK(t, env, nil, "wait", "--for=condition=Established", "crd/clusterreports.openreports.io")
	kubectlOK(t, env, nil, "get", "clusterreports")
}

func countKind(objs []*manifest.Object, kind string) int {
	n := 0
	for _, o := range objs {
		if o.Kind() == kind {
			n++
		}
	}
	return n
}
