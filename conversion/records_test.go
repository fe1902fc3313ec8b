package conversion

import (
	"context"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// TestRestoreRecordsAreWhatConvertApplies: the records a caller weighs are
// the ones Convert applies, HeldBy says whether an object holds what a
// record restores, and a copy without some records converts as if they
// had never been written.
func TestRestoreRecordsAreWhatConvertApplies(t *testing.T) {
	ctx := context.Background()
	stored := yamlObject(t, `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: web, annotations: {team: web}}
spec:
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 1m
    budgets: [{nodes: "0", reasons: [Underutilized]}]
  template:
    spec:
      terminationGracePeriod: 48h
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
`)
	view, err := Convert(ctx, stored, karpenter.V1Beta1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	records, err := RestoreRecords(view, karpenter.V1)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range records {
		paths = append(paths, r.FieldPath())
		if !r.HeldBy(stored) {
			t.Errorf("the stored object does not hold what record %s restores", r.FieldPath())
		}
	}
	if got := strings.Join(paths, " "); got != "metadata.annotations[compatibility.karpenter.sh/v1beta1-nodeclass-reference] spec.disruption.budgets[0] spec.template.spec.terminationGracePeriod" {
		t.Fatalf("records at %s", got)
	}
	if none, err := RestoreRecords(stored, karpenter.V1); err != nil || none != nil {
		t.Fatalf("an object without the annotation: %v, %v", none, err)
	}

	// Without the budget's record, the budget converts as v1beta1 says:
	// every reason; the other records still apply.
	without, err := WithRestoreRecords(view, karpenter.V1, func(i int) bool { return i != 1 })
	if err != nil {
		t.Fatal(err)
	}
	converted, err := Convert(ctx, without, karpenter.V1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !records[0].HeldBy(converted) || records[1].HeldBy(converted) || !records[2].HeldBy(converted) {
		t.Fatalf("converted without the first record:\n%s", mustJSON(converted))
	}
	if got := mustJSON(converted["spec"].(map[string]any)["disruption"].(map[string]any)["budgets"]); got != mustJSON([]any{map[string]any{"nodes": "0"}}) {
		t.Errorf("budgets %s", got)
	}
	// The view itself is left alone.
	if again, _ := RestoreRecords(view, karpenter.V1); len(again) != 3 {
		t.Errorf("WithRestoreRecords changed its input: %d records left", len(again))
	}
}

func TestHeldBy(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "1"}}, "spec": map[string]any{"list": []any{int64(1), "x"}}}
	for _, tt := range []struct {
		record RestoreRecord
		held   bool
	}{
		{RestoreRecord{Path: []any{"metadata", "labels", "a"}, Original: "1", HasOriginal: true}, true},
		{RestoreRecord{Path: []any{"metadata", "labels", "a"}, Original: "2", HasOriginal: true}, false},
		{RestoreRecord{Path: []any{"metadata", "labels", "b"}}, true},                                  // restores absence
		{RestoreRecord{Path: []any{"metadata", "labels", "a"}}, false},                                 // a is there
		{RestoreRecord{Path: []any{"spec", "list", 0}, Original: float64(1), HasOriginal: true}, true}, // 1 and 1.0 are one JSON number
		{RestoreRecord{Path: []any{"spec", "list", 2}, Original: "y", HasOriginal: true}, false},
		{RestoreRecord{Path: []any{"spec", "list", "0"}, Original: int64(1), HasOriginal: true}, false},
	} {
		if got := tt.record.HeldBy(obj); got != tt.held {
			t.Errorf("%s = %v: HeldBy %v, want %v", tt.record.FieldPath(), tt.record.Original, got, tt.held)
		}
	}
}

func TestRestoreRecordsNameABadAnnotation(t *testing.T) {
	obj := map[string]any{"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool",
		"metadata": map[string]any{"annotations": map[string]any{karpenter.RestoreV1Annotation: `{"records":[{"path":["metadata","name"]}]}`}}}
	for name, call := range map[string]func() error{
		"RestoreRecords": func() error { _, err := RestoreRecords(obj, karpenter.V1); return err },
		"WithRestoreRecords": func() error {
			_, err := WithRestoreRecords(obj, karpenter.V1, func(int) bool { return true })
			return err
		},
	} {
		if err := call(); err == nil || !strings.Contains(err.Error(), "metadata.annotations[karpgate.io/restore-v1]") || !strings.Contains(err.Error(), "outside spec, status") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
