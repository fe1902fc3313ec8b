package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/karpgate/karpgate/cmd/karpgate/app"
	"github.com/karpgate/karpgate/disruption/controller"
	"github.com/karpgate/karpgate/disruption/explain"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/internal/karpenter/installed"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

func object(s string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(s), &u.Object); err != nil {
		panic(fmt.Sprintf("%v in %s", err, s))
	}
	return u
}

// member is a NodeClaim and its Node in a NodePool, written as Karpenter
// and the kubelet write them. extra edits the JSON before it is parsed.
type member struct {
	name, pool       string
	drifted          bool
	initialized      bool
	nodeAnnotations  string
	claimSpecExtra   string
	claimFinalizers  string
	consolidatableAt time.Time
}

func (m member) objects(now time.Time) []*unstructured.Unstructured {
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	conditions := []string{
		fmt.Sprintf(`{"type":"Launched","status":"True","reason":"Launched","message":"","lastTransitionTime":%q}`, stamp(now.Add(-48*time.Hour))),
		fmt.Sprintf(`{"type":"Registered","status":"True","reason":"Registered","message":"","lastTransitionTime":%q}`, stamp(now.Add(-48*time.Hour))),
	}
	nodeLabels := fmt.Sprintf(`"karpenter.sh/nodepool":%q,"karpenter.sh/registered":"true"`, m.pool)
	if m.initialized {
		conditions = append(conditions, fmt.Sprintf(`{"type":"Initialized","status":"True","reason":"Initialized","message":"","lastTransitionTime":%q}`, stamp(now.Add(-47*time.Hour))))
		nodeLabels += `,"karpenter.sh/initialized":"true"`
	}
	if !m.consolidatableAt.IsZero() {
		conditions = append(conditions, fmt.Sprintf(`{"type":"Consolidatable","status":"True","reason":"Consolidatable","message":"","lastTransitionTime":%q}`, stamp(m.consolidatableAt)))
	}
	if m.drifted {
		conditions = append(conditions, fmt.Sprintf(`{"type":"Drifted","status":"True","reason":"NodePoolDrifted","message":"","lastTransitionTime":%q}`, stamp(now.Add(-2*time.Hour))))
	}
	pid := "aws:///us-east-1a/i-" + m.name
	claim := object(fmt.Sprintf(`{"apiVersion":"karpenter.sh/v1","kind":"NodeClaim","metadata":{"name":%q,"labels":{"karpenter.sh/nodepool":%q}%s},
		"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},"requirements":[]%s},
		"status":{"providerID":%q,"nodeName":%q,"conditions":[%s]}}`,
		m.name, m.pool, m.claimFinalizers, m.claimSpecExtra, pid, "node-"+m.name, strings.Join(conditions, ",")))
	node := object(fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":%q,"labels":{%s}%s},"spec":{"providerID":%q},
		"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"","lastHeartbeatTime":null,"lastTransitionTime":null}]}}`,
		"node-"+m.name, nodeLabels, m.nodeAnnotations, pid))
	return []*unstructured.Unstructured{claim, node}
}

func podObject(name, node, labels, extraMeta string) *unstructured.Unstructured {
	return object(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":"shop","labels":{%s}%s},
		"spec":{"nodeName":%q,"containers":[{"name":"app","image":"registry.example.com/app:1"}]},
		"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":null}]}}`, name, labels, extraMeta, node))
}

// explainCluster: NodePool shop (every node allowed) holds one member per
// blocking cause; NodePool window holds drift for a daily window that
// opened an hour before now and lasts three hours.
func explainCluster(now time.Time) []*unstructured.Unstructured {
	windowStart := now.Add(-time.Hour).Truncate(time.Minute)
	objs := []*unstructured.Unstructured{
		object(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop"}}`),
		object(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"shop"},"spec":{"disruption":{"consolidateAfter":"30s","budgets":[{"nodes":"100%"}]},
			"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},"requirements":[]}}}}`),
		object(fmt.Sprintf(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"window"},"spec":{"disruption":{"consolidateAfter":"30s",
			"budgets":[{"nodes":"100%%"},{"nodes":"0","schedule":"%d %d * * *","duration":"3h","reasons":["Drifted"]}]},
			"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},"requirements":[]}}}}`, windowStart.Minute(), windowStart.Hour())),
	}
	consolidatable := now.Add(-time.Hour)
	for _, m := range []member{
		{name: "ready", pool: "shop", drifted: true, initialized: true, consolidatableAt: consolidatable},
		{name: "uninit", pool: "shop", drifted: true},
		{name: "dnd-node", pool: "shop", drifted: true, initialized: true, nodeAnnotations: `,"annotations":{"karpenter.sh/do-not-disrupt":"true"}`},
		{name: "dnd-pod", pool: "shop", drifted: true, initialized: true, consolidatableAt: consolidatable},
		{name: "pdb", pool: "shop", drifted: true, initialized: true, consolidatableAt: consolidatable},
		{name: "tgp", pool: "shop", drifted: true, initialized: true, claimSpecExtra: `,"terminationGracePeriod":"1h"`},
		{name: "deleting", pool: "shop", drifted: true, initialized: true, claimFinalizers: `,"finalizers":["karpgate.io/e2e"]`},
		{name: "steady", pool: "shop", initialized: true, consolidatableAt: consolidatable},
		{name: "held", pool: "window", drifted: true, initialized: true},
	} {
		objs = append(objs, m.objects(now)...)
	}
	return append(objs,
		podObject("batch-0", "node-dnd-pod", `"app":"batch"`, `,"annotations":{"karpenter.sh/do-not-disrupt":"true"}`),
		podObject("web-0", "node-pdb", `"app":"web"`, ""),
		podObject("agent-pdb", "node-pdb", `"app":"agent"`, `,"ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"agent","uid":"00000000-0000-4000-8000-000000000001"}]`),
		podObject("web-1", "node-tgp", `"app":"web"`, ""),
		// The disruption controller of kube-controller-manager writes a
		// PDB's status; the test writes what it would: no disruption allowed.
		object(`{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web","namespace":"shop"},"spec":{"minAvailable":2,"selector":{"matchLabels":{"app":"web"}}},
			"status":{"disruptionsAllowed":0,"currentHealthy":2,"desiredHealthy":2,"expectedPods":2,"observedGeneration":1}}`),
	)
}

// explainKinds is "every:...", then per reason "Reason:..." of stop kinds.
func explainKinds(e explain.Explanation) []string {
	var every []string
	for _, s := range e.StopsEveryReason {
		every = append(every, string(s.Kind))
	}
	out := []string{"every:" + strings.Join(every, ",")}
	for _, r := range e.Reasons {
		var ks []string
		for _, s := range r.Stops {
			ks = append(ks, string(s.Kind))
		}
		out = append(out, string(r.Reason)+":"+strings.Join(ks, ","))
	}
	return out
}

// TestExplain runs `karpgate explain` against a real API server for each
// blocking cause, then checks that the loop's /explain, answering from its
// trimmed cache, says exactly the same.
func TestExplain(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	env := testenv.Start(t, testenv.CRDs(t, crdsource.KarpenterV1_15_1))
	now := time.Now().UTC().Truncate(time.Second)
	createWithStatus(t, env.Client, explainCluster(now))
	deleting := &unstructured.Unstructured{}
	deleting.SetAPIVersion("karpenter.sh/v1")
	deleting.SetKind("NodeClaim")
	deleting.SetName("deleting")
	if err := env.Client.Delete(context.Background(), deleting); err != nil {
		t.Fatal(err) // its finalizer keeps it, with a deletionTimestamp
	}
	at := now.Format(time.RFC3339)
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := app.Execute(append(args, "--kubeconfig", env.KubeconfigPath, "--at", at), nil, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	tests := []struct {
		target string
		want   []string // every, Underutilized, Empty, Drifted, Unhealthy (v1.15)
		text   string   // a line of the text output
	}{
		{"nodeclaim/ready", []string{"every:", "Underutilized:empty", "Empty:", "Drifted:", "Unhealthy:healthy"}, "Drifted: candidate now"},
		{"nodeclaim/uninit", []string{"every:not-initialized", "Underutilized:empty,not-consolidatable", "Empty:not-consolidatable", "Drifted:", "Unhealthy:healthy"}, "is not initialized"},
		{"nodeclaim/dnd-node", []string{"every:do-not-disrupt-node", "Underutilized:empty,not-consolidatable", "Empty:not-consolidatable", "Drifted:", "Unhealthy:healthy"},
			`node node-dnd-node has karpenter.sh/do-not-disrupt: "true"`},
		{"nodeclaim/dnd-pod", []string{"every:", "Underutilized:pods", "Empty:not-empty,pods", "Drifted:pods", "Unhealthy:healthy"}, `pod shop/batch-0 has karpenter.sh/do-not-disrupt: "true"`},
		{"node/node-pdb", []string{"every:", "Underutilized:pods", "Empty:not-empty,pods", "Drifted:pods", "Unhealthy:healthy"},
			"PodDisruptionBudget shop/web allows 0 disruptions (minAvailable 2, 2 of 2 expected pods healthy, 2 needed) and selects pod shop/web-0"},
		{"nodeclaim/tgp", []string{"every:", "Underutilized:not-consolidatable,pods", "Empty:not-empty,not-consolidatable,pods", "Drifted:", "Unhealthy:healthy"},
			"terminationGracePeriod (1h0m0s) bounds the drain: Karpenter drifts the node anyway"},
		{"nodeclaim/deleting", []string{"every:deleting", "Underutilized:empty,not-consolidatable", "Empty:not-consolidatable", "Drifted:", "Unhealthy:healthy"}, "it is being deleted"},
		{"nodeclaim/steady", []string{"every:", "Underutilized:empty", "Empty:", "Drifted:not-drifted", "Unhealthy:healthy"}, "not drifted: its NodeClaim has no Drifted=True condition"},
		{"nodeclaim/held", []string{"every:", "Underutilized:empty,not-consolidatable", "Empty:not-consolidatable", "Drifted:budget", "Unhealthy:healthy"},
			"allows no Drifted disruption now; next allows one at " + now.Add(-time.Hour).Truncate(time.Minute).Add(3*time.Hour).Format("2006-01-02 15:04 UTC")},
	}
	cli := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			code, out, errOut := run("explain", tt.target, "-o", "json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var e explain.Explanation
			if err := json.Unmarshal([]byte(out), &e); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
			// The command names the release it judges by, as the loop's
			// /explain must too.
			if j := e.Judged; j == nil || j.Version != "v1.15.1" || !j.Exact || j.Source != "CRDs in cluster "+strings.TrimSuffix(env.Config.Host, "/") {
				t.Errorf("judged by %+v, want v1.15.1 from the cluster's CRDs", j)
			}
			cli[tt.target] = out
			if got := explainKinds(e); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("stops = %q\n        want %q", got, tt.want)
			}
			if e.Expiry.ExpireAfter != "720h" || e.Expiry.ExpiresAt == nil || e.Expiry.ExpiresAt.Sub(now) < 690*time.Hour {
				t.Errorf("expiry from the CRD default expireAfter: %+v", e.Expiry)
			}
			code, out, errOut = run("explain", tt.target, "--timezone", "Europe/Paris")
			if code != 0 || !strings.Contains(out, tt.text) || !strings.Contains(out, "Karpenter computes budget windows in UTC") {
				t.Errorf("text (exit %d, %s) lacks %q:\n%s", code, errOut, tt.text, out)
			}
		})
	}
	if code, _, errOut := run("explain", "nodeclaim/nope"); code != app.ExitUsage || !strings.Contains(errOut, "NodeClaim nope: not found") {
		t.Errorf("a missing NodeClaim: exit %d, %q", code, errOut)
	}

	// The loop's /explain answers from its cache, at the same instant.
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	// It judges by the cluster's CRDs as serve does, read as serve reads them.
	crds, err := installed.ReadCluster(context.Background(), env.Config)
	if err != nil || crds.Judged == nil {
		t.Fatalf("the cluster's Karpenter CRDs: %+v, %v", crds, err)
	}
	loop := startLoop(t, env, manager.Options{}, controller.Options{Name: "karpgate-explain", Registerer: prometheus.NewRegistry(),
		Clock: clocktesting.NewFakeClock(now), Location: func() *time.Location { return paris },
		Judged: func() release.Judged { return *crds.Judged }})
	for _, tt := range tests {
		kind, name, _ := strings.Cut(tt.target, "/")
		wait.ForNoError(t, "/explain of "+tt.target+" equals karpgate explain", func() error {
			rec := httptest.NewRecorder()
			loop.loop.ExplainHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/explain?"+kind+"="+name, nil))
			if rec.Code != 200 || rec.Body.String() != cli[tt.target] {
				return fmt.Errorf("%d:\n%s\nwant\n%s", rec.Code, rec.Body, cli[tt.target])
			}
			return nil
		})
	}
	rec := httptest.NewRecorder()
	loop.loop.ExplainHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/explain?nodeclaim=held&format=text", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Drifted: NOT a candidate") || !strings.Contains(rec.Body.String(), "CE") ||
		!strings.Contains(rec.Body.String(), "\njudged by "+crds.Judged.Summary().DescribeWithNote()+"\n") {
		t.Errorf("/explain as text in karpgate.yaml's zone = %d:\n%s", rec.Code, rec.Body)
	}
	for query, code := range map[string]int{"": 400, "node=a&nodeclaim=b": 400, "node=nope": 404, "node=node-ready&format=yaml": 400} {
		rec := httptest.NewRecorder()
		loop.loop.ExplainHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/explain?"+query, nil))
		if rec.Code != code {
			t.Errorf("/explain?%s = %d, want %d: %s", query, rec.Code, code, rec.Body)
		}
	}
	// status counts the drifted nodes whose pods hold the rollout.
	var out, errOut bytes.Buffer
	if code := app.Execute([]string{"status", "--kubeconfig", env.KubeconfigPath, "--nodepool", "shop"}, nil, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "shop: 2 drifted node(s) run pods that block eviction (karpenter.sh/do-not-disrupt, or a PodDisruptionBudget that allows 0): node-dnd-pod, node-pdb") {
		t.Errorf("karpgate status (exit %d, %s):\n%s", code, errOut.String(), out.String())
	}
}
