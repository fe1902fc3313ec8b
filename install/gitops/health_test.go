package gitops

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/disruption/rolloutplan/membership"
	"github.com/karpgate/karpgate/disruption/rolloutplan/progress"
	"github.com/karpgate/karpgate/disruption/state"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// planIn steps a two-wave plan into a phase with the real state machine.
func planIn(t *testing.T, phase v1alpha1.Phase) *v1alpha1.RolloutPlan {
	t.Helper()
	plan := &v1alpha1.RolloutPlan{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "RolloutPlan"},
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Generation: 2, Annotations: map[string]string{}},
		Spec: v1alpha1.RolloutPlanSpec{Waves: []v1alpha1.Wave{
			{Name: "canary", Soak: metav1.Duration{Duration: time.Minute}}, {Name: "rest", Soak: metav1.Duration{Duration: time.Minute}},
		}},
	}
	waves := membership.Waves{{"canary"}, {"rest"}}
	pools := func(canary, rest int, claims ...*state.NodeClaim) map[string]progress.NodePool {
		p := func(name string, d int, c []*state.NodeClaim) progress.NodePool {
			return progress.NodePool{Name: name, Drifted: d, NewestDrift: t0, State: state.Pool{NodePool: &state.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}, NodeClaims: c}}
		}
		return map[string]progress.NodePool{"canary": p("canary", canary, claims), "rest": p("rest", rest, nil)}
	}
	step := func(in map[string]progress.NodePool, now time.Time) {
		plan.Status = progress.Step(progress.Input{Plan: plan, Waves: waves, NodePools: in, Now: now}).Status
	}
	switch phase {
	case v1alpha1.PhaseIdle:
		step(pools(0, 0), t0)
	case v1alpha1.PhaseRolling:
		step(pools(2, 2), t0)
	case v1alpha1.PhaseSoaking:
		step(pools(2, 2), t0)
		step(pools(0, 2), t0.Add(time.Second))
	case v1alpha1.PhasePaused:
		plan.Spec.Paused = true
		step(pools(2, 2), t0)
		step(pools(0, 2), t0.Add(time.Second))
		step(pools(0, 2), t0.Add(2*time.Minute))
	case v1alpha1.PhaseFailed:
		step(pools(2, 2), t0)
		stuck := &state.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "canary-new", CreationTimestamp: metav1.NewTime(t0)}}
		step(pools(2, 2, stuck), t0.Add(time.Hour))
	case v1alpha1.PhaseAborted:
		step(pools(2, 2), t0)
		plan.Annotations[v1alpha1.AbortAnnotation] = "2026-01-05T09:01:00Z"
		step(pools(2, 2), t0.Add(time.Minute))
	}
	if plan.Status.Phase != phase {
		t.Fatalf("stepped to %s, want %s", plan.Status.Phase, phase)
	}
	return plan
}

func TestHealthAsArgoCDAndFluxSeeIt(t *testing.T) {
	noStatus := func(t *testing.T) *v1alpha1.RolloutPlan {
		p := planIn(t, v1alpha1.PhaseIdle)
		p.Status = v1alpha1.RolloutPlanStatus{}
		return p
	}
	newSpec := func(t *testing.T) *v1alpha1.RolloutPlan {
		p := planIn(t, v1alpha1.PhaseIdle)
		p.Generation++
		return p
	}
	for _, tc := range []struct {
		name     string
		plan     func(*testing.T) *v1alpha1.RolloutPlan
		argo     string
		argoSays string
		kstatus  status.Status
	}{
		{"idle", func(t *testing.T) *v1alpha1.RolloutPlan { return planIn(t, v1alpha1.PhaseIdle) }, "Healthy", "nothing to roll", status.CurrentStatus},
		{"rolling", func(t *testing.T) *v1alpha1.RolloutPlan { return planIn(t, v1alpha1.PhaseRolling) }, "Progressing", "wave canary rolls", status.InProgressStatus},
		{"soaking", func(t *testing.T) *v1alpha1.RolloutPlan { return planIn(t, v1alpha1.PhaseSoaking) }, "Progressing", "wave canary soaks until", status.InProgressStatus},
		{"paused", func(t *testing.T) *v1alpha1.RolloutPlan { return planIn(t, v1alpha1.PhasePaused) }, "Suspended", "spec.paused holds the next wave", status.InProgressStatus},
		{"failed", func(t *testing.T) *v1alpha1.RolloutPlan { return planIn(t, v1alpha1.PhaseFailed) }, "Degraded", "NodesNotReady: wave canary: NodesReady", status.FailedStatus},
		{"aborted", func(t *testing.T) *v1alpha1.RolloutPlan { return planIn(t, v1alpha1.PhaseAborted) }, "Degraded", "Aborted: wave canary: aborted on request", status.FailedStatus},
		{"a spec karpgate has not judged", newSpec, "Progressing", "latest spec", status.InProgressStatus},
		{"no status yet", noStatus, "Progressing", "Waiting for karpgate", status.CurrentStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := toUnstructured(t, tc.plan(t))
			health, message := argoHealth(t, obj.Object)
			if health != tc.argo || !strings.Contains(message, tc.argoSays) {
				t.Errorf("Argo CD health %s %q, want %s containing %q", health, message, tc.argo, tc.argoSays)
			}
			res, err := status.Compute(obj)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.kstatus {
				t.Errorf("kstatus %s (%s), want %s", res.Status, res.Message, tc.kstatus)
			}
		})
	}
}

// TestTheGuideShowsThisScript: docs/rollout.md shows the health check as it
// is here, so that what people paste into argocd-cm is what was tested.
func TestTheGuideShowsThisScript(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "rollout.md"))
	if err != nil {
		t.Fatal(err)
	}
	indented := "    " + strings.ReplaceAll(strings.TrimRight(ArgoCDHealthLua, "\n"), "\n", "\n    ")
	indented = strings.ReplaceAll(indented, "    \n", "\n")
	if !strings.Contains(string(doc), ArgoCDHealthKey+": |\n"+indented+"\n") {
		t.Errorf("docs/rollout.md does not show install/gitops/health.lua under %s", ArgoCDHealthKey)
	}
}

func toUnstructured(t *testing.T, plan *v1alpha1.RolloutPlan) *unstructured.Unstructured {
	t.Helper()
	// Through JSON, as Argo CD and Flux get it from the API server.
	raw, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return obj
}

// argoHealth runs the script as Argo CD does: the object as the global
// obj, the returned table's status and message.
func argoHealth(t *testing.T, obj map[string]any) (string, string) {
	t.Helper()
	L := lua.NewState(lua.Options{SkipOpenLibs: false})
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString(ArgoCDHealthLua); err != nil {
		t.Fatalf("the health check fails: %v", err)
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("the health check returned %v, not a table", L.Get(-1))
	}
	return ret.RawGetString("status").String(), ret.RawGetString("message").String()
}

// toLua turns decoded JSON into Lua values; JSON arrays become sequences.
func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case int64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []any:
		tb := L.NewTable()
		for _, e := range x {
			tb.Append(toLua(L, e))
		}
		return tb
	case map[string]any:
		tb := L.NewTable()
		for k, e := range x {
			tb.RawSetString(k, toLua(L, e))
		}
		return tb
	}
	return lua.LString("")
}
