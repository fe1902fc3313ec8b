// Package clusterread reads every stored Karpenter object a kubeconfig
// reaches, for `karpgate audit`: each Karpenter kind the cluster serves, at
// the version the API server prefers, page by page. Each object becomes a
// lint input rendered as `kubectl get -o yaml` renders it (keys sorted,
// managedFields left out) and named as kubectl names it
// (nodepool.karpenter.sh/default), so that a finding's line and column
// point into what `kubectl get nodepool default -o yaml` shows.
package clusterread
