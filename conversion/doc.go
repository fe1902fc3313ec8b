// Package conversion converts Karpenter NodePools, NodeClaims and
// EC2NodeClasses between v1beta1 and v1, losslessly, in both directions.
//
// It is pure: an object in, an object out, no I/O. Objects are
// JSON-compatible maps (what internal/manifest and DecodeObject produce), so
// fields karpgate does not model pass through untouched. The only outside
// input is a NodePoolLookup, because a v1 NodeClaim carries its NodePool's
// expireAfter.
//
// # Field rules
//
// They follow Karpenter v1.0.8's conversion webhooks (the facts in
// karpenter-facts.md, "Conversion"); one file per kind:
//
//   - nodepool.go: disruption.expireAfter <-> template.spec.expireAfter;
//     WhenUnderutilized <-> WhenEmptyOrUnderutilized and consolidateAfter;
//     budget reasons; template kubelet and nodeClassRef.
//   - nodeclaim.go: kubelet and nodeClassRef as for NodePools; v1
//     expireAfter from the NodePool named by label karpenter.sh/nodepool
//     (Never when the label or the NodePool is missing, as Karpenter did).
//   - ec2nodeclass.go: amiFamily without amiSelectorTerms <-> an alias term;
//     Ubuntu -> AL2 with Karpenter's root volume and placeholder term.
//   - kubelet.go, nodeclassref.go: the shared kubelet and nodeClassRef
//     rules with Karpenter's compatibility annotations.
//
// Karpenter's compatibility annotations are written with the same keys and
// JSON shapes (same field order) and honoured when present, so Karpenter v1.0
// reads karpgate's output as its own and an object Karpenter converted
// converts the same way here.
//
// # Lossless round trips
//
// Both v1 -> v1beta1 -> v1 and v1beta1 -> v1 -> v1beta1 give back the
// identical object. Instead of one special case per field, Convert converts
// every result straight back and records in an annotation each field the
// way back would not reproduce (restore.go): karpgate.io/restore-v1 on
// v1beta1 objects, karpgate.io/restore-v1beta1 on v1 objects. The next
// conversion consumes it. A record applies only while its field still
// converts to what it recorded, so edits made in the other version win.
// This keeps budget reasons, terminationGracePeriod, consolidateAfter under
// WhenEmptyOrUnderutilized, EC2NodeClass spec.kubelet, a non-default
// nodeClassRef group, NodeClaim status.lastPodEventTime, the spelling of any
// value and any unknown field. Typical objects that began as v1beta1 need no
// record at all; a NodePool or NodeClaim created as v1 and read as v1beta1
// carries one that takes back the nodeclass-reference annotation its way to
// v1 adds (see 6).
//
// # Where karpgate deliberately differs from Karpenter v1.0
//
//  1. WhenUnderutilized with consolidateAfter Never stays Never in v1.
//     Karpenter wrote 0s, turning disabled consolidation on. The way back
//     keeps Never too (v1beta1 allows it with WhenUnderutilized); Karpenter
//     dropped it.
//  2. Nothing is lost (see above). Karpenter dropped budget reasons,
//     terminationGracePeriod, consolidateAfter under
//     WhenEmptyOrUnderutilized, EC2NodeClass kubelet, non-default groups and
//     unknown fields, and re-serialised durations (8h -> 8h0m0s).
//  3. A consolidateAfter other than Never next to WhenUnderutilized (invalid
//     v1beta1, seen only in files) keeps its value in v1, where it is now
//     legal; Karpenter wrote 0s.
//  4. A missing v1beta1 consolidationPolicy counts as its default,
//     WhenUnderutilized (consolidateAfter 0s); Karpenter, which only saw
//     defaulted objects, would have written Never.
//  5. A missing expireAfter or nodeClassRef stays missing, so the target
//     version's default applies; Karpenter wrote Never and an empty reference.
//  6. The nodeclass-reference annotation keeps the v1beta1 reference's empty
//     and unknown fields, which Karpenter's typed encoding dropped (Karpenter
//     ignores them when it reads the annotation). Like Karpenter, karpgate
//     writes it on every conversion of a NodePool or NodeClaim to v1, "null"
//     when there is no reference, so that Karpenter v1.0's conversion,
//     switched back in or left alone after karpgate is uninstalled, reads
//     the same v1beta1 reference karpgate would.
//  7. Compatibility annotations are honoured only while they still describe
//     the object: a recorded nodeClassRef only while it converts to the
//     current v1 reference; the Ubuntu steps only while amiFamily is still
//     AL2 without an alias, and the injected root volume and placeholder term
//     are removed only while unchanged. Karpenter applied them blindly,
//     showing v1beta1 readers stale values after a v1 edit.
//  8. karpenter.sh/stored-version-migrated is kept on the way to v1beta1: it
//     stays true (storage is v1 either way), and dropping it would break the
//     round trip.
//  9. v1 -> v1beta1 of a NodeClaim consults the NodePool lookup too: when the
//     NodePool would give a different expireAfter than the NodeClaim holds,
//     the value rides in the restore annotation, so a v1beta1 write keeps the
//     immutable v1 spec. Karpenter looked up again and the write was
//     rejected.
//  10. Malformed input is an error naming the object and field: wrong kind
//     or version, missing spec, wrong value types in fields the conversion
//     reads (including kubelet fields Karpenter parses at launch time), bad
//     JSON in a compatibility annotation, an unknown or missing amiFamily, a
//     malformed alias or a pinned Windows alias. Karpenter mapped unknown
//     families to Custom and exited the process on a malformed alias.
//  11. A restore annotation for the version an object is already in is an
//     error: karpgate never writes it there and will not let a hand-made
//     annotation rewrite an object.
//  12. A restore annotation on a write is the client's, so karpgate's
//     admission webhook judges a v1beta1 write as the v1 object this
//     package makes of it (RestoreRecords and WithRestoreRecords let it
//     weigh each record) and refuses a karpgate.io/restore-v1 record that
//     would store a judged field the write does not show, unless it gives
//     back what the stored object holds there (for a karpgate.io/ or
//     production key, only while the write leaves that key alone), as every
//     record of an honest round trip does. Judged fields: any karpgate.io/
//     label or annotation (waivers, the waiver record, hold records, the
//     environment label) and the labels and EC2NodeClass tags karpgate.yaml
//     reads to tell production, always; and any field whose value changes
//     what the rules find in the stored object. webhook/admission/records.go
//     has the details.
package conversion
