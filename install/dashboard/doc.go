// Package dashboard builds karpgate's Grafana dashboard as JSON from Go: a
// small model of Grafana's dashboard schema (model.go) and the dashboard
// itself (karpgate.go), rows top to bottom as an operator reads them:
// disruption budgets per NodePool, drift rollouts and the rollout guard,
// admission, conversion, and karpgate's own health with the Karpenter
// release each pod judges by.
//
// Every PromQL query is reachable through Queries, so a test can parse each
// with Prometheus's parser and check its metric names against what a
// running karpgate serves on /metrics.
package dashboard
