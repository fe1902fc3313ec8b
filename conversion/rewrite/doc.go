// Package rewrite converts Karpenter v1beta1 manifests in files to v1, the
// work behind `karpgate convert`.
//
// Objects are converted by the conversion package; this package writes the
// result back into the YAML by editing yaml.v3 nodes field by field, so
// comments, key order and quoting survive, and every document it does not
// change is written back byte for byte. Each edited document is read back and
// compared with the converted object before it is used.
//
// Manifests in Git are the v1 source of truth from now on, so the output is
// clean v1 rather than what a conversion webhook stores: a NodePool's kubelet
// block moves into its EC2NodeClass's spec.kubelet (splitting an
// EC2NodeClass shared by NodePools with different kubelet blocks into
// deterministically named copies, and repointing those NodePools), and the
// annotations that only serve a way back to v1beta1 are left out. Every
// change is reported, with the NodePools whose nodes will drift because of it.
package rewrite
