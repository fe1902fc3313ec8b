// Package audit judges objects already stored in a cluster by today's
// rules: the same engine the admission webhook evaluates with, at the
// admission enforcement point (a stored object is judged as its next write
// would be, so a rule switched to deny shows who will be refused), plus the
// cross-object rules, which need every object and so can run nowhere else
// at that point. Rules about a request (what an UPDATE changes, who writes
// a waiver), mutations and lint's CRD schema verdict have nothing to judge
// in a stored object and are left out.
//
// Judge gives one object's Verdict: its findings by action, its waived
// findings, and the rules that passed. Inventory keeps the cross-object
// rules' index of the stored objects up to date one object at a time, so
// that the audit judges those rules again only when what they read
// changes. Package audit/report turns a verdict into an OpenReports
// ClusterReport; audit/controller runs the audit in the cluster; `karpgate
// audit` runs lint over the objects a kubeconfig reaches.
package audit
