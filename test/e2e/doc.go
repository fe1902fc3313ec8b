// Package e2e drives the real kubectl against a real kube-apiserver and etcd,
// the way a cluster operator would, with the real Karpenter CRDs installed.
package e2e
