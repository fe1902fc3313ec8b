package eviction

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Kind says what blocks.
type Kind string

const (
	// DoNotDisruptPod is an active pod carrying karpenter.sh/do-not-disrupt.
	DoNotDisruptPod Kind = "do-not-disrupt-pod"
	// PDBAllowsZero is a PodDisruptionBudget selecting a pod that allows
	// zero disruptions now.
	PDBAllowsZero Kind = "pdb"
	// MultiplePDBs is a pod selected by more than one PodDisruptionBudget,
	// which the eviction API refuses to evict.
	MultiplePDBs Kind = "multiple-pdbs"
)

// Blocker is one pod that keeps Karpenter from disrupting its node.
type Blocker struct {
	Kind Kind `json:"kind"`
	// Pod is "namespace/name".
	Pod string `json:"pod"`
	// PDBs are the budgets involved, "namespace/name".
	PDBs []string `json:"pdbs,omitempty"`
	// Until is when a do-not-disrupt duration lapses; nil when the block
	// lasts until someone changes something.
	Until *time.Time `json:"until,omitempty"`
	// Message says it in words, with the fix.
	Message string `json:"message"`
}

// Ignored is a do-not-disrupt annotation that does not block, and why.
type Ignored struct {
	Pod     string `json:"pod"`
	Message string `json:"message"`
}

// Result is what the pods of one node mean for its disruption.
type Result struct {
	Blockers []Blocker `json:"blockers,omitempty"`
	Ignored  []Ignored `json:"ignored,omitempty"`
}

// Check applies Karpenter's rules to the pods of one node at now. pdbs may
// hold budgets of any namespace; each pod meets only its own namespace's.
func Check(pods []*state.Pod, pdbs state.PDBsByNamespace, now time.Time) Result {
	var r Result
	sorted := append([]*state.Pod(nil), pods...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Key() < sorted[j].Key() })
	blocked := map[*state.Pod]bool{}
	for _, p := range sorted {
		if !Active(p) {
			continue
		}
		active, until, why := doNotDisrupt(p, now)
		switch {
		case active:
			blocked[p] = true
			msg := fmt.Sprintf("pod %s has karpenter.sh/do-not-disrupt: %q", p.Key(), p.Annotations[karpenter.DoNotDisruptAnnotation])
			if until != nil {
				msg += fmt.Sprintf(", which holds until %s (%s after the pod started)", until.UTC().Format(time.RFC3339), p.Annotations[karpenter.DoNotDisruptAnnotation])
			}
			r.Blockers = append(r.Blockers, Blocker{Kind: DoNotDisruptPod, Pod: p.Key(), Until: until,
				Message: msg + "; remove the annotation (or delete the pod) to let Karpenter disrupt the node"})
		case why != "":
			r.Ignored = append(r.Ignored, Ignored{Pod: p.Key(), Message: why})
		}
	}
	selectors := compile(pdbs)
	for _, p := range sorted {
		if blocked[p] || !evictable(p) {
			continue
		}
		var matching []*state.PodDisruptionBudget
		for _, b := range pdbs[p.Namespace] {
			if sel := selectors[b]; sel != nil && sel.Matches(labels.Set(p.Labels)) {
				matching = append(matching, b)
			}
		}
		switch {
		case len(matching) > 1:
			keys := make([]string, len(matching))
			for i, b := range matching {
				keys[i] = b.Key()
			}
			r.Blockers = append(r.Blockers, Blocker{Kind: MultiplePDBs, Pod: p.Key(), PDBs: keys,
				Message: fmt.Sprintf("pod %s is selected by %d PodDisruptionBudgets (%s), and the eviction API refuses to evict such a pod; make one budget select it", p.Key(), len(matching), strings.Join(keys, ", "))})
		case len(matching) == 1 && blocksEviction(matching[0], p):
			b := matching[0]
			r.Blockers = append(r.Blockers, Blocker{Kind: PDBAllowsZero, Pod: p.Key(), PDBs: []string{b.Key()},
				Message: fmt.Sprintf("PodDisruptionBudget %s allows 0 disruptions (%s) and selects pod %s", b.Key(), budgetWords(b), p.Key())})
		}
	}
	return r
}

// Active reports whether a pod is neither Succeeded nor Failed, and not
// terminating.
func Active(p *state.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil
}

// Reschedulable returns the pods that would have to move elsewhere if the
// node went: active pods (and terminating StatefulSet pods, whose
// replacement waits for them) that no DaemonSet or Node owns. A node with
// none is empty.
func Reschedulable(pods []*state.Pod) []*state.Pod {
	var out []*state.Pod
	for _, p := range pods {
		terminatingStatefulSet := p.DeletionTimestamp != nil && ownedBy(p, karpenter.OwnerStatefulSetAPIVersion, karpenter.OwnerStatefulSetKind) &&
			p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
		if (Active(p) || terminatingStatefulSet) &&
			!ownedBy(p, karpenter.OwnerDaemonSetAPIVersion, karpenter.OwnerDaemonSetKind) &&
			!ownedBy(p, karpenter.OwnerNodeAPIVersion, karpenter.OwnerNodeKind) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// evictable: Karpenter calls the eviction API for the pod when it drains.
func evictable(p *state.Pod) bool {
	if !Active(p) || ownedBy(p, karpenter.OwnerNodeAPIVersion, karpenter.OwnerNodeKind) {
		return false
	}
	for _, t := range p.Spec.Tolerations {
		if state.ToleratesDisrupted(t) {
			return false
		}
	}
	return true
}

func ownedBy(p *state.Pod, apiVersion, kind string) bool {
	for _, o := range p.OwnerReferences {
		if o.APIVersion == apiVersion && o.Kind == kind {
			return true
		}
	}
	return false
}

// doNotDisrupt reads the annotation as Karpenter does: "true" blocks; a
// positive duration blocks until that long after the pod started (always,
// when the start time is unknown); anything else is ignored, and why says
// so.
func doNotDisrupt(p *state.Pod, now time.Time) (active bool, until *time.Time, why string) {
	v, ok := p.Annotations[karpenter.DoNotDisruptAnnotation]
	if !ok {
		return false, nil, ""
	}
	if v == "true" {
		return true, nil, ""
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return false, nil, fmt.Sprintf("pod %s has karpenter.sh/do-not-disrupt: %q, which Karpenter ignores: write \"true\", or a positive duration such as \"2h\" (Karpenter v1.12 and later)", p.Key(), v)
	}
	if p.Status.StartTime == nil {
		return true, nil, ""
	}
	end := p.Status.StartTime.Add(d)
	if now.Before(end) {
		return true, &end, ""
	}
	return false, nil, fmt.Sprintf("pod %s has karpenter.sh/do-not-disrupt: %q, which lapsed at %s", p.Key(), v, end.UTC().Format(time.RFC3339))
}

// compile converts every budget's selector once. A nil selector selects no
// pod (policy/v1); a selector that does not convert selects none either.
func compile(pdbs state.PDBsByNamespace) map[*state.PodDisruptionBudget]labels.Selector {
	out := map[*state.PodDisruptionBudget]labels.Selector{}
	for _, list := range pdbs {
		for _, b := range list {
			if sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector); err == nil && b.Spec.Selector != nil {
				out[b] = sel
			}
		}
	}
	return out
}

// blocksEviction: the budget allows no disruption now, and the pod is not
// an unhealthy one the budget lets go anyway.
func blocksEviction(b *state.PodDisruptionBudget, p *state.Pod) bool {
	if b.Spec.UnhealthyPodEvictionPolicy != nil && *b.Spec.UnhealthyPodEvictionPolicy == "AlwaysAllow" {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse {
				return false
			}
		}
	}
	return b.Status.DisruptionsAllowed == 0
}

// budgetWords says why a budget allows nothing: "minAvailable 2, 2 of 2
// expected pods healthy".
func budgetWords(b *state.PodDisruptionBudget) string {
	var limit string
	switch {
	case b.Spec.MinAvailable != nil:
		limit = "minAvailable " + b.Spec.MinAvailable.String()
	case b.Spec.MaxUnavailable != nil:
		limit = "maxUnavailable " + b.Spec.MaxUnavailable.String()
	default:
		limit = "no limit written"
	}
	return fmt.Sprintf("%s, %d of %d expected pods healthy, %d needed", limit, b.Status.CurrentHealthy, b.Status.ExpectedPods, b.Status.DesiredHealthy)
}
