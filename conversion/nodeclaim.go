package conversion

import (
	"errors"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// A NodeClaim follows the NodePool template rules for kubelet and
// nodeClassRef. v1 adds spec.expireAfter, spec.terminationGracePeriod and
// status.lastPodEventTime.

func nodeClaimToV1(e *env, obj map[string]any) error {
	spec, err := specOf(obj)
	if err != nil {
		return err
	}
	if err := kubeletToAnnotation(obj, spec, "spec"); err != nil {
		return err
	}
	if err := nodeClassRefToV1(obj, spec, "spec"); err != nil {
		return err
	}
	expireAfter, err := e.nodePoolExpireAfter(obj)
	if err != nil {
		return err
	}
	spec["expireAfter"] = expireAfter
	return nil
}

// nodePoolExpireAfter is the v1 expireAfter of the NodePool the NodeClaim
// belongs to, or Never when the label or the NodePool is missing, as in
// Karpenter v1.0.
func (e *env) nodePoolExpireAfter(obj map[string]any) (string, error) {
	name, found, err := labelOf(obj, karpenter.NodePoolLabel)
	if err != nil || !found || e.nodePools == nil {
		return karpenter.Never, err
	}
	value, found, err := e.nodePools.ExpireAfter(e.ctx, name)
	var refused *LookupRefused
	switch {
	case errors.As(err, &refused):
		return "", fieldError("spec.expireAfter", refused.Fix, "cannot read expireAfter of NodePool %q: %s", name, refused.Reason)
	case err != nil:
		return "", fieldError("spec.expireAfter", "retry once the NodePool can be read", "reading expireAfter of NodePool %q: %v", name, err)
	}
	if !found {
		return karpenter.Never, nil
	}
	return value, nil
}

func nodeClaimToV1Beta1(_ *env, obj map[string]any) error {
	spec, err := specOf(obj)
	if err != nil {
		return err
	}
	delete(spec, "expireAfter")
	delete(spec, "terminationGracePeriod")
	status, err := optMap(obj, "status", "")
	if err != nil {
		return err
	}
	if status != nil {
		delete(status, "lastPodEventTime")
	}
	if err := kubeletFromAnnotation(obj, spec); err != nil {
		return err
	}
	return nodeClassRefToV1Beta1(obj, spec, "spec")
}
