package serve

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/webhook/admission"
)

// loopReasons are the budget reasons the disruption loop's lanes follow
// (status, metrics, Events, /explain): those of the release the engine in
// use judges by, so that the loop and the webhooks never disagree and a
// change of the cluster's Karpenter CRDs moves both. Without it a Karpenter
// v1.0 cluster got an Unhealthy lane its Karpenter does not have.
func loopReasons(engines admission.Engines) func() []budget.Reason {
	return func() []budget.Reason {
		return budget.ReasonsOfJudged(engines.Engine().Karpenter())
	}
}

// judgedName names the judged release for /status.
func judgedName(engines admission.Engines) func() string {
	return func() string { return engines.Engine().Karpenter().String() }
}

// judgedInfo exports karpgate_karpenter_judged_info for the engine in use,
// read when scraped: only the current release has a series, and no reload
// path can forget to update it.
type judgedInfo struct{ engines admission.Engines }

const judgedInfoDescHelp = "The Karpenter release karpgate judges objects by (always 1): its version, what chose it (karpgate.yaml karpenterVersion, the CRDs in the cluster, or the linked CRDs) and whether karpgate knows that exact release."

var judgedInfoDesc = prometheus.NewDesc("karpgate_karpenter_judged_info", judgedInfoDescHelp, []string{"version", "source", "exact"}, nil)

func (j judgedInfo) Describe(ch chan<- *prometheus.Desc) { ch <- judgedInfoDesc }

func (j judgedInfo) Collect(ch chan<- prometheus.Metric) {
	e := j.engines.Engine()
	if e == nil {
		return
	}
	k := e.Karpenter()
	ch <- prometheus.MustNewConstMetric(judgedInfoDesc, prometheus.GaugeValue, 1, k.Release.Version.String(), k.Source, strconv.FormatBool(k.Exact))
}
