// Package controller runs the audit of stored objects in the cluster, on
// the elected leader only: every NodePool, NodeClaim, EC2NodeClass (every
// Karpenter kind the cluster serves) is judged with the current rules and
// karpgate.yaml (package audit) when the audit starts, whenever the
// configuration or policies reload, whenever the object changes (its
// content: not its status, nor the metadata every write bumps), whenever
// what the cross-object rules read changes, and on a resync interval.
//
// What it finds goes where policy tools look:
//   - one OpenReports ClusterReport per object (package audit/report), when
//     the openreports.io CRDs are installed, or more when its results do
//     not fit one (report.Limits; the parts it no longer needs are
//     deleted): written through a coalescing, rate-limited writer, only
//     when a report's content changed, so a full audit after a
//     configuration change writes only the reports it changed, at a pace
//     the API server sets the bounds of;
//   - metrics: karpgate_audit_findings{rule,action}, the objects audited,
//     when the last full audit finished and how long it took, the objects
//     whose reports split or leave results out;
//   - a Warning Event on an object when it newly breaks a deny rule, or
//     its reports newly split or leave results out.
//
// It never writes the audited objects. Its cache holds each object as
// compact JSON (managedFields dropped), not as decoded maps: ten thousand
// NodeClaims cost what their JSON costs. Evaluations are rate-limited
// (--audit-evaluations-per-second), so an audit leaves the webhooks, which
// share the process, their CPU.
//
// Permissions: get, list and watch on the Karpenter kinds; get, list,
// watch, create, update and delete on clusterreports (openreports.io),
// which the install's ValidatingAdmissionPolicy narrows to the reports
// labelled as karpgate's; create and patch on events.
package controller
