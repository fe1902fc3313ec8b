// Pins the prometheus-operator module whose example/prometheus-operator-crd/
// holds the CRDs of the ServiceMonitor and PrometheusRule kinds the
// monitoring manifests create (the same version as the API types karpgate
// builds them from). Tests read the CRD YAML from the module cache; nothing
// is copied.
module github.com/karpgate/karpgate/hack/crds/prometheus-operator-v0.93.1

go 1.26.0

require github.com/prometheus-operator/prometheus-operator v0.93.1
