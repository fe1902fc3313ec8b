package controller

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// judgedBy is a known release as source chose it (inexactly for a version
// newer than karpgate knows).
func judgedBy(t *testing.T, version, source string) release.Judged {
	t.Helper()
	r, exact, err := release.Lookup(version)
	if err != nil {
		t.Fatal(err)
	}
	return release.ForRelease(r, exact, source)
}

// newEndpoints is the loop's /status and /explain over one fake client
// standing for its synced cache, at monday0830.
func newEndpoints(t *testing.T, opts Options, objects ...client.Object) *Loop {
	t.Helper()
	b := fake.NewClientBuilder().WithScheme(state.NewScheme()).WithObjects(objects...)
	if err := addIndexes(context.Background(), builderIndexer{b}); err != nil {
		t.Fatal(err)
	}
	r, _, _ := newReconciler(t, opts)
	return &Loop{cache: b.Build(), synced: func(context.Context) bool { return true }, opts: r.opts}
}

// /status and /explain name the release the loop judges by, in the words
// of `karpgate status` and `karpgate explain`, and list its reasons, from
// one reading of Options.Judged: the cases share one loop whose release
// changes between requests, as serve's does when the CRDs or karpgate.yaml
// change.
func TestEndpointsNameTheReleaseJudged(t *testing.T) {
	v108, _, err := release.Lookup("v1.0.8")
	if err != nil {
		t.Fatal(err)
	}
	crds := release.ForCRDs(v108.Facts.Schema, "CRDs in cluster https://203.0.113.10:6443")
	config := judgedBy(t, "v1.14", "karpgate.yaml karpenterVersion")
	newer := judgedBy(t, "v1.99", "karpgate.yaml karpenterVersion")
	v10 := []string{"Underutilized", "Empty", "Drifted"}
	newest := []string{"Underutilized", "Empty", "Drifted", "Unhealthy"}
	tests := []struct {
		name   string
		judged *release.Judged // nil: Options.Judged unset
		path   string
		// want is the judged line of the text, or the judged field's
		// Describe with its note for JSON; "" wants none.
		want        string
		wantReasons []string
	}{
		{"status by the cluster's CRDs", &crds, "/status",
			"Karpenter v1.0.8, exactly (CRDs in cluster https://203.0.113.10:6443)", v10},
		{"explain by the cluster's CRDs", &crds, "/explain?nodeclaim=claim-a",
			"Karpenter v1.0.8, exactly (CRDs in cluster https://203.0.113.10:6443)", v10},
		{"explain as text by the cluster's CRDs", &crds, "/explain?nodeclaim=claim-a&format=text",
			"judged by Karpenter v1.0.8, exactly (CRDs in cluster https://203.0.113.10:6443)", v10},
		{"status by karpgate.yaml", &config, "/status?nodepool=pool",
			"Karpenter v1.14.3, exactly (karpgate.yaml karpenterVersion)", v10},
		{"explain as text by karpgate.yaml", &config, "/explain?node=node-a&format=text",
			"judged by Karpenter v1.14.3, exactly (karpgate.yaml karpenterVersion)", v10},
		{"status by a release newer than karpgate knows", &newer, "/status",
			"Karpenter ~" + release.Newest().Version.String() + ", the closest release karpgate knows (karpgate.yaml karpenterVersion): " + newer.Note, newest},
		{"explain as text by a release newer than karpgate knows", &newer, "/explain?nodeclaim=claim-a&format=text",
			"judged by Karpenter ~" + release.Newest().Version.String() + ", the closest release karpgate knows (karpgate.yaml karpenterVersion): " + newer.Note, newest},
		{"status, no release given", nil, "/status", "", newest},
		{"explain, no release given", nil, "/explain?nodeclaim=claim-a", "", newest},
		{"explain as text, no release given", nil, "/explain?nodeclaim=claim-a&format=text", "", newest},
	}
	objects := func() []client.Object {
		nc := claim("claim-a", "pool", monday0830.Add(-time.Hour), false)
		nc.Status.NodeName, nc.Status.ProviderID = "node-a", "kwok://node-a"
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: map[string]string{karpenter.NodePoolLabel: "pool"}},
			Spec: corev1.NodeSpec{ProviderID: "kwok://node-a"}}
		return []client.Object{pool("pool", map[string]any{"nodes": "10%"}), nc, n}
	}
	var current atomic.Pointer[release.Judged]
	judging := newEndpoints(t, Options{Judged: func() release.Judged { return *current.Load() }}, objects()...)
	unjudged := newEndpoints(t, Options{}, objects()...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loop := unjudged
			if tt.judged != nil {
				current.Store(tt.judged)
				loop = judging
			}
			handler := loop.StatusHandler()
			if strings.HasPrefix(tt.path, "/explain") {
				handler = loop.ExplainHandler()
			}
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("%s = %d: %s", tt.path, rec.Code, rec.Body)
			}
			body := rec.Body.String()
			if strings.HasSuffix(tt.path, "format=text") {
				checkJudgedText(t, body, tt.want, tt.wantReasons)
				return
			}
			checkJudgedJSON(t, body, tt.want, tt.wantReasons)
		})
	}
}

// checkJudgedJSON: body's judged field, described with its note, is want
// (absent for ""), and its reasons (of the one NodePool for /status) are
// wantReasons.
func checkJudgedJSON(t *testing.T, body, want string, wantReasons []string) {
	t.Helper()
	var got struct {
		Judged    *release.Summary `json:"judged"`
		NodePools []struct {
			Reasons []string `json:"reasons"`
		} `json:"nodePools"`
		Reasons []struct {
			Reason string `json:"reason"`
		} `json:"reasons"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	var reasons []string
	for _, p := range got.NodePools {
		reasons = p.Reasons
	}
	for _, r := range got.Reasons {
		reasons = append(reasons, r.Reason)
	}
	switch {
	case want == "" && got.Judged != nil:
		t.Errorf("judged %+v, want none", got.Judged)
	case want != "" && (got.Judged == nil || got.Judged.DescribeWithNote() != want):
		t.Errorf("judged %+v, want %q:\n%s", got.Judged, want, body)
	}
	if !slices.Equal(reasons, wantReasons) {
		t.Errorf("reasons %v, want %v", reasons, wantReasons)
	}
}

// checkJudgedText: body's third line is want (no "judged by" line for ""),
// and it explains wantReasons.
func checkJudgedText(t *testing.T, body, want string, wantReasons []string) {
	t.Helper()
	lines := strings.Split(body, "\n")
	switch {
	case want == "" && strings.Contains(body, "\njudged by "):
		t.Errorf("a judged by line, want none:\n%s", body)
	case want != "" && (len(lines) < 3 || lines[2] != want):
		t.Errorf("third line is not %q:\n%s", want, body)
	}
	var reasons []string
	for _, line := range lines {
		if name, _, ok := strings.Cut(line, ": "); ok && (strings.HasSuffix(line, ": candidate now") || strings.HasSuffix(line, ": NOT a candidate")) {
			reasons = append(reasons, name)
		}
	}
	if !slices.Equal(reasons, wantReasons) {
		t.Errorf("explains %v, want %v:\n%s", reasons, wantReasons, body)
	}
}
