package serve

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/disruption/controller"
	"github.com/karpgate/karpgate/disruption/rolloutplan"
)

// setupRolloutPlans adds the RolloutPlan controller to the loop's manager,
// on the loop's cache, when the cluster serves the kind. Without the CRD
// (karpgate upgraded without its manifests' CRD) the rest of the loop
// runs, and the log says why plans are not followed.
func setupRolloutPlans(m manager.Manager, l *controller.Loop, reg prometheus.Registerer, log logr.Logger) error {
	served, err := rolloutplan.Served(l.Cluster().GetRESTMapper())
	if err != nil {
		return fmt.Errorf("looking up the RolloutPlan kind: %w", err)
	}
	if !served {
		log.Info("the cluster does not serve RolloutPlans (karpgate.io/v1alpha1): apply the CRD from karpgate's manifests to roll changes in waves")
		return nil
	}
	if err := rolloutplan.Setup(m, l.Cluster(), l.Direct(), rolloutplan.Options{Registerer: reg}); err != nil {
		return fmt.Errorf("the rollout plans' controller: %w", err)
	}
	return nil
}

// rolloutPlansReader is the uncached client the rollout plans' webhook
// lists plans and NodePools' labels with.
func rolloutPlansReader(cfg *rest.Config) (client.Reader, error) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("the rollout plans' webhook client: %w", err)
	}
	return c, nil
}
