package holdrecord

import "github.com/karpgate/karpgate/internal/karpenter"

// Held returns the hold a NodePool's record vouches for, and the index of
// its budget, when the record is valid: it parses (ReadMarker), the budget
// it records is exactly Budget (what disruption/guard writes), and budgets
// (spec.disruption.budgets as stored) hold that budget at the recorded
// index. The policy engine exempts that one budget from the
// budget rules (KG301 above all), so that a user who denies KG301 does not
// make karpgate refuse its own hold, or every later write to a held
// NodePool.
//
// Valid is not authentic: anyone who may write the NodePool may write the
// record, and admission cannot tell karpgate's writes from theirs (a
// freeze is written with the credentials of whoever runs `karpgate
// freeze`, and field managers are names clients choose). What the checks
// buy is that the exemption covers only karpgate's own budget, at its
// recorded place: a record naming another budget ({nodes: "0"} for every
// reason, a schedule) or another index exempts nothing, and a forged
// record makes its budget karpgate's, which `karpgate resume` removes and
// `karpgate status` reports as a hold.
func Held(annotations map[string]string, budgets []any) (*Marker, int, bool) {
	if _, ok := annotations[karpenter.RolloutGuardAnnotation]; !ok {
		return nil, 0, false
	}
	m, err := ReadMarker(annotations)
	if err != nil || m == nil || !SameBudget(m.Budget, Budget()) || !m.Present(budgets) {
		return nil, 0, false
	}
	return m, m.Index, true
}
