// Package config reads karpgate.yaml, the one settings file shared by
// `karpgate lint` in CI and the admission webhook (where it is mounted from a
// ConfigMap): which objects are production, the target Kubernetes version,
// the approved AMI alias versions, and per rule whether it runs, how severe
// it is and what it does at each enforcement point.
//
// Reading is strict: an unknown key is an error that names the key's path,
// because a misspelt setting that is silently ignored is worse than none.
package config
