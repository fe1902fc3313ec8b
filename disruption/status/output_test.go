package status

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/budget/holdrecord"
	goldenfile "github.com/karpgate/karpgate/test/golden"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// golden compares got with testdata/<name>.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Assert(t, filepath.Join("testdata", name), got)
}

// fleet is a cluster with one NodePool of each kind the table shows.
func fleet(t *testing.T) state.Snapshot {
	var s state.Snapshot
	add := func(np *state.NodePool, members ...member) {
		s.NodePools = append(s.NodePools, np)
		for _, m := range members {
			s.NodeClaims = append(s.NodeClaims, m.claim)
			s.Nodes = append(s.Nodes, m.node)
		}
	}
	since := monday0830.Add(-26 * time.Hour)
	add(pool(t, "business", `[{"nodes":"20%"},{"nodes":"0","schedule":"0 9 * * mon-fri","duration":"8h","reasons":["Drifted"]}]`),
		newMember("business", 0, oldImage, driftedSince("AMIDrift", since)),
		newMember("business", 1, oldImage, driftedSince("AMIDrift", since.Add(time.Hour)), doNotDisrupt),
		newMember("business", 2, oldImage),
		newMember("business", 3),
		newMember("business", 4))
	add(pool(t, "broken", `[{"nodes":"10%"},{"nodes":"0","schedule":"0 9 * * sat-sun","duration":"1h"}]`), healthy("broken", 2)...)
	add(pool(t, "open", `[]`))
	held := pool(t, "held", `[{"nodes":"50%"},{"nodes":"0","reasons":["Drifted"]}]`)
	record, _ := json.Marshal(holdrecord.Marker{Budget: holdrecord.Budget(), Index: 1, Since: monday0830.Add(-20 * time.Minute), Reason: "1 NodeClaim(s) launched during the drift rollout have no Ready Node after 15m0s: held-9"})
	held.Annotations = map[string]string{karpenter.RolloutGuardAnnotation: string(record)}
	add(held, newMember("held", 0, driftedSince("NodePoolDrifted", monday0830.Add(-time.Hour))), newMember("held", 1, notReady))
	// Two of five nodes NotReady: they use up the 20% budget of every
	// reason but Unhealthy, and stop node repair (more than 20%).
	add(pool(t, "repair", `[{"nodes":"20%"},{"nodes":"1","reasons":["Unhealthy"]}]`),
		newMember("repair", 0, notReady), newMember("repair", 1, notReady), newMember("repair", 2), newMember("repair", 3), newMember("repair", 4))
	s.NodeClasses = []*state.EC2NodeClass{defaultClass()}
	// business-0 is drifted and runs the only pod of a PDB that allows none.
	s.Pods = map[string][]*state.Pod{"node-business-0": {podOn("node-business-0", "shop", "db-0", "db")}}
	s.PDBs = []*state.PodDisruptionBudget{pdbFor("shop", "db", 0)}
	return s
}

// judgedByCRDs names a release as karpgate status does when the
// cluster's Karpenter CRDs chose it.
func judgedByCRDs(t *testing.T) *release.Summary {
	t.Helper()
	r, exact, err := release.Lookup("v1.15")
	if err != nil {
		t.Fatal(err)
	}
	s := release.ForRelease(r, exact, "CRDs in cluster https://203.0.113.10:6443").Summary()
	return &s
}

func TestWriteTableGolden(t *testing.T) {
	var out bytes.Buffer
	report := ComputeAll(fleet(t), nil, monday0830)
	report.Judged = judgedByCRDs(t)
	if err := WriteTable(&out, report, nil); err != nil {
		t.Fatal(err)
	}
	golden(t, "table.golden", out.Bytes())
}

// The table names the release whose reasons it shows, and why that one
// when it may not be the one meant; without a release named it says
// nothing of it.
func TestWriteTableNamesTheJudgedRelease(t *testing.T) {
	linked := &release.Summary{Version: "v1.15.1", Exact: true, Source: "linked CRDs", Note: "reading the Karpenter CRDs of https://x: forbidden"}
	for _, tt := range []struct {
		judged *release.Summary
		want   string
	}{
		{judgedByCRDs(t), "\nJudged by Karpenter v1.15.1, exactly (CRDs in cluster https://203.0.113.10:6443)\n"},
		{linked, "\nJudged by Karpenter v1.15.1, exactly (linked CRDs): reading the Karpenter CRDs of https://x: forbidden\n"},
		{&release.Summary{Version: "v1.0.8", Source: "CRDs in cluster https://x"}, "\nJudged by Karpenter ~v1.0.8, the closest release karpgate knows (CRDs in cluster https://x)\n"},
		{nil, ""},
	} {
		report := ComputeAll(state.Snapshot{NodePools: []*state.NodePool{pool(t, "open", `[]`)}}, nil, monday0830)
		report.Judged = tt.judged
		var out bytes.Buffer
		if err := WriteTable(&out, report, nil); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); (tt.want == "" && strings.Contains(got, "Judged by")) || !strings.Contains(got, tt.want) {
			t.Errorf("the table says:\n%s\nwant a line %q", got, tt.want)
		}
	}
}

// TestWriteTableInADisplayZone: the Friday before Paris moves to summer
// time; the next change reads in both clocks and the shift is called out.
func TestWriteTableInADisplayZone(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	friday := time.Date(2026, 3, 27, 8, 30, 0, 0, time.UTC)
	var out bytes.Buffer
	if err := WriteTable(&out, ComputeAll(fleet(t), nil, friday), paris); err != nil {
		t.Fatal(err)
	}
	golden(t, "table-paris.golden", out.Bytes())
	for _, want := range []string{
		"Drifted=0 at 2026-03-27 09:00 UTC (10:00 CET) (in 30m)",
		"Europe/Paris: clocks change on 29 March at 03:00, CET (UTC+01:00) to CEST (UTC+02:00): windows, fixed in UTC, open and close 1h later on this clock; Karpenter computes in UTC",
	} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("the table does not say %q:\n%s", want, out.String())
		}
	}
}

func TestWriteJSONGolden(t *testing.T) {
	var out bytes.Buffer
	if err := WriteJSON(&out, ComputeAll(fleet(t), nil, monday0830)); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden.json", out.Bytes())
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 45 * time.Second: "45s", 90 * time.Second: "1m", 2*time.Hour + 30*time.Minute + 59*time.Second: "2h30m",
		8 * time.Hour: "8h", 7 * 24 * time.Hour: "7d", 26*time.Hour + 5*time.Minute: "1d2h",
	} {
		if got := HumanDuration(d); got != want {
			t.Errorf("HumanDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

// TestTrimmingDoesNotChangeTheStatus computes the status from full objects,
// as `karpgate status` could have read them, and from the trimmed ones the
// loop's cache holds: they must agree.
func TestTrimmingDoesNotChangeTheStatus(t *testing.T) {
	decoder := serializer.NewCodecFactory(state.NewScheme()).UniversalDeserializer()
	read := func(name string) runtime.Object {
		data, err := os.ReadFile(filepath.Join("..", "state", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := decoder.Decode(data, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	node := read("node.json").(*corev1.Node)
	pod := read("pod.json").(*state.Pod)
	pod.Spec.NodeName = node.Name
	blocking := read("pdb.json").(*state.PodDisruptionBudget)
	blocking.Status.DisruptionsAllowed = 0
	full := state.Snapshot{
		NodePools:   []*state.NodePool{read("nodepool.json").(*state.NodePool)},
		NodeClaims:  []*state.NodeClaim{read("nodeclaim.json").(*state.NodeClaim)},
		Nodes:       []*corev1.Node{node},
		NodeClasses: []*state.EC2NodeClass{read("ec2nodeclass.json").(*state.EC2NodeClass)},
		Pods:        map[string][]*state.Pod{node.Name: {pod}},
		PDBs:        []*state.PodDisruptionBudget{blocking},
	}
	trimmed := state.Snapshot{
		NodePools:   []*state.NodePool{full.NodePools[0].DeepCopy()},
		NodeClaims:  []*state.NodeClaim{full.NodeClaims[0].DeepCopy()},
		Nodes:       []*corev1.Node{full.Nodes[0].DeepCopy()},
		NodeClasses: []*state.EC2NodeClass{full.NodeClasses[0].DeepCopy()},
		Pods:        map[string][]*state.Pod{node.Name: {pod.DeepCopy()}},
		PDBs:        []*state.PodDisruptionBudget{blocking.DeepCopy()},
	}
	for _, o := range []any{trimmed.NodePools[0], trimmed.NodeClaims[0], trimmed.Nodes[0], trimmed.NodeClasses[0], trimmed.Pods[node.Name][0], trimmed.PDBs[0]} {
		_, _ = state.Trim(o)
	}
	at := time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)
	a, _ := json.Marshal(ComputeAll(full, nil, at))
	b, _ := json.Marshal(ComputeAll(trimmed, nil, at))
	if !bytes.Equal(a, b) {
		t.Errorf("status differs after trimming:\nfull    %s\ntrimmed %s", a, b)
	}
	p := ComputeAll(full, nil, at).NodePools[0]
	if p.Nodes != 1 || p.Disrupting != 1 || p.Drift.Total != 1 || p.DoNotDisruptDrifted != 1 || p.DriftBlockedByPods != 1 {
		t.Errorf("fixture status = %+v; the fixtures no longer exercise what this test is for", p)
	}
}

// TestAuditColumn: the AUDIT column appears once the audit's reports were
// read, sums a NodePool's objects' reports, and a deny finding gets a note.
func TestAuditColumn(t *testing.T) {
	now := time.Date(2026, 1, 5, 8, 30, 0, 0, time.UTC)
	np := func(name, class string) *state.NodePool {
		p := &state.NodePool{}
		p.Name = name
		p.Spec.Template.Spec.NodeClassRef = state.NodeClassRef{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: class}
		return p
	}
	claim := &state.NodeClaim{}
	claim.Name, claim.Labels = "web-1", map[string]string{"karpenter.sh/nodepool": "web"}
	snap := state.Snapshot{NodePools: []*state.NodePool{np("web", "shared"), np("batch", "shared"), np("new", "none")}, NodeClaims: []*state.NodeClaim{claim}}
	r := ComputeAll(snap, nil, now)
	var without strings.Builder
	if err := WriteTable(&without, r, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(without.String(), "AUDIT") {
		t.Fatalf("the column without reports:\n%s", without.String())
	}
	AddAudit(&r, snap, map[ObjectRef]Audit{
		{"NodePool", "web"}:        {Warn: 1},
		{"NodeClaim", "web-1"}:     {Fail: 1},
		{"EC2NodeClass", "shared"}: {Skip: 1},
		{"NodePool", "batch"}:      {},
	})
	var b strings.Builder
	if err := WriteTable(&b, r, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NEXT CHANGE", "AUDIT\n", "fail=1 warn=1\n", "pass\n", "-\n",
		"web: the audit of stored objects finds 1 finding(s) karpgate's rules deny on it, its NodeClaims or its EC2NodeClass"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if a := r.NodePools[2].Audit; r.NodePools[2].Name != "web" || a.Reports != 3 || a.Skip != 1 {
		t.Errorf("web's audit: %+v", r.NodePools)
	}
}
