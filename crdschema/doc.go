// Package crdschema gives the API server's verdict on creating a custom
// resource, offline. It runs the code kube-apiserver runs for a CRD-backed
// object, from k8s.io/apiextensions-apiserver: the structural schema,
// defaulting, pruning of unknown fields (refused, as `kubectl` asks for
// strict field validation), ObjectMeta checks, OpenAPI validation,
// x-kubernetes-list-type checks and the x-kubernetes-validations CEL rules
// with the API server's cost limits, in the API server's order (CEL is
// skipped when the object already has a blocking error, as there).
//
// A Set is a group of CRDs; each served version compiles once, on first use,
// and is then shared: Create is safe for concurrent use and compiles nothing
// per object. Sets come from the Karpenter release linked into the binary
// (Linked), from CRD manifests (ParseCRDs, LoadFiles) or from whatever the
// caller fetched from a cluster (New).
//
// Differences from a live API server, on purpose: server-set metadata
// (resourceVersion, uid, creationTimestamp, managedFields, ...) and status
// are dropped before validation, so `kubectl get -o yaml` output can be
// checked; admission plugins and webhooks, quota and name conflicts are not
// modelled. Violations keep the API server's own message and add a class
// and, where one is obvious, a fix.
package crdschema
