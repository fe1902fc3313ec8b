// Package lastgood keeps the last configuration and policies that
// compiled in a ConfigMap karpgate owns (karpgate-last-good-policy, in its
// own namespace), so that a karpgate serve that starts while the mounted
// karpgate.yaml or policy ConfigMap is broken serves the last good policy,
// degraded, instead of crash-looping: with Karpenter's CRDs converting
// through karpgate, a crash loop is a Karpenter outage. It implements
// policywatch.LastGood.
package lastgood
