package controller

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/guard"
	"github.com/karpgate/karpgate/disruption/state"
)

// freezeClusterIfTripped freezes drift in every NodePool once the rollout
// guard holds Guard.FreezeAfter of them: several NodePools whose new nodes
// fail at once point at a cause they share (an AMI, a node class, the
// network), which will break the next NodePool's rollout too. just is the
// NodePool the guard has just held.
//
// The holds are counted from the API server, not the informer cache: this
// runs only when a hold is placed, so when two NodePools are held moments
// apart, a lagging cache would show each the other without its hold, and
// neither would trip the freeze. Read live, whichever counts last sees both.
//
// Only a hold its record vouches for counts (holdrecord.Held): a record that
// names another budget, such as {nodes: "0"} for every reason, or whose
// budget is gone, holds no drift rollout.
func (r *reconciler) freezeClusterIfTripped(ctx context.Context, just string, now time.Time) error {
	if r.opts.Guard.FreezeAfter <= 0 {
		return nil
	}
	var pools state.NodePoolList
	if err := r.direct.List(ctx, &pools); err != nil {
		return err
	}
	held := map[string]bool{just: true}
	for _, np := range pools.Items {
		if m, _, ok := holdrecord.Held(np.Annotations, np.Spec.Disruption.Budgets); ok && m.Guarded() {
			held[np.Name] = true
		}
	}
	if len(held) < r.opts.Guard.FreezeAfter {
		return nil
	}
	names := make([]string, 0, len(held))
	for n := range held {
		names = append(names, n)
	}
	sort.Strings(names)
	reason := fmt.Sprintf("the rollout guard holds %d NodePools (%s), at least --rollout-guard-freeze-after=%d: drift is frozen cluster-wide",
		len(names), strings.Join(names, ", "), r.opts.Guard.FreezeAfter)
	results, err := guard.FreezeAllButGuarded(ctx, r.direct, guard.Selection{All: true}, now, reason)
	if err != nil {
		return fmt.Errorf("freezing drift cluster-wide: %w", err)
	}
	frozen := 0
	for _, res := range results {
		switch {
		case res.Err != nil:
			log.FromContext(ctx).Error(res.Err, "cluster-wide freeze: a NodePool was not frozen", "nodepool", res.NodePool)
		case res.Frozen != nil:
			frozen++
		}
	}
	log.FromContext(ctx).Info("rollout guard tripped a cluster-wide drift freeze; `karpgate resume --all` lifts it", "held", names, "frozen", frozen)
	if guard.Failed(results) {
		return fmt.Errorf("freezing drift cluster-wide: some NodePools were not frozen (see the log)")
	}
	return nil
}
