// Package installed follows the Karpenter release whose CRDs a cluster has
// installed: `karpgate serve` judges objects by it (unless karpgate.yaml's
// karpenterVersion chooses), and an upgrade or downgrade of Karpenter's
// CRDs changes its verdicts without a restart. Judge reads the release from
// CRD objects; Watcher keeps it current with a watch on Karpenter's CRDs,
// each by name, so that its RBAC can name them too. ReadCluster reads them
// once, for `karpgate version --cluster`, which names the release serve
// would judge a cluster by, and for status and explain, which report that
// release's disruption reasons.
package installed
