package serve

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/webhook/admission"
)

// loopReasons are the budget reasons the disruption loop's lanes follow
// (status, metrics, Events, /explain): karpgate.yaml's karpenterVersion as
// last reloaded, else the enum of the cluster's NodePool CRD, read when the
// loop starts (a restarted loop reads it again), else the newest release's.
// Without it a Karpenter v1.0 cluster got an Unhealthy lane its Karpenter
// does not have.
func loopReasons(ctx context.Context, c client.Reader, engines admission.Engines, log logr.Logger) func() []budget.Reason {
	cluster := budget.Reasons
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(budget.CRDKind)
	if err := c.Get(ctx, client.ObjectKey{Name: budget.NodePoolCRDName}, crd); err != nil {
		log.Info("cannot read the NodePool CRD; the loop follows the newest Karpenter release's disruption reasons", "error", err.Error())
	} else if r := budget.ReasonsOfCRD(crd.Object); r != nil {
		cluster = r
	}
	log.Info("disruption reasons of the cluster's NodePool CRD", "reasons", cluster)
	return func() []budget.Reason {
		if v := engines.Engine().Config().KarpenterVersion; v != "" {
			if r, err := budget.ReasonsOf(v); err == nil {
				return r
			}
		}
		return cluster
	}
}
