package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/disruption/rolloutplan/membership"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// NewRolloutPlansWebhook is the http.Handler of the rollout plans'
// validating webhook (see PlanValidator).
func NewRolloutPlansWebhook(reader client.Reader, log logr.Logger) http.Handler {
	return newWebhook(&PlanValidator{Reader: reader}, "rolloutplans", log)
}

// PlanValidator keeps every NodePool in at most one RolloutPlan. It
// refuses a RolloutPlan write whose waves would take a NodePool another
// plan has, or whose selectors do not parse, and a NodePool write whose
// labels would put it in two plans, naming the NodePool, both plans and
// their waves. An UPDATE that leaves an overlap the old object already had
// is admitted with a warning, so that a plan or NodePool caught in a race
// past admission can still be edited (the older plan has the NodePool
// meanwhile, see package membership). Reader lists plans and NodePools
// from the API server itself: the writes it judges are rare, and a cache
// could miss the plan written a moment before.
type PlanValidator struct {
	Reader client.Reader
}

// Handle judges one request.
func (v *PlanValidator) Handle(ctx context.Context, req ctrladmission.Request) ctrladmission.Response {
	switch req.Kind.Kind {
	case "RolloutPlan":
		return v.plan(ctx, req)
	case karpenter.KindNodePool:
		return v.nodePool(ctx, req)
	}
	return ctrladmission.Allowed("")
}

func (v *PlanValidator) plan(ctx context.Context, req ctrladmission.Request) ctrladmission.Response {
	plan := &v1alpha1.RolloutPlan{}
	if err := json.Unmarshal(req.Object.Raw, plan); err != nil {
		return ctrladmission.Denied(fmt.Sprintf("RolloutPlan/%s does not decode: %v", req.Name, err))
	}
	if errs := plan.Validate(); len(errs) > 0 {
		return ctrladmission.Denied(fmt.Sprintf("RolloutPlan/%s: %s", plan.Name, errs.ToAggregate().Error()))
	}
	plans, pools, err := v.read(ctx)
	if err != nil {
		return ctrladmission.Errored(http.StatusInternalServerError, err)
	}
	self := membership.Plan{Name: plan.Name, Spec: &plan.Spec}
	overlaps := membership.Overlaps(self, plans, pools)
	if len(overlaps) == 0 {
		return ctrladmission.Allowed("")
	}
	msg := planOverlapMessage(plan, overlaps)
	if req.Operation == admissionv1.Update {
		old := &v1alpha1.RolloutPlan{}
		if json.Unmarshal(req.OldObject.Raw, old) == nil && len(membership.Overlaps(membership.Plan{Name: old.Name, Spec: &old.Spec}, plans, pools)) >= len(overlaps) {
			return ctrladmission.Allowed("").WithWarnings(msg + " (the stored plan already overlapped; the older plan keeps these NodePools)")
		}
	}
	return ctrladmission.Denied(msg)
}

func planOverlapMessage(plan *v1alpha1.RolloutPlan, overlaps []membership.Overlap) string {
	var lines []string
	for _, o := range overlaps {
		lines = append(lines, fmt.Sprintf("spec.waves[%d].nodePoolSelector: NodePool %s is already in rollout plan %s (wave %s)", o.Wave, o.NodePool, o.Other, o.OtherWave))
	}
	return fmt.Sprintf("RolloutPlan/%s takes %d NodePool(s) another plan has:\n%s\na NodePool can be in one rollout plan only (fix: narrow this plan's nodePoolSelector, or change the NodePools' labels so that one plan selects each)",
		plan.Name, len(overlaps), strings.Join(lines, "\n"))
}

func (v *PlanValidator) nodePool(ctx context.Context, req ctrladmission.Request) ctrladmission.Response {
	labelsOf := func(raw []byte) (map[string]string, bool) {
		var obj metav1.PartialObjectMetadata
		if len(raw) == 0 || json.Unmarshal(raw, &obj) != nil {
			return nil, false
		}
		return obj.Labels, true
	}
	newLabels, ok := labelsOf(req.Object.Raw)
	if !ok {
		return ctrladmission.Allowed("") // the other webhooks and the schema judge what does not decode
	}
	plans, pools, err := v.read(ctx)
	if meta.IsNoMatchError(err) || (err == nil && len(plans) == 0) {
		return ctrladmission.Allowed("")
	}
	if err != nil {
		return ctrladmission.Errored(http.StatusInternalServerError, err)
	}
	in := inPlans(req.Name, newLabels, plans, pools)
	if len(in) < 2 {
		return ctrladmission.Allowed("")
	}
	msg := fmt.Sprintf("NodePool/%s: metadata.labels put it in %d rollout plans: %s; a NodePool can be in one rollout plan only (fix: change its labels, or one plan's nodePoolSelector)", req.Name, len(in), strings.Join(in, " and "))
	if oldLabels, ok := labelsOf(req.OldObject.Raw); ok && req.Operation == admissionv1.Update && len(inPlans(req.Name, oldLabels, plans, pools)) >= len(in) {
		return ctrladmission.Allowed("").WithWarnings(msg + " (it already was; the oldest plan has it)")
	}
	return ctrladmission.Denied(msg)
}

// inPlans names the plans (and waves) that would have the NodePool name
// with these labels, each plan judged on every NodePool.
func inPlans(name string, labels map[string]string, plans []membership.Plan, pools []membership.NodePool) []string {
	with := []membership.NodePool{{Name: name, Labels: labels}}
	for _, p := range pools {
		if p.Name != name {
			with = append(with, p)
		}
	}
	var out []string
	for _, p := range plans {
		waves, _ := membership.Assign(p.Spec, with)
		if i := waves.WaveOf(name); i >= 0 {
			out = append(out, fmt.Sprintf("%s (wave %s)", p.Name, p.Spec.Waves[i].Name))
		}
	}
	sort.Strings(out)
	return out
}

// read lists every plan and every NodePool's labels.
func (v *PlanValidator) read(ctx context.Context) ([]membership.Plan, []membership.NodePool, error) {
	var list v1alpha1.RolloutPlanList
	if err := v.Reader.List(ctx, &list); err != nil {
		return nil, nil, fmt.Errorf("listing RolloutPlans: %w", err)
	}
	plans := make([]membership.Plan, len(list.Items))
	for i := range list.Items {
		plans[i] = membership.Plan{Name: list.Items[i].Name, Created: list.Items[i].CreationTimestamp.Time, Spec: &list.Items[i].Spec}
	}
	nps := &metav1.PartialObjectMetadataList{}
	nps.SetGroupVersionKind(schema.GroupVersionKind{Group: karpenter.CoreGroup, Version: karpenter.V1, Kind: karpenter.KindNodePool + "List"})
	if err := v.Reader.List(ctx, nps); err != nil {
		return nil, nil, fmt.Errorf("listing NodePools: %w", err)
	}
	pools := make([]membership.NodePool, len(nps.Items))
	for i, np := range nps.Items {
		pools[i] = membership.NodePool{Name: np.Name, Labels: np.Labels}
	}
	return plans, pools, nil
}
