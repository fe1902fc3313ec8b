package budget_test

import (
	"fmt"
	"time"

	"github.com/karpgate/karpgate/budget"
)

// Karpenter's docs example: no drift or consolidation during business hours,
// empty nodes any time. Outside the window, drift is unlimited, not "allowed
// up to the budget": budgets only restrict.
func ExampleSet_Allowed() {
	set := budget.CompileSet([]budget.Budget{
		{Index: 0, Nodes: "0", Schedule: budget.Ptr("0 9 * * mon-fri"), Duration: budget.Ptr("8h"), Reasons: []string{"Drifted", "Underutilized"}},
		{Index: 1, Nodes: "100%", Reasons: []string{"Empty"}},
	})
	for _, now := range []string{"2025-01-06T10:00:00Z", "2025-01-06T18:00:00Z"} {
		t, _ := time.Parse(time.RFC3339, now)
		// 12 nodes: one being replaced, one NotReady. Unhealthy's budget
		// (node repair, Karpenter v1.15) does not count the NotReady one.
		allowed, _ := set.Allowed(budget.Counts{Nodes: 12, Disrupting: 2, NotReady: 1}, t)
		fmt.Println(now, "Drifted:", allowed[budget.Drifted], "Empty:", allowed[budget.Empty], "Unhealthy:", allowed[budget.Unhealthy])
	}
	// Output:
	// 2025-01-06T10:00:00Z Drifted: 0 Empty: 10 Unhealthy: unlimited
	// 2025-01-06T18:00:00Z Drifted: unlimited Empty: 10 Unhealthy: unlimited
}

func ExampleScheduleFix() {
	_, err := budget.ParseSchedule("0 9 * * sat-sun")
	fmt.Println(err)
	fmt.Println(budget.ScheduleFix("0 9 * * sat-sun"))
	// Output:
	// beginning of range (6) beyond end of range (0): sat-sun
	// 0 9 * * sat,sun
}
