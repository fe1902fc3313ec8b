package budget

import (
	"reflect"
	"strings"
	"testing"
)

func TestFromNodePool(t *testing.T) {
	v1 := func(disruption any) map[string]any {
		return map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "spec": map[string]any{"disruption": disruption}}
	}
	tests := []struct {
		name    string
		content map[string]any
		want    []Budget
		wantErr []string // substrings, each must appear
	}{
		{name: "no spec gives the CRD default", content: map[string]any{"kind": "NodePool"}, want: DefaultBudgets()},
		{name: "no disruption gives the CRD default", content: map[string]any{"spec": map[string]any{}}, want: DefaultBudgets()},
		{name: "absent budgets give the CRD default", content: v1(map[string]any{"consolidateAfter": "0s"}), want: DefaultBudgets()},
		{name: "null budgets give the CRD default", content: v1(map[string]any{"budgets": nil}), want: DefaultBudgets()},
		{name: "explicit empty list means no budget", content: v1(map[string]any{"budgets": []any{}}), want: []Budget{}},
		{
			name: "every field read",
			content: v1(map[string]any{"budgets": []any{
				map[string]any{"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h", "reasons": []any{"Drifted", "Underutilized"}},
				map[string]any{"nodes": "100%", "reasons": []any{"Empty"}},
			}}),
			want: []Budget{
				scheduled(0, "0", "0 9 * * mon-fri", "8h", "Drifted", "Underutilized"),
				{Index: 1, Nodes: "100%", Reasons: []string{"Empty"}},
			},
		},
		{
			name:    "reasons: [] is kept apart from absent reasons",
			content: v1(map[string]any{"budgets": []any{map[string]any{"nodes": "1", "reasons": []any{}}}}),
			want:    []Budget{{Index: 0, Nodes: "1", Reasons: []string{}}},
		},
		{
			name:    "missing nodes takes the item default",
			content: v1(map[string]any{"budgets": []any{map[string]any{"schedule": "@daily", "duration": "1h"}}}),
			want:    []Budget{scheduled(0, "10%", "@daily", "1h")},
		},
		{
			name:    "unquoted number nodes",
			content: v1(map[string]any{"budgets": []any{map[string]any{"nodes": int64(10)}}}),
			wantErr: []string{`spec.disruption.budgets[0].nodes: must be a string, found number 10; quote it: "10"`},
		},
		{
			name: "several type errors, each with its path",
			content: v1(map[string]any{"budgets": []any{
				map[string]any{"nodes": "1", "schedule": int64(5), "duration": true},
				"oops",
				map[string]any{"nodes": "1", "reasons": "Drifted"},
				map[string]any{"nodes": "1", "reasons": []any{int64(3)}},
			}}),
			wantErr: []string{
				"spec.disruption.budgets[0].schedule: must be a string, found number 5",
				"spec.disruption.budgets[0].duration: must be a string, found boolean true",
				`spec.disruption.budgets[1]: must be an object with nodes, schedule, duration and reasons, found string "oops"`,
				"spec.disruption.budgets[2].reasons: must be a list of reasons",
				"spec.disruption.budgets[3].reasons[0]: must be a string",
			},
		},
		{name: "budgets not a list", content: v1(map[string]any{"budgets": map[string]any{}}), wantErr: []string{"spec.disruption.budgets: must be a list of budgets, found an object"}},
		{name: "disruption not an object", content: v1("WhenEmpty"), wantErr: []string{`spec.disruption: must be an object, found string "WhenEmpty"`}},
		{
			name: "v1beta1 with the same layout",
			content: map[string]any{"apiVersion": "karpenter.sh/v1beta1", "spec": map[string]any{"disruption": map[string]any{"budgets": []any{
				map[string]any{"nodes": "2", "schedule": "@daily", "duration": "1h"}}}}},
			want: []Budget{scheduled(0, "2", "@daily", "1h")},
		},
		{
			name: "v1beta1 has no reasons",
			content: map[string]any{"apiVersion": "karpenter.sh/v1beta1", "spec": map[string]any{"disruption": map[string]any{"budgets": []any{
				map[string]any{"nodes": "2", "reasons": []any{"Drifted"}}}}}},
			wantErr: []string{"spec.disruption.budgets[0].reasons: v1beta1 budgets have no reasons", "karpgate convert"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromNodePool(tt.content)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("FromNodePool() = %+v, want an error", got)
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q\ndoes not contain %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("FromNodePool() error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("FromNodePool() = %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestBudgetName(t *testing.T) {
	tests := []struct {
		b    Budget
		want string
	}{
		{DefaultBudgets()[0], `default budget (nodes "10%", always, all reasons)`},
		{scheduled(1, "0", "0 9 * * mon-fri", "8h", "Drifted", "Underutilized"), `budgets[1] (nodes "0", "0 9 * * mon-fri" for 8h, Drifted+Underutilized)`},
		{Budget{Index: 2, Nodes: "1", Reasons: []string{}}, `budgets[2] (nodes "1", always, no reasons)`},
		{Budget{Index: 0, Nodes: "1", Schedule: Ptr("@daily")}, `budgets[0] (nodes "1", "@daily" without duration, all reasons)`},
		{Budget{Index: 0, Nodes: "1", Duration: Ptr("1h")}, `budgets[0] (nodes "1", duration 1h without schedule, all reasons)`},
	}
	for _, tt := range tests {
		if got := tt.b.Name(); got != tt.want {
			t.Errorf("Name() = %s, want %s", got, tt.want)
		}
	}
}
