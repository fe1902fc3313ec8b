package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"reflect"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/karpgate/karpgate/test/wait"

	"github.com/karpgate/karpgate/internal/devcluster/loopback"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/internal/devcluster/localca"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/webhookconfig"
	"github.com/karpgate/karpgate/test/testenv"
)

// TestConversionWebhook runs `karpgate serve` as the conversion webhook of
// the real Karpenter v1.0.8 CRDs: v1beta1 objects applied with kubectl read
// as v1 in the v1 shape and read back as v1beta1 unchanged, v1-only data
// survives a v1beta1 client's write, and a v1beta1 write keeps a NodeClaim's
// immutable v1 spec.
func TestConversionWebhook(t *testing.T) {
	env := startWithKarpgateConversion(t)

	env.MustKubectl(nil, "apply", "-f", "../testdata/conversion/v1beta1.yaml")

	// The v1 shape of the NodePool.
	pool := getJSON(t, env, "nodepools.v1.karpenter.sh", "default")
	wantJSON(t, "v1 NodePool spec", pool["spec"], `{
		"disruption": {"budgets": [{"nodes": "10%"}], "consolidateAfter": "0s", "consolidationPolicy": "WhenEmptyOrUnderutilized"},
		"template": {"spec": {
			"expireAfter": "720h",
			"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
			"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}]}}}`)
	annotations := field(pool, "metadata", "annotations").(map[string]any)
	if got := annotations[karpenter.KubeletCompatibilityAnnotation]; got != `{"maxPods":110}` {
		t.Errorf("kubelet annotation = %v", got)
	}
	if got := annotations[karpenter.NodeClassReferenceCompatibilityAnnotation]; got != `{"name":"default"}` {
		t.Errorf("nodeclass-reference annotation = %v", got)
	}
	class := getJSON(t, env, "ec2nodeclasses.v1.karpenter.k8s.aws", "default")
	wantJSON(t, "v1 amiSelectorTerms", field(class, "spec", "amiSelectorTerms"), `[{"alias": "al2@latest"}]`)
	if f := field(class, "spec", "amiFamily"); f != nil {
		t.Errorf("v1 EC2NodeClass keeps amiFamily %v next to its alias", f)
	}

	// Read back as v1beta1: the original, with only the CRD's defaults added.
	beta := getJSON(t, env, "nodepools.v1beta1.karpenter.sh", "default")
	wantJSON(t, "v1beta1 NodePool spec", beta["spec"], `{
		"disruption": {"budgets": [{"nodes": "10%"}], "consolidationPolicy": "WhenUnderutilized", "expireAfter": "720h"},
		"template": {"spec": {
			"kubelet": {"maxPods": 110},
			"nodeClassRef": {"name": "default"},
			"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}]}}}`)
	onlyLastApplied(t, "v1beta1 NodePool", beta)
	betaClass := getJSON(t, env, "ec2nodeclasses.v1beta1.karpenter.k8s.aws", "default")
	if field(betaClass, "spec", "amiFamily") != "AL2" || field(betaClass, "spec", "amiSelectorTerms") != nil {
		t.Errorf("v1beta1 EC2NodeClass read back as %v", betaClass["spec"])
	}
	onlyLastApplied(t, "v1beta1 EC2NodeClass", betaClass)

	// v1-only data survives a write through v1beta1.
	env.MustKubectl(nil, "patch", "nodepools.v1.karpenter.sh", "default", "--type", "merge", "-p",
		`{"spec":{"disruption":{"budgets":[{"nodes":"10%"},{"nodes":"0","reasons":["Drifted"],"schedule":"@daily","duration":"8h"}]},"template":{"spec":{"terminationGracePeriod":"48h"}}}}`)
	beta = getJSON(t, env, "nodepools.v1beta1.karpenter.sh", "default")
	if _, ok := field(beta, "metadata", "annotations").(map[string]any)[karpenter.RestoreV1Annotation]; !ok {
		t.Fatalf("v1beta1 view carries no %s for the v1-only fields", karpenter.RestoreV1Annotation)
	}
	setLabel(beta, "team", "platform")
	env.MustKubectl(mustMarshal(t, beta), "replace", "-f", "-")
	pool = getJSON(t, env, "nodepools.v1.karpenter.sh", "default")
	wantJSON(t, "budgets after a v1beta1 write", field(pool, "spec", "disruption", "budgets"),
		`[{"nodes": "10%"}, {"nodes": "0", "reasons": ["Drifted"], "schedule": "@daily", "duration": "8h"}]`)
	if got := field(pool, "spec", "template", "spec", "terminationGracePeriod"); got != "48h" {
		t.Errorf("terminationGracePeriod after a v1beta1 write = %v, want 48h", got)
	}
	if got := field(pool, "metadata", "labels", "team"); got != "platform" {
		t.Errorf("the v1beta1 write's own change is missing: label team = %v", got)
	}
	if _, ok := field(pool, "metadata", "annotations").(map[string]any)[karpenter.RestoreV1Beta1Annotation]; ok {
		t.Errorf("v1 NodePool carries %s after a plain round trip", karpenter.RestoreV1Beta1Annotation)
	}

	// A NodeClaim gets its NodePool's expireAfter, and keeps it.
	env.MustKubectl(nil, "create", "-f", "../testdata/conversion/nodeclaim-v1beta1.yaml")
	claim := getJSON(t, env, "nodeclaims.v1.karpenter.sh", "default-x7k2p")
	if got := field(claim, "spec", "expireAfter"); got != "720h" {
		t.Errorf("v1 NodeClaim expireAfter = %v, want the NodePool's 720h", got)
	}
	env.MustKubectl(nil, "patch", "nodepools.v1.karpenter.sh", "default", "--type", "merge", "-p", `{"spec":{"template":{"spec":{"expireAfter":"24h"}}}}`)
	betaClaim := getJSON(t, env, "nodeclaims.v1beta1.karpenter.sh", "default-x7k2p")
	setLabel(betaClaim, "team", "platform")
	if res := env.Kubectl(mustMarshal(t, betaClaim), "replace", "-f", "-"); res.ExitCode != 0 {
		t.Fatalf("a v1beta1 write to a NodeClaim whose NodePool changed expireAfter was rejected: %s", res.Stderr)
	}
	if got := field(getJSON(t, env, "nodeclaims.v1.karpenter.sh", "default-x7k2p"), "spec", "expireAfter"); got != "720h" {
		t.Errorf("NodeClaim expireAfter after a v1beta1 write = %v, want it unchanged at 720h", got)
	}
}

// startWithKarpgateConversion starts an API server whose Karpenter v1.0.8
// CRDs call `karpgate serve` for conversion, and that server.
func startWithKarpgateConversion(t *testing.T) *testenv.Env {
	t.Helper()
	bundle, err := localca.New([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certDir := t.TempDir()
	if err := bundle.WriteDir(certDir); err != nil {
		t.Fatal(err)
	}
	port, healthPort := loopback.TestPort(t), loopback.TestPort(t)
	crds := testenv.CRDs(t, crdsource.KarpenterV1_0_8)
	// envtest drops conversion webhooks of types it does not know, so the
	// stanza is pointed at karpgate after the CRDs are installed, with the
	// review versions Karpenter lists.
	patches := map[string][]byte{}
	for _, crd := range crds {
		if c := crd.Spec.Conversion; c != nil && c.Webhook != nil {
			patch, err := webhookconfig.ConversionPatch(webhookconfig.URLEndpoint(fmt.Sprintf("https://127.0.0.1:%d", port), bundle.CAPEM), c.Webhook.ConversionReviewVersions)
			if err != nil {
				t.Fatal(err)
			}
			patches[crd.Name] = patch
		}
	}
	if len(patches) != 3 {
		t.Fatalf("%d CRDs have a conversion webhook, want NodePool, NodeClaim and EC2NodeClass", len(patches))
	}
	env := testenv.Start(t, crds)
	for name, patch := range patches {
		env.MustKubectl(nil, "patch", "crd", name, "--type", "merge", "-p", string(patch))
	}

	serve := exec.Command(buildKarpgate(t), "serve", "--cert-dir", certDir, "--host", "127.0.0.1",
		"--port", strconv.Itoa(port), "--health-addr", "127.0.0.1:"+strconv.Itoa(healthPort), "--metrics-addr", "0",
		"--controller=false", "--audit=false", "--kubeconfig", env.KubeconfigPath)
	var logs bytes.Buffer
	serve.Stdout, serve.Stderr = &logs, &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = serve.Process.Signal(syscall.SIGTERM)
		if err := serve.Wait(); err != nil {
			t.Errorf("karpgate serve did not stop cleanly on SIGTERM: %v", err)
		}
		if t.Failed() {
			t.Logf("karpgate serve output:\n%s", logs.String())
		}
	})
	wait.For(t, "karpgate serve is ready", func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", healthPort)); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("karpgate serve /healthz: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// The API server picks up CRD changes asynchronously: wait until a
	// throwaway object really converts through karpgate.
	probe := []byte(`{"apiVersion":"karpenter.sh/v1beta1","kind":"NodePool","metadata":{"name":"probe"},"spec":{"template":{"spec":{"nodeClassRef":{"name":"x"},"requirements":[]}}}}`)
	wait.For(t, "conversions to go through karpgate", func() bool {
		env.Kubectl(probe, "apply", "-f", "-")
		res := env.Kubectl(nil, "get", "nodepools.v1.karpenter.sh", "probe", "-o", "jsonpath={.spec.template.spec.nodeClassRef.group}")
		env.Kubectl(nil, "delete", "nodepools.v1.karpenter.sh", "probe", "--wait")
		return res.ExitCode == 0 && res.Stdout == karpenter.DefaultNodeClassGroup
	})
	return env
}

func getJSON(t *testing.T, env *testenv.Env, resource, name string) map[string]any {
	t.Helper()
	var obj map[string]any
	decodeJSON(t, env.MustKubectl(nil, "get", resource, name, "-o", "json"), &obj)
	return obj
}

func field(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func wantJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("%s:\n%s\nwant:\n%s", what, g, want)
	}
}

// onlyLastApplied checks that an object read as v1beta1 carries no
// annotation but kubectl's own: no compatibility or restore annotations.
func onlyLastApplied(t *testing.T, what string, obj map[string]any) {
	t.Helper()
	for key := range field(obj, "metadata", "annotations").(map[string]any) {
		if key != "kubectl.kubernetes.io/last-applied-configuration" {
			t.Errorf("%s read back with annotation %s", what, key)
		}
	}
}

func setLabel(obj map[string]any, key, value string) {
	meta := obj["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
		meta["labels"] = labels
	}
	labels[key] = value
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
