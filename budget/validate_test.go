package budget

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	type want struct {
		path    string
		effect  Effect
		problem string // substring
		fix     string
	}
	tests := []struct {
		name    string
		budgets []Budget
		want    []want
	}{
		{name: "docs example that works", budgets: []Budget{
			scheduled(0, "0", "0 9 * * mon-fri", "8h", "Drifted", "Underutilized"),
			{Index: 1, Nodes: "100%", Reasons: []string{"Empty"}},
		}},
		{name: "default budget", budgets: DefaultBudgets()},
		{name: "sat-sun is accepted by the API server, then blocks", budgets: []Budget{scheduled(0, "0", "0 9 * * sat-sun", "24h")},
			want: []want{{"spec.disruption.budgets[0].schedule", BlocksEveryReason, `"0 9 * * sat-sun" is not a valid cron: beginning of range (6) beyond end of range (0): sat-sun; the API server accepts it, then Karpenter allows zero`, `"0 9 * * sat,sun"`}}},
		{name: "a schedule the CRD pattern refuses", budgets: []Budget{scheduled(3, "0", "0 9 * *", "1h")},
			want: []want{{"spec.disruption.budgets[3].schedule", RejectedByAPIServer, "expected exactly 5 fields, found 4", ""}}},
		{name: "schedule without duration", budgets: []Budget{{Index: 1, Nodes: "1", Schedule: Ptr("@daily")}},
			want: []want{{"spec.disruption.budgets[1].duration", RejectedByAPIServer, "schedule is set without duration", ""}}},
		{name: "duration without schedule", budgets: []Budget{{Index: 0, Nodes: "1", Duration: Ptr("1h")}},
			want: []want{{"spec.disruption.budgets[0].schedule", RejectedByAPIServer, "duration is set without schedule", ""}}},
		{name: "duration in days", budgets: []Budget{scheduled(0, "1", "@weekly", "2d")},
			want: []want{{"spec.disruption.budgets[0].duration", RejectedByAPIServer, "days are not allowed; write 48h", ""}}},
		{name: "bad nodes", budgets: []Budget{{Index: 0, Nodes: "150%"}, {Index: 1, Nodes: " 5"}, {Index: 2, Nodes: "-1"}, {Index: 3, Nodes: "five"}},
			want: []want{
				{"spec.disruption.budgets[0].nodes", RejectedByAPIServer, `"150%" is not a node count`, `"100%"`},
				{"spec.disruption.budgets[1].nodes", RejectedByAPIServer, `" 5" is not a node count`, `"5"`},
				{"spec.disruption.budgets[2].nodes", RejectedByAPIServer, `"-1" is not a node count`, ""},
				{"spec.disruption.budgets[3].nodes", RejectedByAPIServer, `"five" is not a node count`, ""},
			}},
		{name: "reasons are case sensitive", budgets: []Budget{{Index: 0, Nodes: "1", Reasons: []string{"Drifted", "drifted", "Expired"}}},
			want: []want{
				{"spec.disruption.budgets[0].reasons[1]", RejectedByAPIServer, `"drifted" is not a disruption reason`, `"Drifted"`},
				{"spec.disruption.budgets[0].reasons[2]", RejectedByAPIServer, `"Expired" is not a disruption reason`, ""},
			}},
		{name: "Unhealthy is a reason of the newest release", budgets: []Budget{{Index: 0, Nodes: "1", Reasons: []string{"Underutilized", "Empty", "Drifted", "Unhealthy"}}}},
		{name: "too many budgets", budgets: make51(),
			want: []want{{"spec.disruption.budgets", RejectedByAPIServer, "51 budgets; the CRD allows at most 50", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Validate(tt.budgets)
			if len(got) != len(tt.want) {
				t.Fatalf("Validate() = %v\nwant %d problems", got, len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Path != w.path || g.Effect != w.effect || !strings.Contains(g.Problem, w.problem) || g.QuotedReplacement() != w.fix {
					t.Errorf("problem %d = %+v\nwant path %s effect %s problem ~%q fix %q", i, g, w.path, w.effect, w.problem, w.fix)
				}
				if !strings.HasPrefix(g.Error(), w.path+": ") {
					t.Errorf("Error() = %q does not start with the path", g.Error())
				}
			}
		})
	}
}

// Karpenter v1.0 to v1.14 know three reasons: their API server refuses
// Unhealthy, and the message lists the reasons of that release.
func TestValidateForOlderReleases(t *testing.T) {
	reasons, err := ReasonsOf("v1.14")
	if err != nil {
		t.Fatal(err)
	}
	got := ValidateFor(reasons, []Budget{{Index: 2, Nodes: "1", Reasons: []string{"Drifted", "unhealthy", "Unhealthy"}}})
	want := []string{
		`spec.disruption.budgets[2].reasons[1]: "unhealthy" is not a disruption reason; the reasons are Underutilized, Empty and Drifted (case matters)`,
		`spec.disruption.budgets[2].reasons[2]: "Unhealthy" is not a disruption reason; the reasons are Underutilized, Empty and Drifted (case matters)`,
	}
	if len(got) != len(want) {
		t.Fatalf("ValidateFor(v1.14) = %v", got)
	}
	for i := range want {
		if got[i].Error() != want[i] || got[i].Effect != RejectedByAPIServer || got[i].QuotedReplacement() != "" {
			t.Errorf("problem %d = %q (%s, fix %s)\nwant %q", i, got[i].Error(), got[i].Effect, got[i].QuotedReplacement(), want[i])
		}
	}
	if latest := Validate([]Budget{{Index: 0, Nodes: "1", Reasons: []string{"unhealthy"}}}); len(latest) != 1 || latest[0].QuotedReplacement() != `"Unhealthy"` ||
		!strings.Contains(latest[0].Problem, "Underutilized, Empty, Drifted and Unhealthy") {
		t.Errorf("Validate(unhealthy) = %v; want the four reasons and the fix Unhealthy", latest)
	}
}

func make51() []Budget {
	bs := make([]Budget, 51)
	for i := range bs {
		bs[i] = Budget{Index: i, Nodes: "1"}
	}
	return bs
}
