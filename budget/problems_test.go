package budget

import "testing"

func TestProblemsAreClassifiedByField(t *testing.T) {
	pool := func(budgets any) map[string]any {
		return map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
			"spec": map[string]any{"disruption": map[string]any{"budgets": budgets}}}
	}
	tests := []struct {
		name    string
		budgets any
		want    []ProblemKind
		effect  Effect
	}{
		{"clean", []any{map[string]any{"nodes": "10%"}}, nil, ""},
		{"cron Karpenter cannot parse", []any{map[string]any{"nodes": "0", "schedule": "0 9 * * sat-sun", "duration": "8h"}}, []ProblemKind{ProblemSchedule}, BlocksEveryReason},
		{"schedule without duration", []any{map[string]any{"nodes": "0", "schedule": "@daily"}}, []ProblemKind{ProblemPairing}, RejectedByAPIServer},
		{"duration with seconds", []any{map[string]any{"nodes": "0", "schedule": "@daily", "duration": "1h30s"}}, []ProblemKind{ProblemDuration}, RejectedByAPIServer},
		{"nodes pattern", []any{map[string]any{"nodes": "ten"}}, []ProblemKind{ProblemNodes}, RejectedByAPIServer},
		{"unknown reason", []any{map[string]any{"nodes": "1", "reasons": []any{"Expired"}}}, []ProblemKind{ProblemReasons}, RejectedByAPIServer},
		{"not a list", "x", []ProblemKind{ProblemList}, RejectedByAPIServer},
		{"a budget of the wrong type", []any{"x"}, []ProblemKind{ProblemList}, RejectedByAPIServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Problems(pool(tt.budgets))
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want kinds %v", got, tt.want)
			}
			for i, p := range got {
				if p.Kind != tt.want[i] || p.Effect != tt.effect || p.Path == "" || p.Message == "" {
					t.Errorf("problem %d: got %+v, want kind %s effect %s with a path and message", i, p, tt.want[i], tt.effect)
				}
			}
		})
	}
}
