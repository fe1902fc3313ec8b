package render

import (
	"slices"
	"strconv"
	"strings"

	"github.com/karpgate/karpgate/install"
)

// chartParamsHoles write the data of the twins' parameter ConfigMaps.
// karpgate serve rewrites that data from the karpgate.yaml it loads and the
// Karpenter release it judges, so an upgrade keeps what the cluster holds
// (Helm's lookup) and only a first install writes the data the kustomize
// tree has, from the chart's default karpgate.yaml; `helm template`,
// which reads no cluster, writes that too.
func chartParamsHoles(opts install.Options) ([]hole, error) {
	opts.AdmissionPolicy = true
	set, err := install.Build(opts)
	if err != nil {
		return nil, err
	}
	var holes []hole
	for _, cm := range set.AdmissionPolicyParams {
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range cm.Data {
				if !yield(k) {
					return
				}
			}
		})
		pairs := make([]string, 0, 2*len(keys))
		for _, k := range keys {
			pairs = append(pairs, strconv.Quote(k), strconv.Quote(cm.Data[k]))
		}
		holes = append(holes, hole{
			kind: "ConfigMap", name: cm.Name, path: []string{"data"},
			block: `{{- (lookup "v1" "ConfigMap" .Release.Namespace ` + strconv.Quote(cm.Name) + `).data | default (dict ` +
				strings.Join(pairs, " ") + `) | toYaml | nindent %d }}`,
		})
	}
	return holes, nil
}
