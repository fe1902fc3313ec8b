package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/test/wait"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/cmd/karpgate/app/serve"
	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
	"github.com/karpgate/karpgate/test/testenv"
)

// TestAdmissionWebhooks drives karpgate's webhooks with the real kubectl
// against one local cluster (Karpenter v1.0.8's CRDs, karpgate serve
// in-process with the configuration `karpgate run` uses): what kubectl
// prints for denials, warnings and mutations, with and without
// --dry-run=server, v1beta1 manifests end to end (a DELETE included) and
// judged as stored (stored_form_test.go), malformed reviews,
// configuration reload, metrics and readiness.
func TestAdmissionWebhooks(t *testing.T) {
	env, cluster := testenv.StartKarpgate(t, localcluster.Options{
		// v1.0.8's CRDs: the test converts v1beta1 manifests end to end.
		Release: karpenterstack.V1_0_8,
		Serve:   func(o *serve.Options) { o.ReloadInterval = 100 * time.Millisecond },
	})
	// apply runs kubectl apply with and without --dry-run=server and checks
	// both give the same verdict and messages.
	apply := func(t *testing.T, file string, wantExit int, wantStderr ...string) {
		t.Helper()
		for _, dryRun := range []bool{true, false} {
			args := []string{"apply", "-f", file}
			if dryRun {
				args = append(args, "--dry-run=server")
			}
			res := env.Kubectl(nil, args...)
			if res.ExitCode != wantExit {
				t.Fatalf("kubectl %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), res.ExitCode, wantExit, res.Stdout, res.Stderr)
			}
			for _, want := range wantStderr {
				if !strings.Contains(res.Stderr, want) {
					t.Errorf("kubectl %s: stderr lacks\n%s\ngot:\n%s", strings.Join(args, " "), want, res.Stderr)
				}
			}
		}
	}

	t.Run("@latest in production is denied with the rule and the fix", func(t *testing.T) {
		apply(t, "../../examples/ec2nodeclass-production-latest.yaml", 1,
			`admission webhook "validate.karpgate.io" denied the request: EC2NodeClass/production-latest breaks 1 karpgate rule:`+"\n"+
				`KG101 spec.amiSelectorTerms[0].alias: alias "al2023@latest" follows every AMI release, so each release drifts and replaces every node of this production EC2NodeClass `+
				`(fix: Pin a version you have tested, such as al2023@v20240807)`)
		if res := env.Kubectl(nil, "get", "ec2nodeclass", "production-latest"); res.ExitCode == 0 {
			t.Fatal("the denied EC2NodeClass exists")
		}
	})

	t.Run("@latest outside production is admitted with a warning", func(t *testing.T) {
		apply(t, "../testdata/admission/ec2nodeclass-latest-staging.yaml", 0,
			`Warning: KG102 spec.amiSelectorTerms[0].alias: alias "al2023@latest" follows every AMI release: each release drifts and replaces every node of this EC2NodeClass (fix: Pin a version you have tested, such as al2023@v20240807)`)
		env.MustKubectl(nil, "get", "ec2nodeclass", "staging-latest")
	})

	t.Run("a budget schedule Karpenter cannot parse is denied with the parser's message", func(t *testing.T) {
		apply(t, "../testdata/admission/nodepool-weekend-freeze.yaml", 1,
			`KG201 spec.disruption.budgets[0].schedule: "0 9 * * sat-sun" is not a valid cron: beginning of range (6) beyond end of range (0)`,
			`(fix: Use "0 9 * * sat,sun".)`)
	})

	t.Run("the mutation fills nodeClassRef group and kind, and says so", func(t *testing.T) {
		const warning = "Warning: KG701 spec.template.spec.nodeClassRef: karpgate set group: karpenter.k8s.aws and kind: EC2NodeClass, which v1 requires and the manifest left out"
		dry := env.Kubectl(nil, "apply", "-f", "../testdata/admission/nodepool-name-only-ref.yaml", "--dry-run=server", "-o", "json")
		if dry.ExitCode != 0 || !strings.Contains(dry.Stderr, warning) {
			t.Fatalf("dry run: exit %d\n%s", dry.ExitCode, dry.Stderr)
		}
		var obj map[string]any
		decodeJSON(t, dry.Stdout, &obj)
		wantJSON(t, "dry-run nodeClassRef", field(obj, "spec", "template", "spec", "nodeClassRef"), `{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}`)
		apply(t, "../testdata/admission/nodepool-name-only-ref.yaml", 0, warning)
		wantJSON(t, "stored nodeClassRef", field(getJSON(t, env, "nodepools.v1.karpenter.sh", "name-only-ref"), "spec", "template", "spec", "nodeClassRef"),
			`{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}`)
	})

	t.Run("an update that replaces every node warns", func(t *testing.T) {
		patch := `{"spec":{"template":{"metadata":{"labels":{"team":"search"}}}}}`
		for _, extra := range [][]string{{"--dry-run=server"}, nil} {
			res := env.Kubectl(nil, append([]string{"patch", "nodepool", "name-only-ref", "--type", "merge", "-p", patch}, extra...)...)
			if res.ExitCode != 0 || !strings.Contains(res.Stderr, "Warning: KG601 spec.template.metadata.labels: this update changes spec.template.metadata.labels, which Karpenter hashes: every node of NodePool/name-only-ref drifts and is replaced") {
				t.Fatalf("kubectl patch %v: exit %d\n%s", extra, res.ExitCode, res.Stderr)
			}
		}
	})

	t.Run("v1beta1 manifests are converted end to end", func(t *testing.T) {
		apply(t, "../testdata/conversion/v1beta1.yaml", 0,
			"Warning: KG401 apiVersion: NodePool is v1beta1 (karpenter.sh/v1beta1)",
			"Warning: KG401 apiVersion: EC2NodeClass is v1beta1 (karpenter.k8s.aws/v1beta1)",
			// Judged as stored too: the kubelet block becomes Karpenter's annotation.
			"Warning: KG406 spec.template.spec.kubelet: as stored (karpenter.sh/v1) metadata.annotations[compatibility.karpenter.sh/v1beta1-kubelet-conversion]: Karpenter uses this annotation's kubelet settings")
		pool := getJSON(t, env, "nodepools.v1.karpenter.sh", "default")
		wantJSON(t, "v1 nodeClassRef", field(pool, "spec", "template", "spec", "nodeClassRef"), `{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}`)
		if got := field(pool, "spec", "disruption", "consolidationPolicy"); got != "WhenEmptyOrUnderutilized" {
			t.Errorf("v1 consolidationPolicy = %v", got)
		}
		wantJSON(t, "v1 amiSelectorTerms", field(getJSON(t, env, "ec2nodeclasses.v1.karpenter.k8s.aws", "default"), "spec", "amiSelectorTerms"), `[{"alias": "al2@latest"}]`)
	})

	// The webhook is registered for DELETE at v1 only; with matchPolicy
	// Equivalent the API server converts a v1beta1 DELETE to v1 for it.
	t.Run("a v1beta1 DELETE of a frozen NodePool is judged at v1 and refused", func(t *testing.T) {
		if code, out := karpgateRun(t, env, "freeze", "default", "--reason", "incident 42"); code != 0 {
			t.Fatalf("freeze: exit %d\n%s", code, out)
		}
		res := env.Kubectl(nil, "delete", "nodepools.v1beta1.karpenter.sh", "default", "--wait=false")
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, "NodePool default is frozen: karpgate's freeze (since ") {
			t.Fatalf("kubectl delete at v1beta1: exit %d\n%s", res.ExitCode, res.Stderr)
		}
		env.MustKubectl(nil, "get", "nodepools.v1.karpenter.sh", "default")
	})

	judgedAsStored(t, env)

	t.Run("malformed AdmissionReview bodies get a clear error", func(t *testing.T) {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(cluster.CAPEM)
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		post := func(path string, body []byte) (int, []byte) {
			resp, err := c.Post(cluster.WebhookURL+path, "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, b
		}
		for _, path := range []string{"/validate", "/mutate"} {
			for _, body := range []string{"", "{", "kind: AdmissionReview", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`} {
				code, answer := post(path, []byte(body))
				var review struct {
					Response struct {
						Allowed bool `json:"allowed"`
						Status  struct {
							Code    int    `json:"code"`
							Message string `json:"message"`
						} `json:"status"`
					} `json:"response"`
				}
				if err := json.Unmarshal(answer, &review); err != nil || code != http.StatusOK {
					t.Fatalf("%s %q: HTTP %d %s", path, body, code, answer)
				}
				if r := review.Response; r.Allowed || r.Status.Code != http.StatusBadRequest || r.Status.Message == "" {
					t.Errorf("%s %q: %+v, want a refusal with code 400 and a message", path, body, r)
				}
			}
		}
		code, answer := post("/validate", bytes.Repeat([]byte(" "), 4<<20))
		if code != http.StatusRequestEntityTooLarge || !strings.Contains(string(answer), "over the 3145728-byte limit (--max-request-bytes)") {
			t.Fatalf("4 MiB body: HTTP %d %s", code, answer)
		}
		apply(t, "../../examples/ec2nodeclass-production-pinned.yaml", 0) // still serving
	})

	t.Run("karpgate.yaml reloads without a restart and a broken one is refused", func(t *testing.T) {
		good, err := os.ReadFile(cluster.ConfigPath)
		if err != nil {
			t.Fatal(err)
		}
		write := func(content string) { replaceFile(t, cluster.ConfigPath, []byte(content)) }
		// A new object: an update of the existing one would only warn,
		// because a denial the object already had does not block updates.
		staging := bytes.ReplaceAll(readTestdata(t, "admission", "ec2nodeclass-latest-staging.yaml"), []byte("name: staging-latest"), []byte("name: staging-latest-2"))
		stagingDenied := func() bool {
			res := env.Kubectl(staging, "apply", "-f", "-", "--dry-run=server")
			return res.ExitCode == 1 && strings.Contains(res.Stderr, "KG101 spec.amiSelectorTerms[0].alias")
		}
		write(string(good) + "environment: production\n")
		wait.For(t, "the whole cluster to count as production", stagingDenied)
		failures := metricValue(t, cluster.MetricsURL, `karpgate_config_reload_total{result="failure"}`)
		write("environment: production\nrules: {KG101: {action: warn}}\n")
		wait.For(t, "the broken file to be refused", func() bool {
			return metricValue(t, cluster.MetricsURL, `karpgate_config_reload_total{result="failure"}`) > failures
		})
		if !stagingDenied() {
			t.Fatal("the last good configuration was not kept")
		}
		write(string(good))
		wait.For(t, "the original configuration to be back", func() bool { return !stagingDenied() })
	})

	t.Run("metrics and readiness", func(t *testing.T) {
		for _, series := range []string{
			`karpgate_admission_decisions_total{action="deny",dry_run="true",rule="KG101",webhook="validate"}`,
			`karpgate_admission_decisions_total{action="deny",dry_run="false",rule="KG101",webhook="validate"}`,
			`karpgate_admission_decisions_total{action="mutate",dry_run="false",rule="KG701",webhook="mutate"}`,
			`karpgate_admission_requests_total{dry_run="false",kind="EC2NodeClass",operation="CREATE",verdict="denied",webhook="validate"}`,
			`karpgate_admission_requests_total{dry_run="false",kind="NodePool",operation="DELETE",verdict="denied",webhook="validate"}`,
			`karpgate_webhook_rejected_requests_total{endpoint="/validate",reason="too_large"}`,
			`controller_runtime_webhook_latency_seconds_count{webhook="/validate"}`,
			`controller_runtime_webhook_latency_seconds_count{webhook="/convert"}`,
		} {
			if metricValue(t, cluster.MetricsURL, series) < 1 {
				t.Errorf("%s is not counted", series)
			}
		}
		resp, err := http.Get(cluster.HealthURL + "/readyz?verbose")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "[+]policies ok") || !strings.Contains(string(body), "[+]webhook ok") {
			t.Fatalf("/readyz: %d\n%s", resp.StatusCode, body)
		}
	})
}

// metricsPage is karpgate's /metrics page. A /metrics that fails to
// gather answers 500 with the reason; read as "no such series" it turned
// into a wait that timed out minutes later, so it fails the test.
func metricsPage(t *testing.T, metricsURL string) []byte {
	t.Helper()
	resp, err := http.Get(metricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s/metrics: %v", metricsURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/metrics: %s\n%s", metricsURL, resp.Status, body)
	}
	return body
}

// metricValue reads one series from a /metrics page; 0 when absent.
func metricValue(t *testing.T, metricsURL, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(string(metricsPage(t, metricsURL)), "\n") {
		if value, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			if err := json.Unmarshal([]byte(value), &v); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	return 0
}
