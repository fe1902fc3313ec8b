// Package serve wires `karpgate serve` onto one controller-runtime manager:
//
//   - the webhook server (package webhook) on every replica: /validate and
//     /mutate (webhook/admission) and /convert (webhook/conversion), TLS
//     from --cert-dir with hot reload, bounded concurrency, body size and
//     per-request timeout;
//   - the policy engine, compiled from karpgate.yaml and the policy and data
//     folders and reloaded when they change (policies/policywatch);
//   - the metrics server: /metrics, and the disruption loop's /status;
//   - health probes: /healthz, and /readyz once the policies are compiled
//     and the webhook server answers TLS with its certificate;
//   - on the elected leader only, in a manager of its own: the disruption
//     loop (disruption/controller, --controller) and the audit of stored
//     objects (audit/controller, --audit), each with its own flag; with
//     both off there is nothing to elect a leader for.
//
// `karpgate serve` and `karpgate run` (in-process, for a local cluster)
// both call Run.
package serve
