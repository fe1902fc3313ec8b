package drift

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Pending is a NodeClaim Karpenter will mark AMIDrift when it next checks.
type Pending struct {
	NodeClaim string `json:"nodeClaim"`
	ImageID   string `json:"imageID"`
	// Newest is the AMI Karpenter would launch for the NodeClaim's instance
	// type now; empty when no AMI of the EC2NodeClass is compatible.
	Newest     string `json:"newest,omitempty"`
	NewestName string `json:"newestName,omitempty"`
}

// Undecided is a NodeClaim whose AMI drift cannot be judged, and why.
type Undecided struct {
	NodeClaim string `json:"nodeClaim"`
	Why       string `json:"why"`
}

// AMIOutlook is what WillDrift found for one NodePool.
type AMIOutlook struct {
	Pending   []Pending   `json:"pending,omitempty"`
	Undecided []Undecided `json:"undecided,omitempty"`
}

// WillDrift finds the NodeClaims whose image is not the newest compatible AMI
// of their EC2NodeClass and that Karpenter has not yet marked Drifted.
// NodeClaims that are being deleted, or whose instance is terminating, are
// past drifting and are skipped; so are NodeClaims whose Karpenter check
// would itself fail (no image recorded, EC2NodeClass missing or without
// AMIs): Karpenter marks nothing for those either.
func WillDrift(claims []*state.NodeClaim, classes map[string]*state.EC2NodeClass) AMIOutlook {
	var out AMIOutlook
	for _, nc := range claims {
		if nc.DeletionTimestamp != nil || nc.Condition(karpenter.ConditionDrifted).IsTrue() ||
			nc.Condition(karpenter.ConditionInstanceTerminating).IsTrue() || !state.IsEC2NodeClass(nc.Spec.NodeClassRef) {
			continue
		}
		class := classes[nc.Spec.NodeClassRef.Name]
		if nc.Status.ImageID == "" || class == nil || len(class.Status.AMIs) == 0 {
			continue
		}
		newest, err := NewestCompatible(class.Status.AMIs, nc.Labels)
		if err != nil {
			out.Undecided = append(out.Undecided, Undecided{NodeClaim: nc.Name, Why: err.Error()})
			continue
		}
		if newest != nil && newest.ID == nc.Status.ImageID {
			continue
		}
		p := Pending{NodeClaim: nc.Name, ImageID: nc.Status.ImageID}
		if newest != nil {
			p.Newest, p.NewestName = newest.ID, newest.Name
		}
		out.Pending = append(out.Pending, p)
	}
	sort.Slice(out.Pending, func(i, j int) bool { return out.Pending[i].NodeClaim < out.Pending[j].NodeClaim })
	sort.Slice(out.Undecided, func(i, j int) bool { return out.Undecided[i].NodeClaim < out.Undecided[j].NodeClaim })
	return out
}

// NewestCompatible returns the first AMI in amis (Karpenter's order, newest
// first) whose requirements an instance with labels satisfies, or nil.
func NewestCompatible(amis []state.AMI, labels map[string]string) (*state.AMI, error) {
	for i := range amis {
		ok, err := satisfies(amis[i].Requirements, labels)
		if err != nil {
			return nil, fmt.Errorf("status.amis[%d] (%s): %w", i, amis[i].ID, err)
		}
		if ok {
			return &amis[i], nil
		}
	}
	return nil, nil
}

func satisfies(reqs []corev1.NodeSelectorRequirement, labels map[string]string) (bool, error) {
	for _, r := range reqs {
		if !slices.Contains(karpenter.AMIRequirementLabels, r.Key) {
			return false, fmt.Errorf("requirement on %q, which karpgate does not keep; it cannot tell whether the instance satisfies it", r.Key)
		}
		ok, err := matches(r, labels)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func matches(r corev1.NodeSelectorRequirement, labels map[string]string) (bool, error) {
	v, present := labels[r.Key]
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return present && slices.Contains(r.Values, v), nil
	case corev1.NodeSelectorOpNotIn:
		return !present || !slices.Contains(r.Values, v), nil
	case corev1.NodeSelectorOpExists:
		return present, nil
	case corev1.NodeSelectorOpDoesNotExist:
		return !present, nil
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			return false, fmt.Errorf("requirement %s %s needs exactly one value, has %d", r.Key, r.Operator, len(r.Values))
		}
		bound, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil {
			return false, fmt.Errorf("requirement %s %s %q: not an integer", r.Key, r.Operator, r.Values[0])
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if !present || err != nil {
			return false, nil //nolint:nilerr // as in Karpenter: a label that is absent or not an integer does not satisfy Gt/Lt
		}
		if r.Operator == corev1.NodeSelectorOpGt {
			return n > bound, nil
		}
		return n < bound, nil
	default:
		return false, fmt.Errorf("requirement on %s has unknown operator %q", r.Key, r.Operator)
	}
}
