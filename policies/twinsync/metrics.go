package twinsync

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/karpgate/karpgate/config"
)

var (
	syncs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpgate_admission_policy_syncs_total",
		Help: "Passes over the parameters of the twins' ValidatingAdmissionPolicy, by result: created or updated (a ConfigMap was written), unchanged (all held what karpgate.yaml calls for), failed.",
	}, []string{"result"})
	twins = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "karpgate_admission_policy_twin",
		Help: "One series per rule with a CEL twin that karpgate.yaml switches on, with its action at admission: 1 while the API server enforces the twin as karpgate would write it (policy, binding and parameters), 0 while it does not.",
	}, []string{"rule", "action"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(syncs, twins)
}

// publish sets the twin series: every twin of the built objects that its
// parameters switch on, 1 where covered.
func (s *Syncer) publish(covered map[string]config.Action) {
	twins.Reset()
	if len(s.objs.Params) == 0 {
		return
	}
	data := s.objs.Params[0].Data
	for _, t := range s.twins {
		action, on := data["rule."+t.ID()]
		if !on {
			continue
		}
		v := 0.0
		if covered[t.ID()] == config.Action(action) {
			v = 1
		}
		twins.WithLabelValues(t.ID(), action).Set(v)
	}
}
