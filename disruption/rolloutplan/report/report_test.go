package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/disruption/rolloutplan/membership"
	"github.com/karpgate/karpgate/disruption/rolloutplan/progress"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/test/golden"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// plans are three plans whose statuses progress.Step wrote: one soaking
// its canary, one stopped by a NodeClaim that never got a Ready Node, one
// idle after a pass.
func plans(t *testing.T) []v1alpha1.RolloutPlan {
	t.Helper()
	newPlan := func(name string) *v1alpha1.RolloutPlan {
		return &v1alpha1.RolloutPlan{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1, Annotations: map[string]string{}},
			Spec: v1alpha1.RolloutPlanSpec{Waves: []v1alpha1.Wave{
				{Name: "canary", Soak: metav1.Duration{Duration: 10 * time.Minute}},
				{Name: "rest", Soak: metav1.Duration{Duration: 10 * time.Minute}},
			}}}
	}
	waves := membership.Waves{{"canary"}, {"general", "payments"}}
	pool := func(name string, drifted int, claims ...*state.NodeClaim) progress.NodePool {
		return progress.NodePool{Name: name, NodeClaims: 3, Drifted: drifted, NewestDrift: t0,
			State: state.Pool{NodePool: &state.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}, NodeClaims: claims}}
	}
	step := func(p *v1alpha1.RolloutPlan, pools map[string]progress.NodePool, now time.Time) {
		p.Status = progress.Step(progress.Input{Plan: p, Waves: waves, NodePools: pools, Now: now}).Status
	}

	soaking := newPlan("fleet")
	step(soaking, map[string]progress.NodePool{"canary": pool("canary", 3), "general": pool("general", 3), "payments": pool("payments", 3)}, t0)
	step(soaking, map[string]progress.NodePool{"canary": pool("canary", 0), "general": pool("general", 3), "payments": pool("payments", 3)}, t0.Add(4*time.Minute))

	failed := newPlan("gpu")
	step(failed, map[string]progress.NodePool{"canary": pool("canary", 3), "general": pool("general", 3), "payments": pool("payments", 3)}, t0)
	stuck := &state.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "canary-x7k2p", CreationTimestamp: metav1.NewTime(t0.Add(time.Minute))}}
	step(failed, map[string]progress.NodePool{"canary": pool("canary", 2, stuck), "general": pool("general", 3), "payments": pool("payments", 3)}, t0.Add(20*time.Minute))

	idle := newPlan("batch")
	step(idle, map[string]progress.NodePool{"canary": pool("canary", 0), "general": pool("general", 0), "payments": pool("payments", 0)}, t0)
	return []v1alpha1.RolloutPlan{*soaking, *failed, *idle}
}

func TestText(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, Build(plans(t), t0.Add(6*time.Minute))); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, filepath.Join("testdata", "status.txt"), b.Bytes())
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, Build(plans(t)[:1], t0.Add(6*time.Minute))); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, filepath.Join("testdata", "status.json"), b.Bytes())
}

func TestTextWithoutPlans(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, nil); err != nil || b.String() != "No RolloutPlans: every NodePool rolls drift at its own budgets.\n" {
		t.Errorf("%q, %v", b.String(), err)
	}
}

// TestTheGuideShowsTheGoldenOutput: docs/rollout.md shows status.txt as
// the test wrote it.
func TestTheGuideShowsTheGoldenOutput(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "rollout.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "status.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, append([]byte("$ karpgate rollout status\n"), want...)) {
		t.Error("docs/rollout.md does not show testdata/status.txt after `$ karpgate rollout status`")
	}
}
