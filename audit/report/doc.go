// Package report turns the audit's verdict on one stored object into
// OpenReports ClusterReports (openreports.io/v1alpha1, the successor of
// the wgpolicyk8s.io PolicyReport that Kyverno, Policy Reporter and other
// UIs read), scoped to the object and owned by it (deleting the object
// deletes its reports), with one result per rule:
//
//	deny finding     fail  (scored; severity high)
//	warn finding     warn  (severity medium)
//	audit finding    warn  (severity low; property action: audit)
//	waived finding   skip  (properties: the waiver's reason, expiry, author)
//	no finding       pass
//
// Every result carries the rule ID as its policy, and a finding's field
// path, fix and action as properties. A result's timestamp is when it took
// its current form, carried over from the reports before: reports whose
// object and rules did not change are built identical, so the audit writes
// them at most once per change.
//
// Reports always fit: etcd refuses an object over 1.5 MiB, and thousands
// of waiver annotations (each a finding, two without a reason) outgrow
// that. An object's results, most severe first, fill one report of at
// most Limits.MaxBytes of JSON (a message or property is clipped to a few
// KiB first), then further reports named by PartName, up to
// Limits.MaxReports; what still does not fit is left out, least severe
// first, and the first report says so in an omitted-results entry (counts
// by policy and result) and counts it in its summary. Denials are never
// left out: they take as many reports as they need.
package report
