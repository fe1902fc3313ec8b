// Package preflight checks a cluster, or the manifests in Git, before a
// Karpenter upgrade, and says for each problem which objects it affects and
// the command or edit that fixes it: the work behind `karpgate preflight`.
//
// It is pure: a snapshot (migration/snapshot), the release running
// (DetectRunning) and a target version in, a Report out. Each check lives in its own file and has a stable ID:
//
//	PF100 crds                  CRDs older than v1.0 (no v1, or v1beta1 storage)
//	PF101 stored-versions       v1beta1 still in a CRD's status.storedVersions
//	PF102 kubelet-annotation    NodePools whose kubelet lives only in Karpenter's annotation
//	PF103 compat-annotations    other v1beta1 compatibility annotations v1.1 ignores
//	PF104 ubuntu-incompatible   EC2NodeClasses Karpenter's conversion left with a placeholder AMI
//	PF105 leftover-webhooks     v0.3x validating/mutating webhook configurations
//	PF106 conversion-stanza     CRD conversion webhooks: where they point, whether it answers
//	PF107 v1beta1-documents     v1beta1 documents (and v1beta1-serving CRDs) in files
//	PF108 v1beta1-writers       managedFields written at v1beta1: conversion still needed
//	PF109 uninstall-conversion  what uninstalling karpgate's conversion would change
//	PF110 unreadable            what could not be read
//	PF111 upgrade-path          the release running (--from, Deployment, CRDs) and the target
//	PF112 crds-first            the target's CRDs the cluster lacks or serves otherwise
//	PF113 hash-versions         hash versions and hashed fields that change: re-hash or drift
//	PF114 removed-fields        spec fields the target's CRDs no longer define, set on objects
//
// PF111 to PF114 compare the two releases' facts
// (internal/karpenter/release), so they cover any upgrade karpgate knows
// both ends of.
//
// Severities work as in lint: deny findings block the upgrade (exit 1),
// warnings fail only with --fail-on-warn (exit 2), info never fails.
package preflight
