package admission

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// What the validating webhook judges of karpgate's holds itself, before
// and apart from the rules: the dates of a hold record or a resume a write
// sets (holdrecord.CheckDates), and the DELETE of a held NodePool. Both
// are karpgate's own state, not policy, so no configuration turns them off
// and no waiver lifts them.

// refuseHoldDates is the denial of a write to a NodePool that dates its
// hold record or resume in the future; nil when there is none.
func refuseHoldDates(r review, now time.Time) *ctrladmission.Response {
	if r.kind != karpenter.KindNodePool {
		return nil
	}
	var before map[string]string
	if r.oldObject != nil {
		before = stringAnnotations(r.oldObject)
	}
	if err := holdrecord.CheckDates(before, stringAnnotations(r.object), now); err != nil {
		resp := ctrladmission.Denied(oneLine(fmt.Sprintf("%s: %v", r.ref, err)))
		return &resp
	}
	return nil
}

// deleteHeld judges the DELETE of a NodePool whose stored object carries a
// hold record (only those reach karpgate: the match condition
// held-delete). A freeze is refused: a person froze drift so that no node
// of the NodePool is replaced, and deleting the NodePool terminates them
// all; the person lifts the freeze first, with `karpgate resume`. A hold
// of the rollout guard (or of any holder but a freeze) does not stop the
// deletion: karpgate placed it by itself, it lifts it by itself when the
// guard is turned off, and deleting the NodePool of a broken rollout is a
// remedy an operator (or a GitOps prune) may choose. Every DELETE that
// reaches karpgate is logged with the user; the allowed one of a held
// NodePool is also answered with a warning.
func (v *Validator) deleteHeld(r review) ctrladmission.Response {
	budgets, _, _ := unstructured.NestedSlice(r.oldObject, "spec", "disruption", "budgets")
	m, index, held := holdrecord.Held(stringAnnotations(r.oldObject), budgets)
	name := objectName(r.oldObject)
	log := v.Log.WithValues("nodepool", name, "user", describeUser(r.user.Username), "dryRun", r.dryRun)
	switch {
	case !held:
		log.Info("NodePool deleted; its karpgate.io/rollout-guard record vouches for no hold")
		countRequest(validating, r, verdictAllowed)
		return ctrladmission.Allowed("")
	case m.Frozen():
		log.Info("refused to delete a frozen NodePool", "since", m.Since, "reason", m.Reason)
		countRequest(validating, r, verdictDenied)
		return ctrladmission.Denied(oneLine(fmt.Sprintf(
			"NodePool %s is frozen: karpgate's freeze (since %s: %s) holds its drift disruptions at zero in spec.disruption.budgets[%d], and deleting the NodePool would terminate every node it has. To delete it deliberately, lift the freeze first with `karpgate resume %s`, then delete it again",
			name, m.Since.UTC().Format(time.RFC3339), m.Reason, index, name)))
	default:
		log.Info("NodePool deleted while karpgate holds it", "holder", m.Holder(), "since", m.Since, "reason", m.Reason)
		countRequest(validating, r, verdictAllowed)
		return ctrladmission.Allowed("").WithWarnings(oneLine(fmt.Sprintf(
			"NodePool %s was held by %s (since %s: %s); deleting it terminates its nodes, those of the held rollout included",
			name, m.Holder(), m.Since.UTC().Format(time.RFC3339), m.Reason)))
	}
}

// stringAnnotations are an object's annotations; the API server decodes
// them as strings before any webhook sees them.
func stringAnnotations(object map[string]any) map[string]string {
	out, _, _ := unstructured.NestedStringMap(object, "metadata", "annotations")
	return out
}
