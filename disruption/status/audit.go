package status

import (
	"fmt"

	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Audit sums what the audit of stored objects (karpgate serve's
// ClusterReports) says about a NodePool's objects: the NodePool, its
// NodeClaims and the EC2NodeClasses they use.
type Audit struct {
	Fail int `json:"fail"`
	Warn int `json:"warn"`
	Skip int `json:"skip"`
	// Reports counts the reports summed: 0 means the audit has not
	// reported on any of them.
	Reports int `json:"reports"`
}

// ObjectRef names an audited object.
type ObjectRef struct{ Kind, Name string }

// AddAudit fills each NodePool's Audit from the reports' summaries, by the
// object each reports on. A NodePool none of whose objects has a report
// gets an Audit with Reports 0.
func AddAudit(r *Report, s state.Snapshot, reports map[ObjectRef]Audit) {
	pools := map[string]state.Pool{}
	for _, p := range s.Pools() {
		pools[p.NodePool.Name] = p
	}
	for i := range r.NodePools {
		p, ok := pools[r.NodePools[i].Name]
		if !ok {
			continue
		}
		sum := &Audit{}
		add := func(kind, name string) {
			if a, ok := reports[ObjectRef{kind, name}]; ok {
				sum.Fail, sum.Warn, sum.Skip, sum.Reports = sum.Fail+a.Fail, sum.Warn+a.Warn, sum.Skip+a.Skip, sum.Reports+1
			}
		}
		add(karpenter.KindNodePool, p.NodePool.Name)
		for _, nc := range p.NodeClaims {
			add(karpenter.KindNodeClaim, nc.Name)
		}
		for _, class := range p.NodeClassNames() {
			add(karpenter.KindEC2NodeClass, class)
		}
		r.NodePools[i].Audit = sum
	}
}

// auditCell is the table's AUDIT column.
func auditCell(p NodePool) string {
	switch a := p.Audit; {
	case a == nil || a.Reports == 0:
		return "-"
	case a.Fail+a.Warn == 0:
		return "pass"
	default:
		return fmt.Sprintf("fail=%d warn=%d", a.Fail, a.Warn)
	}
}

// audited reports whether any NodePool has the audit's reports: the table
// shows the column only then.
func audited(r Report) bool {
	for _, p := range r.NodePools {
		if p.Audit != nil {
			return true
		}
	}
	return false
}
