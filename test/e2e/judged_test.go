package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/cmd/karpgate/app"
	"github.com/karpgate/karpgate/cmd/karpgate/app/serve"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
	"github.com/karpgate/karpgate/internal/karpenter/installed"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

// repairReview asks /validate about a v1 NodePool whose budget paces
// Unhealthy, a reason from Karpenter v1.15 on. It goes to the webhook
// directly: through the API server, v1.0.8's own schema refuses the
// reason before karpgate is asked.
const repairReview = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
 "uid":"judged-1","operation":"CREATE","name":"repair",
 "kind":{"group":"karpenter.sh","version":"v1","kind":"NodePool"},
 "resource":{"group":"karpenter.sh","version":"v1","resource":"nodepools"},
 "userInfo":{"username":"e2e"},
 "object":{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"repair"},
  "spec":{"disruption":{"consolidateAfter":"0s","budgets":[{"nodes":"10%","reasons":["Unhealthy"]}]},
   "template":{"spec":{"expireAfter":"720h","requirements":[],
    "nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"}}}}}}}`

// TestServeJudgesByTheClusterKarpenterCRDs starts serve on a cluster with
// Karpenter v1.0.8's CRDs, then installs v1.15.1's over them, then
// v1.0.8's NodeClaim and EC2NodeClass CRDs beside v1.15.1's NodePool CRD,
// then v1.0.8's again: the webhook's verdict on the Unhealthy budget
// reason, the judged_info metric, /status and /explain follow without a
// restart of serve, and `karpgate version --cluster`, status and explain judge by
// the release serve judges by at every step.
func TestServeJudgesByTheClusterKarpenterCRDs(t *testing.T) {
	env, cluster := testenv.StartKarpgate(t, localcluster.Options{
		Release:    karpenterstack.V1_0_8,
		Controller: true,
		Serve:      func(o *serve.Options) { o.ReloadInterval = 100 * time.Millisecond },
	})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cluster.CAPEM)
	webhook := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	denial := func() string {
		resp, err := webhook.Post(cluster.WebhookURL+deploy.ValidatePath, "application/json", strings.NewReader(repairReview))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var review struct {
			Response struct {
				Status struct {
					Message string `json:"message"`
				} `json:"status"`
			} `json:"response"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&review); err != nil {
			t.Fatal(err)
		}
		return review.Response.Status.Message
	}
	judged := func() string { return seriesLine(t, cluster.MetricsURL, "karpgate_karpenter_judged_info{") }
	source := `source="CRDs in cluster ` + strings.TrimSuffix(env.Config.Host, "/") + `"`
	var served servedJudgement
	// serveJudgesAsCRDsSay reads serve's /status and /explain: both must
	// name the release the cluster's CRDs now belong to (read as serve's
	// watcher reads them: the CRDs are installed one by one, and a step in
	// between may read as the same version with another note), described
	// as described starts, and list the NodePool and its node.
	serveJudgesAsCRDsSay := func(described string) bool {
		crds, err := installed.ReadCluster(context.Background(), env.Config)
		if err != nil || crds.Judged == nil {
			t.Fatalf("reading the cluster's Karpenter CRDs: %+v, %v", crds, err)
		}
		want := crds.Judged.Summary()
		served = serveSays(t, cluster.MetricsURL)
		return strings.HasPrefix(want.DescribeWithNote(), described) && served.names(want) &&
			served.status.reasons() != nil && served.explain.reasons() != nil
	}
	// A NodePool for the lanes of serve's loop and of status, and a Node
	// for explain: they list the reasons of the release each judges by.
	createJudgedPool(t, env)

	if got := denial(); !strings.Contains(got, `KG204 spec.disruption.budgets[0].reasons[0]: "Unhealthy" is not a disruption reason of Karpenter v1.0.8`) {
		t.Fatalf("on v1.0.8's CRDs, /validate said %q; want KG204's denial naming v1.0.8", got)
	}
	if got := judged(); !strings.Contains(got, `version="v1.0.8"`) || !strings.Contains(got, source) || !strings.Contains(got, `exact="true"`) || !strings.HasSuffix(got, " 1") {
		t.Fatalf("on v1.0.8's CRDs: %q", got)
	}
	wait.For(t, "/status and /explain to name v1.0.8 and list the NodePool", func() bool {
		return serveJudgesAsCRDsSay("Karpenter v1.0.8, exactly (CRDs in cluster ")
	})
	checkVersionCluster(t, env, judged(), served, []versionClusterCase{
		{name: "v1.0.8's CRDs", golden: "version-cluster-v1.0.8.txt.golden", sameAsServe: true},
		{name: "karpgate.yaml's karpenterVersion", config: "apiVersion: karpgate.io/v1alpha1\nkind: Config\nkarpenterVersion: v1.14\n", golden: "version-cluster-config.txt.golden",
			wantVersion: "v1.14.3", wantReasons: []string{"Underutilized", "Empty", "Drifted"}},
	})

	// Karpenter's CRDs upgraded in place, as its chart does.
	installCRDs(t, env, testenv.CRDs(t, crdsource.KarpenterV1_15_1))
	wait.For(t, "karpgate to judge by v1.15.1", func() bool {
		return !strings.Contains(denial(), "KG204") && strings.Contains(judged(), `version="v1.15.1"`)
	})
	if got := judged(); !strings.Contains(got, source) {
		t.Errorf("after the upgrade: %q", got)
	}
	wait.For(t, "/status and /explain to name v1.15.1", func() bool {
		return serveJudgesAsCRDsSay("Karpenter v1.15.1, exactly (CRDs in cluster ")
	})
	checkVersionCluster(t, env, judged(), served, []versionClusterCase{
		{name: "v1.15.1's CRDs", golden: "version-cluster-v1.15.1.txt.golden", sameAsServe: true},
		{name: "a karpgate.yaml without karpenterVersion", config: "apiVersion: karpgate.io/v1alpha1\nkind: Config\n", golden: "version-cluster-config-unset.txt.golden", sameAsServe: true},
	})

	// Downgraded half way, as an interrupted chart rollback leaves it:
	// v1.0.8's NodeClaim and EC2NodeClass CRDs beside v1.15.1's NodePool
	// (and NodeOverlay). The NodePool CRD alone reads as v1.15.1 exactly;
	// serve judges by the closest release, inexactly, with the NodePool
	// CRD's own reasons, and so must the commands.
	v1_0 := testenv.CRDs(t, crdsource.KarpenterV1_0_8)
	var halfway []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range v1_0 {
		if crd.Name != "nodepools.karpenter.sh" {
			halfway = append(halfway, crd)
		}
	}
	installCRDs(t, env, halfway)
	wait.For(t, "karpgate to judge by v1.15.1 inexactly", func() bool {
		return strings.Contains(judged(), `exact="false"`) && strings.Contains(judged(), `version="v1.15.1"`)
	})
	wait.For(t, "/status and /explain to name ~v1.15.1", func() bool {
		return serveJudgesAsCRDsSay("Karpenter ~v1.15.1, the closest release karpgate knows (CRDs in cluster ")
	})
	checkVersionCluster(t, env, judged(), served, []versionClusterCase{
		{name: "a half-downgraded CRD set", sameAsServe: true},
	})

	// And downgraded: v1.0.8 has no NodeOverlay.
	if err := env.Client.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "nodeoverlays.karpenter.sh"}}); err != nil {
		t.Fatal(err)
	}
	installCRDs(t, env, v1_0)
	wait.For(t, "karpgate to judge by v1.0.8 again", func() bool {
		return strings.Contains(denial(), "KG204") && strings.Contains(judged(), `version="v1.0.8"`)
	})
}

// servedJudgement is what serve's /status and /explain say at one instant
// of the release judged, and the lanes of its loop for the NodePool and
// the node createJudgedPool makes.
type servedJudgement struct {
	status      servedReport
	explain     servedReport
	explainText string
}

// servedReport is the part of a /status or /explain JSON answer that
// names the release judged and its reasons.
type servedReport struct {
	Judged    *release.Summary `json:"judged"`
	NodePools []struct {
		Name    string   `json:"name"`
		Reasons []string `json:"reasons"`
	} `json:"nodePools"`
	Reasons []struct {
		Reason string `json:"reason"`
	} `json:"reasons"`
}

// serveSays reads serve's /status, and its /explain of the judged pool's
// node as JSON and as text; an answer that is not JSON (the loop's cache
// not synced yet) leaves its part empty.
func serveSays(t *testing.T, metricsURL string) servedJudgement {
	t.Helper()
	get := func(path string) []byte {
		resp, err := http.Get(metricsURL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return nil
		}
		return body
	}
	var s servedJudgement
	_ = json.Unmarshal(get(deploy.StatusPath), &s.status)
	explainPath := deploy.ExplainPath + "?node=node-" + judgedPool
	_ = json.Unmarshal(get(explainPath), &s.explain)
	s.explainText = string(get(explainPath + "&format=text"))
	return s
}

// names reports whether /status and /explain (JSON and text) all name
// judged.
func (s servedJudgement) names(judged release.Summary) bool {
	return s.status.Judged != nil && *s.status.Judged == judged && s.explain.Judged != nil && *s.explain.Judged == judged &&
		strings.Contains(s.explainText, "\njudged by "+judged.DescribeWithNote()+"\n")
}

// reasons are the lanes of serve's loop for the NodePool "judged" (/status)
// or the reasons /explain explains; nil until the loop lists them.
func (s servedReport) reasons() []string {
	for _, p := range s.NodePools {
		if p.Name == judgedPool {
			return p.Reasons
		}
	}
	var reasons []string
	for _, r := range s.Reasons {
		reasons = append(reasons, r.Reason)
	}
	return reasons
}

const judgedPool = "judged"

// createJudgedPool creates a v1 NodePool, valid under every release's CRDs,
// and a Node of it that no NodeClaim claims: enough for status and serve's
// loop to list the NodePool's lanes and for explain to list the reasons.
func createJudgedPool(t *testing.T, env *testenv.Env) {
	t.Helper()
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": judgedPool},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"requirements": []any{},
			"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}},
	}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + judgedPool, Labels: map[string]string{"karpenter.sh/nodepool": judgedPool}}}
	for _, obj := range []client.Object{pool, node} {
		if err := env.Client.Create(context.Background(), obj); err != nil {
			t.Fatalf("creating %s: %v", obj.GetName(), err)
		}
	}
}

// versionClusterCase is one `karpgate version --cluster` beside serve,
// with status and explain.
type versionClusterCase struct {
	name string
	// config is a karpgate.yaml to give with --config; "" gives none.
	config string
	// golden is version --cluster's text; "" compares none.
	golden string
	// sameAsServe: serve (which has no karpenterVersion) judges by the
	// same release, as karpgate_karpenter_judged_info says, with the same
	// reasons as its loop's lanes.
	sameAsServe bool
	// wantVersion and wantReasons, when serve judges otherwise, are the
	// release and reasons wanted.
	wantVersion string
	wantReasons []string
}

// checkVersionCluster runs `karpgate version --cluster` against env: its
// text is compared with a golden file, addresses hidden, and its JSON names
// the release that judgedInfo (serve's karpgate_karpenter_judged_info
// series) names, or tt.wantVersion. Status and explain, with the same
// --config, name the same release as version --cluster, and report the
// reasons of served (the lanes of serve's loop), or tt.wantReasons; when
// serve judges by the same release, its /status and /explain name it in
// the same words.
func checkVersionCluster(t *testing.T, env *testenv.Env, judgedInfo string, served servedJudgement, cases []versionClusterCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run("version --cluster: "+tt.name, func(t *testing.T) {
			dir := t.TempDir()
			kube := []string{"--kubeconfig", env.KubeconfigPath}
			if tt.config != "" {
				path := filepath.Join(dir, "karpgate.yaml")
				if err := os.WriteFile(path, []byte(tt.config), 0o644); err != nil {
					t.Fatal(err)
				}
				kube = append(kube, "--config", path)
			}
			execute := func(args ...string) string {
				args = append(args, kube...)
				var out, errOut bytes.Buffer
				if code := app.Execute(args, nil, &out, &errOut); code != 0 {
					t.Fatalf("karpgate %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
				}
				return out.String()
			}
			if tt.golden != "" {
				text := strings.ReplaceAll(hideAddresses(execute("version", "--cluster")), dir+string(filepath.Separator), "")
				golden(t, []byte(text), "judged", tt.golden)
			}

			var report struct {
				Judged    release.Summary `json:"judged"`
				DecidedBy string          `json:"decidedBy"`
			}
			if err := json.Unmarshal([]byte(execute("version", "--cluster", "-o", "json")), &report); err != nil {
				t.Fatal(err)
			}
			wantReasons, sameAsServe := served.status.reasons(), &served
			if !tt.sameAsServe {
				sameAsServe = nil
				wantReasons = tt.wantReasons
				if report.Judged.Version != tt.wantVersion || report.DecidedBy != "karpenterVersion" {
					t.Errorf("judged %+v decided by %s, want %s by karpenterVersion", report.Judged, report.DecidedBy, tt.wantVersion)
				}
			} else {
				series := fmt.Sprintf(`karpgate_karpenter_judged_info{exact="%t",source="%s",version="%s"} 1`, report.Judged.Exact, report.Judged.Source, report.Judged.Version)
				if series != judgedInfo || report.DecidedBy != "crds" {
					t.Errorf("version --cluster judges by %+v (decided by %s); serve says %s", report.Judged, report.DecidedBy, judgedInfo)
				}
			}
			checkStatusAndExplainJudge(t, execute, report.Judged, wantReasons, sameAsServe)
		})
	}
}

// checkStatusAndExplainJudge runs status and explain (text and JSON): they
// must name judged, the release version --cluster names, and report
// wantReasons; and so must serve's /status and /explain (served) when serve
// judges by the same release.
func checkStatusAndExplainJudge(t *testing.T, execute func(args ...string) string, judged release.Summary, wantReasons []string, served *servedJudgement) {
	t.Helper()
	var status struct {
		Judged    *release.Summary `json:"judged"`
		NodePools []struct {
			Name    string   `json:"name"`
			Reasons []string `json:"reasons"`
		} `json:"nodePools"`
	}
	if err := json.Unmarshal([]byte(execute("status", "-o", "json", "--nodepool", judgedPool)), &status); err != nil {
		t.Fatal(err)
	}
	var explained struct {
		Judged  *release.Summary `json:"judged"`
		Reasons []struct {
			Reason string `json:"reason"`
		} `json:"reasons"`
	}
	if err := json.Unmarshal([]byte(execute("explain", "node/node-"+judgedPool, "-o", "json")), &explained); err != nil {
		t.Fatal(err)
	}
	var statusReasons, explainReasons []string
	if len(status.NodePools) == 1 {
		statusReasons = status.NodePools[0].Reasons
	}
	for _, r := range explained.Reasons {
		explainReasons = append(explainReasons, r.Reason)
	}
	if status.Judged == nil || *status.Judged != judged || !slices.Equal(statusReasons, wantReasons) {
		t.Errorf("status judges by %+v with reasons %v; want %+v with %v", status.Judged, statusReasons, judged, wantReasons)
	}
	if explained.Judged == nil || *explained.Judged != judged || !slices.Equal(explainReasons, wantReasons) {
		t.Errorf("explain judges by %+v with reasons %v; want %+v with %v", explained.Judged, explainReasons, judged, wantReasons)
	}
	line := judged.DescribeWithNote()
	if out := execute("status"); !strings.Contains(out, "\nJudged by "+line+"\n") {
		t.Errorf("status does not say %q:\n%s", "Judged by "+line, out)
	}
	if out := execute("explain", "node/node-"+judgedPool); !strings.Contains(out, "\njudged by "+line+"\n") {
		t.Errorf("explain does not say %q:\n%s", "judged by "+line, out)
	}
	if served == nil {
		return
	}
	if got := served.status.Judged; got == nil || *got != judged {
		t.Errorf("serve's /status judges by %+v; status and version --cluster by %+v", got, judged)
	}
	if got := served.explain.Judged; got == nil || *got != judged || !slices.Equal(served.explain.reasons(), wantReasons) {
		t.Errorf("serve's /explain judges by %+v with reasons %v; want %+v with %v", got, served.explain.reasons(), judged, wantReasons)
	}
	if !strings.Contains(served.explainText, "\njudged by "+line+"\n") {
		t.Errorf("serve's /explain?format=text does not say %q:\n%s", "judged by "+line, served.explainText)
	}
}

// installCRDs creates crds, or replaces those that exist, as Karpenter's
// chart upgrades them.
func installCRDs(t *testing.T, env *testenv.Env, crds []*apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	ctx := context.Background()
	for _, crd := range crds {
		crd := crd.DeepCopy()
		err := env.Client.Create(ctx, crd)
		if apierrors.IsAlreadyExists(err) {
			current := crd.DeepCopy()
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), current); err != nil {
				t.Fatal(err)
			}
			crd.ResourceVersion = current.ResourceVersion
			err = env.Client.Update(ctx, crd)
		}
		if err != nil {
			t.Fatalf("installing %s: %v", crd.Name, err)
		}
	}
}

// seriesLine is the one line of /metrics that starts with prefix, or "".
func seriesLine(t *testing.T, metricsURL, prefix string) string {
	t.Helper()
	var found []string
	for _, line := range bytes.Split(metricsPage(t, metricsURL), []byte("\n")) {
		if bytes.HasPrefix(line, []byte(prefix)) {
			found = append(found, string(line))
		}
	}
	if len(found) > 1 {
		t.Fatalf("more than one series %s...: %q", prefix, found)
	}
	return strings.Join(found, "")
}
