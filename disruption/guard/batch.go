package guard

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/state"
)

// Selection picks the NodePools a freeze or a resume applies to: named
// ones, those a label selector matches, or all of them.
type Selection struct {
	Names    []string
	Selector labels.Selector
	All      bool
}

// Result is what a freeze or a resume did to one NodePool. Exactly one of
// Frozen, Held (for a freeze) or Outcome (for a resume) says it, unless Err
// is set.
type Result struct {
	NodePool string
	// Frozen is the freeze just added.
	Frozen *holdrecord.Marker
	// Held is karpgate's hold that was already there; a freeze leaves it.
	Held *holdrecord.Marker
	// Outcome and Lifted say what a resume did.
	Outcome Outcome
	Lifted  *holdrecord.Marker
	Err     error
}

// Failed reports whether any NodePool could not be changed as asked.
func Failed(results []Result) bool {
	for _, r := range results {
		if r.Err != nil {
			return true
		}
	}
	return false
}

// FreezeAll adds the freeze budget {nodes: "0", reasons: [Drifted]} to every
// selected NodePool that karpgate does not hold yet, each with its own
// record, and leaves every other budget as it is. A NodePool that fails
// does not stop the others; its Result carries the error. The error is for
// a selection that cannot be listed.
func FreezeAll(ctx context.Context, c client.Client, sel Selection, now time.Time, reason string) ([]Result, error) {
	return freezeAll(ctx, c, sel, func(name string) (*holdrecord.Marker, *holdrecord.Marker, error) {
		return FreezeNodePool(ctx, c, name, now, reason)
	})
}

// FreezeAllButGuarded is FreezeAll for the cluster-wide freeze the rollout
// guard trips: the guard's own holds, which tripped it and which its
// reason names, stay the guard's (reported as Held), so that the NodePools
// whose new nodes failed still read as the guard's in status and events.
// `karpgate resume` lifts both kinds alike.
func FreezeAllButGuarded(ctx context.Context, c client.Client, sel Selection, now time.Time, reason string) ([]Result, error) {
	return freezeAll(ctx, c, sel, func(name string) (*holdrecord.Marker, *holdrecord.Marker, error) {
		return apply(ctx, c, name, func(np *unstructured.Unstructured, held *holdrecord.Marker) (*holdrecord.Marker, error) {
			if held.Guarded() {
				return nil, nil
			}
			return freezeOne(np, held, now, reason)
		})
	})
}

func freezeAll(ctx context.Context, c client.Client, sel Selection, freeze func(name string) (added, existing *holdrecord.Marker, err error)) ([]Result, error) {
	names, err := selectNodePools(ctx, c, sel)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(names))
	for _, name := range names {
		added, existing, err := freeze(name)
		out = append(out, Result{NodePool: name, Frozen: added, Held: existing, Err: err})
	}
	return out, nil
}

// ResumeAll lifts karpgate's hold (a freeze or the rollout guard's) from
// every selected NodePool, removing only the budget karpgate added; see
// Lift. A NodePool karpgate does not hold is reported NotHeld.
func ResumeAll(ctx context.Context, c client.Client, sel Selection, now time.Time) ([]Result, error) {
	names, err := selectNodePools(ctx, c, sel)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(names))
	for _, name := range names {
		outcome, m, err := Release(ctx, c, name, now)
		out = append(out, Result{NodePool: name, Outcome: outcome, Lifted: m, Err: err})
	}
	return out, nil
}

// ErrNoSelection is returned for a Selection with neither names, a
// selector nor All.
var ErrNoSelection = errors.New("no NodePool selected: name some, give a label selector, or ask for all")

// selectNodePools lists the names a selection picks, sorted. Named
// NodePools that do not exist are kept, so that their Result says so.
func selectNodePools(ctx context.Context, c client.Client, sel Selection) ([]string, error) {
	if len(sel.Names) > 0 {
		names := append([]string(nil), sel.Names...)
		sort.Strings(names)
		return names, nil
	}
	if !sel.All && sel.Selector == nil {
		return nil, ErrNoSelection
	}
	var list state.NodePoolList
	var opts []client.ListOption
	if sel.Selector != nil && !sel.All {
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel.Selector})
	}
	if err := c.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("listing NodePools: %w", err)
	}
	names := make([]string, len(list.Items))
	for i, np := range list.Items {
		names[i] = np.Name
	}
	sort.Strings(names)
	return names, nil
}

// IsNotFound reports whether a Result's error is a NodePool that does not
// exist.
func IsNotFound(err error) bool { return apierrors.IsNotFound(err) }
