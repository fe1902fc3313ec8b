package guides

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/test/gobuild"
	"github.com/karpgate/karpgate/test/ociregistry"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/toolbin"
)

// TestGuides runs docs/eks.md, docs/gitops.md and docs/own-rules.md, each
// in a workspace of its own, against one API server.
func TestGuides(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	helm := toolbin.Find(t, "KARPGATE_HELM", "helm")
	karpgate := gobuild.Command(t, "github.com/karpgate/karpgate/cmd/karpgate")
	env := testenv.Start(t, testenv.CRDs(t, crdsource.CertManagerV1_21_2, crdsource.ArgoCDV3_6_1,
		crdsource.FluxKustomizeControllerV1_10_1, crdsource.FluxSourceControllerV1_10_1))
	registry := ociregistry.Start(t)
	eks, gitops, ownRules := loadGuide(t, root, "docs/eks.md"), loadGuide(t, root, "docs/gitops.md"), loadGuide(t, root, "docs/own-rules.md")

	// The release the guides pin, published as the release workflow would:
	// the chart in the registry, the manifests at the tag in Git.
	chartVersion := regexp.MustCompile(`--version (\S+)`).FindStringSubmatch(eks.blocks["eks-install"].body)
	gitRef := regexp.MustCompile(`\?ref=(v\S+)`).FindStringSubmatch(gitops.blocks["argocd-kustomization"].body)
	if chartVersion == nil || gitRef == nil || "v"+chartVersion[1] != gitRef[1] {
		t.Fatalf("docs/eks.md installs chart version %v and docs/gitops.md takes the manifests at %v: want one release", chartVersion, gitRef)
	}
	home := t.TempDir()
	baseEnv := append(os.Environ(), registry.Env()...)
	baseEnv = append(baseEnv,
		"PATH="+strings.Join([]string{env.AssetsDir, filepath.Dir(helm), filepath.Dir(karpgate), os.Getenv("PATH")}, string(os.PathListSeparator)),
		"KUBECONFIG="+env.KubeconfigPath, "DOCKER_CONFIG="+filepath.Join(home, "docker"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "helm-config"), "HELM_CACHE_HOME="+filepath.Join(home, "helm-cache"), "HELM_DATA_HOME="+filepath.Join(home, "helm-data"))
	publishChart(t, helm, baseEnv, root, registry.Host, chartVersion[1])
	repo := tagManifests(t, root, gitRef[1])
	newWorkspace := func() *workspace {
		return &workspace{dir: t.TempDir(), env: baseEnv, publicRefs: strings.NewReplacer(
			"oci://ghcr.io/karpgate/charts", "oci://"+registry.Host+"/charts",
			"https://github.com/karpgate/karpgate//", "file://"+repo+"//")}
	}

	t.Run("eks", func(t *testing.T) {
		w := newWorkspace()
		eks.step(t, w, "eks-values")
		eks.step(t, w, "eks-install")
		args := env.MustKubectl(nil, "-n", "karpgate", "get", "deployment", "karpgate", "-o", "jsonpath={.spec.template.spec.containers[0].args}")
		for _, want := range []string{"--environment=production", "--trusted-source-cidrs=10.0.0.0/28,10.0.0.16/28"} {
			if !strings.Contains(args, want) {
				t.Errorf("eks-values.yaml did not give karpgate serve %s: %s", want, args)
			}
		}
		eks.step(t, w, "eks-networkpolicy")
		eks.checkAllRan(t)
	})

	t.Run("argo cd", func(t *testing.T) {
		w := newWorkspace()
		gitops.step(t, w, "argocd-kustomization")
		gitops.step(t, w, "argocd-waves")
		env.MustKubectl(nil, "create", "namespace", "argocd")
		gitops.step(t, w, "argocd-application")
		gitops.step(t, w, "argocd-apply")
		got := env.MustKubectl(nil, "-n", "argocd", "get", "application", "karpgate", "-o", "jsonpath={.spec.ignoreDifferences[*].jqPathExpressions}")
		if !strings.Contains(got, ".webhooks[]?.clientConfig.caBundle") {
			t.Errorf("the stored Application lost its ignoreDifferences: %s", got)
		}
	})

	t.Run("flux", func(t *testing.T) {
		w := newWorkspace()
		gitops.step(t, w, "flux-kustomizations")
		env.MustKubectl(nil, "create", "namespace", "flux-system")
		gitops.step(t, w, "flux-apply")
		got := env.MustKubectl(nil, "-n", "flux-system", "get", "kustomizations.kustomize.toolkit.fluxcd.io", "-o",
			`jsonpath={range .items[*]}{.metadata.name}<-{.spec.dependsOn[*].name}{" "}{end}`)
		if got != "karpgate<-cert-manager nodepools<-karpgate " {
			t.Errorf("the stored Kustomizations depend on each other as %q", got)
		}
		gitops.checkAllRan(t)
	})

	t.Run("own rules", func(t *testing.T) {
		w := newWorkspace()
		for _, name := range []string{"rule", "rule-test", "nodepool"} {
			ownRules.step(t, w, name)
		}
		ownRules.step(t, w, "verify")
		ownRules.stepExit(t, w, "lint", 1)
		// The namespace of the install (eks above made it).
		env.MustKubectl([]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"karpgate"}}`), "apply", "-f", "-")
		ownRules.step(t, w, "configmap")
		// The folder as the kubelet mounts the ConfigMap: a file per key.
		var cm corev1.ConfigMap
		if err := json.Unmarshal([]byte(env.MustKubectl(nil, "-n", "karpgate", "get", "configmap", "karpgate-policies", "-o", "json")), &cm); err != nil {
			t.Fatal(err)
		}
		mounted := t.TempDir()
		for key, data := range cm.Data {
			if err := os.WriteFile(filepath.Join(mounted, key), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		lint := func(policies string) string {
			cmd := exec.Command(karpgate, "lint", "--policy", policies, "--format", "json", "nodepool.yaml")
			cmd.Dir = w.dir
			out, _ := cmd.Output()
			return string(out)
		}
		if fromConfigMap, fromFolder := lint(mounted), lint(filepath.Join(w.dir, "policies")); fromConfigMap != fromFolder || !strings.Contains(fromFolder, "ACME001") {
			t.Errorf("the ConfigMap's policies judge otherwise than the folder's:\n%s\n%s", fromConfigMap, fromFolder)
		}
		ownRules.step(t, w, "kustomization")
		cmd := exec.Command(filepath.Join(env.AssetsDir, "kubectl"), "kustomize", ".")
		cmd.Dir = w.dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("kubectl kustomize: %v", err)
		}
		var generated corev1.ConfigMap
		rule, _ := os.ReadFile(filepath.Join(w.dir, "policies", "team_label.rego"))
		if err := yaml.Unmarshal(out, &generated); err != nil || generated.Namespace != "karpgate" || generated.Name != "karpgate-policies" ||
			generated.Data["team_label.rego"] != string(rule) || len(rule) == 0 {
			t.Errorf("the kustomization does not make ConfigMap karpgate/karpgate-policies with the rule (%v):\n%s", err, out)
		}
		ownRules.checkAllRan(t)
	})
}

// publishChart pushes the chart of this checkout, at the version the
// guides pin, to the registry as the release workflow pushes it to ghcr.io.
func publishChart(t *testing.T, helm string, env []string, root, host, version string) {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"package", filepath.Join(root, "manifests", "charts", "karpgate"), "--version", version, "--app-version", "v" + version, "--destination", dir},
		{"push", filepath.Join(dir, "karpgate-"+version+".tgz"), "oci://" + host + "/charts"},
	} {
		cmd := exec.Command(helm, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// tagManifests makes a Git repository of this checkout's manifests/ folder,
// tagged ref, for kustomize to fetch as it fetches github.com/karpgate/karpgate.
func tagManifests(t *testing.T, root, ref string) string {
	t.Helper()
	repo := t.TempDir()
	if out, err := exec.Command("cp", "-R", filepath.Join(root, "manifests"), repo).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"init", "-q"}, {"add", "manifests"},
		{"-c", "user.name=karpgate", "-c", "user.email=karpgate@example.com", "commit", "-q", "-m", "release"},
		{"tag", ref},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return repo
}
