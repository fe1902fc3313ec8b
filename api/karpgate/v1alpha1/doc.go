// Package v1alpha1 is karpgate's own API, group karpgate.io: the RolloutPlan,
// a cluster-scoped object that carries a drift rollout through the fleet in
// waves of NodePools (canary first), each released when the one before it
// has been replaced and has stayed healthy for its soak.
//
// The Go types here are the source of the CRD: kubebuilder markers give the
// schema, its defaults and its CEL rules, `make generate` (hack/apigen, with
// controller-tools) writes zz_generated.deepcopy.go and
// api/karpgate/crds/karpgate.io_rolloutplans.yaml, and a test fails when
// either is stale. One file per concern, as Karpenter's pkg/apis/v1 does:
// rolloutplan.go (spec), rolloutplan_status.go (status, conditions),
// rolloutplan_validation.go (what CEL cannot check: label selectors, which
// the API server does not parse), rolloutplan_defaults.go (the gates'
// defaults, applied when read, so that a default changed in a later release
// reaches plans stored before it).
//
// +kubebuilder:object:generate=true
// +groupName=karpgate.io
package v1alpha1
