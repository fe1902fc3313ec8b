// Package gitops holds what GitOps tools need to read karpgate's own
// objects: the Argo CD health check of RolloutPlans (health.lua, for
// resource.customizations.health.karpgate.io_RolloutPlan in argocd-cm),
// which docs/rollout.md shows. Flux needs nothing: its kstatus reads the
// plan's Ready, Reconciling and Stalled conditions and observedGeneration.
// The tests run the Lua with gopher-lua, the engine Argo CD embeds, and
// kstatus (sigs.k8s.io/cli-utils) on statuses the plan's state machine
// wrote, and check that the guide shows this very script.
package gitops

import _ "embed"

// ArgoCDHealthLua is the Argo CD health check of karpgate.io/RolloutPlan.
//
//go:embed health.lua
var ArgoCDHealthLua string

// ArgoCDHealthKey is the argocd-cm key the script goes under.
const ArgoCDHealthKey = "resource.customizations.health.karpgate.io_RolloutPlan"
