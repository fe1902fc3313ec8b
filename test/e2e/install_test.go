package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/toolbin"
)

// rendering is one way an operator turns manifests/ into objects.
type rendering struct {
	name string
	// namespace karpgate runs in; created first when the rendering does not
	// carry it (Helm installs into an existing namespace).
	namespace string
	args      func(kubectl, helm, root string) []string
	// ca says where the webhooks' CA comes from: "cert-manager" (injected),
	// "values" (the caBundle value) or "" (the operator patches it in).
	ca   string
	want expectations
}

// expectations are the values a rendering must carry.
type expectations struct {
	objects                        int
	replicas                       int32
	validating, mutating           string // failure policies
	validateTimeout, mutateTimeout int32
	args                           []string // serve arguments beyond the fixed ones
}

// The request timeout is four fifths of the shorter webhook timeout, so
// karpgate answers before the API server gives up.
var defaults = expectations{replicas: 2, validating: "Fail", mutating: "Ignore", validateTimeout: 10, mutateTimeout: 10,
	args: []string{"--controller=true", "--rollout-guard=false", "--rollout-guard-freeze-after=0", "--request-timeout=8000ms",
		"--audit=true", "--audit-reports=true", "--audit-interval=10m", "--admission-policy=true"}}

var renderings = []rendering{
	{name: "kustomize base", namespace: deploy.Namespace, want: withObjects(defaults, 25), args: func(kubectl, _, root string) []string {
		return []string{kubectl, "kustomize", filepath.Join(root, "manifests", "base")}
	}},
	{name: "kustomize cert-manager overlay", namespace: deploy.Namespace, ca: "cert-manager", want: withObjects(defaults, 29), args: func(kubectl, _, root string) []string {
		return []string{kubectl, "kustomize", filepath.Join(root, "manifests", "overlays", "cert-manager")}
	}},
	{name: "helm default values", namespace: deploy.Namespace, ca: "cert-manager", want: withObjects(defaults, 28), args: func(_, helm, root string) []string {
		return []string{helm, "template", "karpgate", filepath.Join(root, "manifests", "charts", "karpgate"), "--namespace", deploy.Namespace}
	}},
}

func withObjects(e expectations, n int) expectations {
	e.objects = n
	return e
}

// helmVariant is the chart with every value changed that has a template
// branch, in a namespace of its own.
var helmVariant = rendering{name: "helm without cert-manager", namespace: "platform", ca: "values", want: expectations{
	objects: 22, replicas: 1, validating: "Ignore", mutating: "Ignore", validateTimeout: 10, mutateTimeout: 3,
	args: []string{"--controller=false", "--rollout-guard=true", "--rollout-guard-freeze-after=0", "--environment=production", "--request-timeout=2400ms",
		"--audit=false", "--audit-reports=true", "--audit-interval=1h", "--admission-policy=true"},
}, args: func(_, helm, root string) []string {
	return []string{helm, "template", "karpgate", filepath.Join(root, "manifests", "charts", "karpgate"), "--namespace", "platform",
		"--set", "certManager.enabled=false", "--set", "caBundle=" + testCABundle, "--set", "audit.enabled=false", "--set", "audit.interval=1h",
		"--set", "controller.enabled=false", "--set", "controller.rolloutGuard=true", "--set", "environment=production", "--set", "replicas=1",
		"--set", "webhooks.validating.failurePolicy=Ignore", "--set", "webhooks.mutating.timeoutSeconds=3", "--set", "networkPolicy.enabled=false"}
}}

// helmTrusted is the chart's defaults with the API server's addresses
// trusted: the flag in the pod, and the NetworkPolicy admitting exactly
// those to the webhook port (checkTrustedSources).
var helmTrusted = rendering{name: "helm with trusted sources", namespace: deploy.Namespace, ca: "cert-manager",
	want: withObjects(expectations{replicas: 2, validating: "Fail", mutating: "Ignore", validateTimeout: 10, mutateTimeout: 10,
		args: append(slices.Clone(defaults.args), "--trusted-source-cidrs="+strings.Join(trustedSourceCIDRs, ","))}, 25),
	args: func(_, helm, root string) []string {
		return []string{helm, "template", "karpgate", filepath.Join(root, "manifests", "charts", "karpgate"), "--namespace", deploy.Namespace,
			"--set", "trustedSourceCIDRs={" + strings.Join(trustedSourceCIDRs, ",") + "}"}
	}}

var trustedSourceCIDRs = []string{"10.0.16.0/28", "10.0.32.7/32"}

// testCABundle is base64 of a PEM header: the API server does not parse it
// until it calls the webhook.
const testCABundle = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="

// karpenterCRDs are the CRDs the conversion patch points at karpgate.
var karpenterCRDs = []string{"nodepools.karpenter.sh", "nodeclaims.karpenter.sh", "ec2nodeclasses.karpenter.k8s.aws"}

// TestInstallManifests renders every shipped form of the install, checks
// what it promises (pod security, RBAC, webhook scope) and applies it with
// server-side apply to one real API server carrying Karpenter v1.0.8's and
// cert-manager v1.21.2's CRDs. It runs docs/install.md's commands against
// the same server, and checks the failure policies that guide describes,
// and its recovery steps. The subtests run in order and build on each
// other's objects.
func TestInstallManifests(t *testing.T) {
	// Its own API server, processes and files, nothing in process that
	// another test starts: it runs beside the other long tests once the
	// sequential ones are done, when the unit tests have freed the cores.
	t.Parallel()
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	helm := toolbin.Find(t, "KARPGATE_HELM", "helm")
	env := testenv.Start(t, testenv.CRDs(t, crdsource.KarpenterV1_0_8, crdsource.CertManagerV1_21_2, crdsource.PrometheusOperatorV0_93_1), testenv.WebhooksResolveEndpoints())
	kubectl := filepath.Join(env.AssetsDir, "kubectl")
	g := newGuide(t, env, root, helm)

	// Stored before any webhook exists, so conversion has something to do.
	kubectlOK(t, env, nil, "apply", "-f", "../testdata/install/ec2nodeclass.yaml", "-f", "../testdata/install/nodepool.yaml")
	karpenterService := conversionService(t, env, karpenterCRDs[0])

	rendered := map[string][]*manifest.Object{}
	for _, r := range append(renderings, helmVariant, helmTrusted) {
		t.Run("render and check/"+r.name, func(t *testing.T) {
			out := run(t, r.args(kubectl, helm, root)...)
			objs := parseObjects(t, r.name, out)
			rendered[r.name] = objs
			checkPod(t, objs, r.namespace, r.want)
			checkRBAC(t, objs, r.namespace)
			checkWebhooks(t, objs, r.namespace, r.ca, r.want)
		})
	}

	for _, r := range []rendering{monitoringOverlay, helmMonitoring, helmMonitoringVariant} {
		t.Run("render and check/"+r.name, func(t *testing.T) {
			objs := parseObjects(t, r.name, run(t, r.args(kubectl, helm, root)...))
			rendered[r.name] = objs
			if len(objs) != r.want.objects {
				t.Errorf("%s: %d objects, want %d", r.name, len(objs), r.want.objects)
			}
			checkDashboardConfigMap(t, objs, root)
		})
	}
	t.Run("render and check/"+helmMonitoringVariant.name+"/values reach the objects", func(t *testing.T) {
		checkMonitoringVariant(t, rendered[helmMonitoringVariant.name])
	})
	t.Run("helm with monitoring equals the monitoring overlay", func(t *testing.T) {
		sameObjects(t, rendered[monitoringOverlay.name], rendered[helmMonitoring.name])
	})
	t.Run("helm install refuses bad values with the schema's message", func(t *testing.T) {
		checkBadValues(t, env, helm, root)
	})

	t.Run("the OpenReports CRDs: helm value and kustomize component", func(t *testing.T) {
		checkOpenReportsCRDs(t, env, kubectl, helm, root)
	})

	t.Run("helm lint", func(t *testing.T) {
		out := run(t, helm, "lint", "--strict", filepath.Join(root, "manifests", "charts", "karpgate"), "--namespace", deploy.Namespace)
		if !strings.Contains(string(out), "0 chart(s) failed") {
			t.Errorf("helm lint:\n%s", out)
		}
	})

	t.Run("guide/helm install and uninstall", func(t *testing.T) {
		notes := g.run(t, "helm-install")
		kubectlOK(t, env, nil, "-n", deploy.Namespace, "get", "deployment", deploy.Name)
		if !containsAll(notes, "kubectl apply --server-side --field-manager=karpgate --force-conflicts", "name: nodepools.karpenter.sh", "namespace: \"karpgate\"") {
			t.Errorf("the install notes lack the CRD patch for namespace karpgate:\n%s", notes)
		}
		g.run(t, "helm-uninstall")
		if res := env.Kubectl(nil, "-n", deploy.Namespace, "get", "deployment", deploy.Name); res.ExitCode == 0 {
			t.Error("helm uninstall left the Deployment")
		}
	})

	t.Run("apply/"+renderings[0].name, func(t *testing.T) {
		applyRendering(t, env, renderings[0], kubectl, helm, root)
	})

	t.Run("guide/kustomize install", func(t *testing.T) {
		g.run(t, "kustomize-install")
		kubectlOK(t, env, nil, "-n", deploy.Namespace, "get", "certificate.cert-manager.io/karpgate-serving", "issuer.cert-manager.io/karpgate-ca")
		// The overlay alone leaves Karpenter's CRDs alone.
		for _, crd := range karpenterCRDs {
			if got := conversionService(t, env, crd); got != karpenterService {
				t.Errorf("%s: conversion points at %s after the overlay, want Karpenter's %s", crd, got, karpenterService)
			}
		}
	})

	for _, r := range renderings[1:] {
		t.Run("apply/"+r.name, func(t *testing.T) {
			applyRendering(t, env, r, kubectl, helm, root)
		})
	}

	t.Run("guide/kustomize conversion", func(t *testing.T) {
		g.run(t, "kustomize-conversion")
		for _, crd := range karpenterCRDs {
			got := kubectlOK(t, env, nil, "get", "crd", crd, "-o",
				`jsonpath={.spec.conversion.webhook.clientConfig.service.namespace}/{.spec.conversion.webhook.clientConfig.service.name}:{.spec.conversion.webhook.clientConfig.service.port}{.spec.conversion.webhook.clientConfig.service.path} {.metadata.annotations.cert-manager\.io/inject-ca-from} {.spec.versions[*].name}`)
			// The patch moved only the conversion: the versions Karpenter
			// serves are untouched.
			if want := "karpgate/karpgate:443/convert karpgate/karpgate-serving v1 v1beta1"; got != want {
				t.Errorf("%s: got %q, want %q", crd, got, want)
			}
		}
	})

	t.Run("render and check/"+helmTrusted.name+"/the NetworkPolicy admits them only", func(t *testing.T) {
		checkTrustedSources(t, rendered[helmTrusted.name], trustedSourceCIDRs)
	})

	t.Run("helm default values equal the cert-manager overlay", func(t *testing.T) {
		sameObjects(t, rendered["kustomize cert-manager overlay"], rendered["helm default values"])
	})

	t.Run("apply/"+monitoringOverlay.name, func(t *testing.T) {
		applyRendering(t, env, monitoringOverlay, kubectl, helm, root)
	})

	t.Run("apply/"+helmMonitoringVariant.name+" (server-side dry run)", func(t *testing.T) {
		kubectlOK(t, env, nil, "create", "namespace", helmMonitoringVariant.namespace)
		out := run(t, helmMonitoringVariant.args(kubectl, helm, root)...)
		res := env.Kubectl(out, "apply", "--server-side", "--dry-run=server", "--field-manager=karpgate", "-f", "-")
		if res.ExitCode != 0 {
			t.Fatalf("server-side dry run of %s: exit %d\n%s\n%s", helmMonitoringVariant.name, res.ExitCode, res.Stdout, res.Stderr)
		}
	})

	t.Run("pod security admission accepts the pod and only it", func(t *testing.T) {
		checkPodSecurityAdmission(t, env, rendered["kustomize cert-manager overlay"])
	})

	t.Run("service account permissions", func(t *testing.T) {
		checkServiceAccountAccess(t, env, deploy.Namespace)
	})

	t.Run("karpgate writes only its own reports", func(t *testing.T) {
		checkOwnReports(t, env, root, deploy.Namespace)
	})

	t.Run("failure policies and recovery", func(t *testing.T) {
		checkFailurePolicies(t, env)
	})

	t.Run("guide/own CA", func(t *testing.T) {
		g.run(t, "own-ca")
		secretType := kubectlOK(t, env, nil, "-n", deploy.Namespace, "get", "secret", deploy.CertSecretName, "-o", "jsonpath={.type}")
		bundle := kubectlOK(t, env, nil, "get", "validatingwebhookconfiguration", deploy.WebhookConfigurationName, "-o", "jsonpath={.webhooks[0].clientConfig.caBundle}")
		ca, err := os.ReadFile(filepath.Join(g.dir, "ca.crt"))
		if err != nil {
			t.Fatal(err)
		}
		if secretType != "kubernetes.io/tls" || bundle != base64.StdEncoding.EncodeToString(ca) {
			t.Errorf("Secret %s of type %q, caBundle %.20q...; want kubernetes.io/tls and the CA", deploy.CertSecretName, secretType, bundle)
		}
	})

	t.Run("apply/"+helmVariant.name, func(t *testing.T) {
		applyRendering(t, env, helmVariant, kubectl, helm, root)
		checkServiceAccountAccess(t, env, helmVariant.namespace)
	})

	t.Run("guide/kustomize uninstall", func(t *testing.T) {
		stop := finalizeNamespaceWhenDeleted(env, deploy.Namespace)
		defer stop()
		g.run(t, "kustomize-uninstall")
		if res := env.Kubectl(nil, "get", "clusterrole", deploy.Name); res.ExitCode == 0 {
			t.Error("the uninstall left ClusterRole karpgate")
		}
		// Karpenter's CRDs, and so its objects, survive karpgate's removal.
		kubectlOK(t, env, nil, "get", "nodepools.v1.karpenter.sh", "stored", "new")
	})

	if unrun := g.unrun(); len(unrun) > 0 {
		t.Errorf("docs/install.md blocks no subtest runs: %v", unrun)
	}
}

func applyRendering(t *testing.T, env *testenv.Env, r rendering, kubectl, helm, root string) {
	t.Helper()
	if r.namespace != deploy.Namespace {
		kubectlOK(t, env, nil, "create", "namespace", r.namespace)
	}
	out := run(t, r.args(kubectl, helm, root)...)
	res := env.Kubectl(out, "apply", "--server-side", "--field-manager=karpgate", "--force-conflicts", "-f", "-")
	if res.ExitCode != 0 {
		t.Fatalf("server-side apply of %s: exit %d\n%s\n%s", r.name, res.ExitCode, res.Stdout, res.Stderr)
	}
	// The namespace enforces and warns on the restricted profile: any
	// warning here means the Deployment's pod template would be refused.
	if strings.Contains(res.Stderr, "PodSecurity") {
		t.Errorf("%s: pod security warning on apply:\n%s", r.name, res.Stderr)
	}
	// Every object is there to read back.
	names := strings.Fields(kubectlOK(t, env, out, "get", "-f", "-", "-o", "name"))
	if rendered := len(parseObjects(t, r.name, out)); rendered != r.want.objects || len(names) != rendered {
		t.Errorf("%s: %d objects rendered (want %d), %d read back: %v", r.name, rendered, r.want.objects, len(names), names)
	}
}

func run(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

func parseObjects(t *testing.T, name string, data []byte) []*manifest.Object {
	t.Helper()
	var objs []*manifest.Object
	err := manifest.ParseStream(name, bytes.NewReader(data), func(d *manifest.Document) error {
		objs = append(objs, d.Objects...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// sameObjects: the chart, which has no Namespace, renders exactly the
// kustomize tree's other objects.
func sameObjects(t *testing.T, kustomized, chart []*manifest.Object) {
	t.Helper()
	overlay := byRef(kustomized, func(o *manifest.Object) bool { return o.Kind() != "Namespace" })
	helm := byRef(chart, func(*manifest.Object) bool { return true })
	if got, want := sortedKeys(helm), sortedKeys(overlay); !reflect.DeepEqual(got, want) {
		t.Fatalf("helm renders %v\nthe overlay has %v", got, want)
	}
	for ref, o := range overlay {
		if !reflect.DeepEqual(helm[ref].Content, o.Content) {
			t.Errorf("%s differs between helm template and kubectl kustomize:\nhelm:    %v\noverlay: %v", ref, helm[ref].Content, o.Content)
		}
	}
}

func byRef(objs []*manifest.Object, keep func(*manifest.Object) bool) map[string]*manifest.Object {
	out := map[string]*manifest.Object{}
	for _, o := range objs {
		if keep(o) {
			out[o.APIVersion()+" "+o.Kind()+" "+o.Namespace()+"/"+o.Name()] = o
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkTrustedSources: the NetworkPolicy admits exactly the trusted
// addresses to the webhook port.
func checkTrustedSources(t *testing.T, objs []*manifest.Object, want []string) {
	t.Helper()
	for _, o := range objs {
		if o.Kind() != "NetworkPolicy" {
			continue
		}
		var np networkingv1.NetworkPolicy
		if err := json.Unmarshal(mustJSON(t, o.Content), &np); err != nil {
			t.Fatal(err)
		}
		var admitted []string
		for _, peer := range np.Spec.Ingress[0].From {
			admitted = append(admitted, peer.IPBlock.CIDR)
		}
		if np.Spec.Ingress[0].Ports[0].Port.StrVal != deploy.WebhookPortName || !slices.Equal(admitted, want) {
			t.Errorf("the NetworkPolicy admits %q to port %v, want %q to the webhook port", admitted, np.Spec.Ingress[0].Ports[0].Port, want)
		}
		return
	}
	t.Error("no NetworkPolicy rendered")
}
