// Package twinsync keeps the parameters of karpgate's
// ValidatingAdmissionPolicy (policies/twin) in step with the engine
// karpgate serve judges by: when karpgate.yaml or the Karpenter release
// judged changes, and at every resync, it rewrites the data of each
// binding's ConfigMap that differs from what the engine calls for, so
// that the API server's twins judge by the same approved versions,
// environment, actions and waivable rules as the webhook, also while
// karpgate is down.
//
// It also reads back what the API server enforces: a twin is covered at
// an action while the policy holds karpgate's CEL and the binding of that
// action and its parameters are as karpgate would write them. The
// validating webhook leaves to a covered Warn twin the warning it would
// give itself, so that kubectl shows it once; metrics say which twins are
// covered (karpgate_admission_policy_twin).
//
// The policy and its bindings are the install's (internal/webhookconfig,
// install/): the syncer only reads them, and writes nothing but the
// parameter ConfigMaps.
package twinsync
