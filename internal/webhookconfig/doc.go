// Package webhookconfig builds how the API server calls karpgate: the
// ValidatingWebhookConfiguration and MutatingWebhookConfiguration, and the
// conversion stanza of Karpenter's CRDs, with the names, paths, scope and
// failure policies of the serve contract (internal/deploy), and the match
// conditions that keep writes karpgate has nothing to judge (Karpenter's
// metadata writes, finalizer removal on deletion, the deletion of a
// NodePool karpgate does not hold) from waiting on it. An Endpoint says
// where karpgate listens: a URL for a local run, a Service in a cluster.
package webhookconfig
