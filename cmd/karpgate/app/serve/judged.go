package serve

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/webhook/admission"
)

// loopJudged is the release the disruption loop judges by: that of the
// engine in use, so that the loop and the webhooks never disagree and a
// change of the cluster's Karpenter CRDs (or of karpgate.yaml's
// karpenterVersion) moves both. Its reasons are the loop's lanes (status,
// metrics, Events, /explain), and /status and /explain name it as
// `karpgate status` and `karpgate explain` do. Without it a Karpenter v1.0
// cluster got an Unhealthy lane its Karpenter does not have.
func loopJudged(engines admission.Engines) func() release.Judged {
	return func() release.Judged { return engines.Engine().Karpenter() }
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
