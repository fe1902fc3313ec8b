package budget

import "fmt"

// Counts are a NodePool's nodes as Karpenter's budgets count them.
type Counts struct {
	// Nodes is what a budget's percentage is of: the NodePool's managed,
	// initialized (or rebooting) nodes whose instance is not terminating.
	Nodes int
	// Disrupting counts the nodes already using up the budgets of
	// Underutilized, Empty and Drifted: being deleted, marked for
	// deletion, rebooting, or not Ready.
	Disrupting int
	// NotReady counts the nodes of Disrupting whose only part in it is
	// that they are not Ready. Unhealthy's budget does not count them
	// (Karpenter v1.15): NotReady is what node repair acts on, and counting
	// it would let a wave of unhealthy nodes use up the very budget that
	// repairs them. An in-flight repair still counts once its node is
	// marked for deletion.
	NotReady int
}

// Disrupted returns Counts for nodes of which disrupting are being deleted
// or marked for deletion: they count against every reason alike.
func Disrupted(nodes, disrupting int) Counts {
	return Counts{Nodes: nodes, Disrupting: disrupting}
}

// Consuming returns how many nodes use up reason r's budget.
func (c Counts) Consuming(r Reason) int {
	if r == Unhealthy {
		return c.Disrupting - c.NotReady
	}
	return c.Disrupting
}

// Check returns an error when the counts cannot describe a NodePool.
func (c Counts) Check() error {
	if c.Nodes < 0 || c.Disrupting < 0 || c.NotReady < 0 {
		return fmt.Errorf("node counts cannot be negative (nodes %d, disrupting %d, not ready %d)", c.Nodes, c.Disrupting, c.NotReady)
	}
	if c.NotReady > c.Disrupting {
		return fmt.Errorf("%d nodes not Ready cannot be more than the %d disrupting nodes they are part of", c.NotReady, c.Disrupting)
	}
	return nil
}
