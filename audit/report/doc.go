// Package report turns the audit's verdict on one stored object into an
// OpenReports ClusterReport (openreports.io/v1alpha1, the successor of the
// wgpolicyk8s.io PolicyReport that Kyverno, Policy Reporter and other UIs
// read): one report per object, scoped to it and owned by it (deleting the
// object deletes its report), with one result per rule:
//
//	deny finding     fail  (scored; severity high)
//	warn finding     warn  (severity medium)
//	audit finding    warn  (severity low; property action: audit)
//	waived finding   skip  (properties: the waiver's reason, expiry, author)
//	no finding       pass
//
// Every result carries the rule ID as its policy, and a finding's field
// path, fix and action as properties. A result's timestamp is when it took
// its current form, carried over from the report before: a report whose
// object and rules did not change is built identical, so the audit writes
// it at most once per change.
package report
