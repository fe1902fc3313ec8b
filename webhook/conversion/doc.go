// Package conversion serves Karpenter's CRD conversion webhook: an
// http.Handler for ConversionReview requests (apiextensions.k8s.io/v1, and
// v1beta1 because Karpenter's CRDs list it first) that converts every object
// with the conversion library to the desired version, in order.
//
// Any error, for any object, fails the whole review with the error message,
// as the API server expects; an unreadable request is a 4xx with a plain
// explanation. The handler checks every converted object against its
// original: a conversion webhook may change nothing in metadata but labels
// and annotations.
//
// NodeClaims need their NodePool's expireAfter; ClientNodePools reads it
// from the cluster, at most once per NodePool per review. When the server
// knows the API server's addresses (Handler.KnownCallersOnly), only the
// API server's reviews get those lookups: a stranger cannot ask /convert
// whether a NodePool exists or what its expireAfter is.
package conversion
