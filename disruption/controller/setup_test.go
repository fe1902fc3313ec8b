package controller

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/disruption/status"
)

func TestRequireKindsNamesWhatIsMissing(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{state.CoreV1, state.AWSV1})
	err := requireKinds(mapper)
	if err == nil || !strings.Contains(err.Error(), "NodePool (karpenter.sh/v1), NodeClaim (karpenter.sh/v1), EC2NodeClass (karpenter.k8s.aws/v1)") {
		t.Fatalf("err = %v", err)
	}
	mapper.Add(state.CoreV1.WithKind("NodePool"), meta.RESTScopeRoot)
	mapper.Add(state.CoreV1.WithKind("NodeClaim"), meta.RESTScopeRoot)
	if err := requireKinds(mapper); err == nil || strings.Contains(err.Error(), "NodePool") || !strings.Contains(err.Error(), "EC2NodeClass") {
		t.Fatalf("with two kinds served: err = %v", err)
	}
	mapper.Add(state.AWSV1.WithKind("EC2NodeClass"), meta.RESTScopeRoot)
	if err := requireKinds(mapper); err != nil {
		t.Fatalf("with every kind served: %v", err)
	}
}

func TestRequeueAfterPicksTheNearestReason(t *testing.T) {
	now := time.Date(2026, 1, 5, 8, 30, 0, 0, time.UTC)
	at := func(d time.Duration) status.Change { t := now.Add(d); return status.Change{At: &t} }
	tests := []struct {
		name   string
		next   map[budget.Reason]status.Change
		wake   time.Time
		expect time.Duration
	}{
		{"nothing changes within the horizon", nil, time.Time{}, status.Horizon},
		{"the earliest window edge", map[budget.Reason]status.Change{budget.Drifted: at(30 * time.Minute), budget.Empty: at(2 * time.Hour)}, time.Time{}, 30 * time.Minute},
		{"a guard deadline comes first", map[budget.Reason]status.Change{budget.Drifted: at(30 * time.Minute)}, now.Add(5 * time.Minute), 5 * time.Minute},
		{"an edge already passed means now, not never", map[budget.Reason]status.Change{budget.Drifted: at(-time.Second)}, time.Time{}, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := requeueAfter(status.NodePool{NextChange: tt.next}, tt.wake, now); got != tt.expect {
				t.Errorf("requeueAfter = %s, want %s", got, tt.expect)
			}
		})
	}
}
