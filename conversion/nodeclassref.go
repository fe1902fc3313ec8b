package conversion

import (
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// nodeClassRef: v1beta1 {name, kind?, apiVersion?} <-> v1 {group, kind, name}.
// NodePool templates and NodeClaims share these rules.

// nodeClassRefOrder is the field order of Karpenter's v1beta1
// NodeClassReference struct, the order of its annotation JSON.
var nodeClassRefOrder = []string{"kind", "name", "apiVersion"}

// refToV1 rewrites a v1beta1 reference as v1 in place: group is the part of
// apiVersion before "/", kind and group default to EC2NodeClass in
// karpenter.k8s.aws when missing or empty, as in Karpenter v1.0.
func refToV1(ref map[string]any, path string) error {
	if _, _, err := optString(ref, "name", path); err != nil {
		return err
	}
	kind, _, err := optString(ref, "kind", path)
	if err != nil {
		return err
	}
	apiVersion, _, err := optString(ref, "apiVersion", path)
	if err != nil {
		return err
	}
	if kind == "" {
		kind = karpenter.DefaultNodeClassKind
	}
	group := karpenter.DefaultNodeClassGroup
	if apiVersion != "" {
		group, _, _ = strings.Cut(apiVersion, "/")
	}
	delete(ref, "apiVersion")
	ref["group"] = group
	ref["kind"] = kind
	return nil
}

// refToV1Beta1 is Karpenter's way back without the annotation: the group
// goes, kind and name stay. A group other than the default is not lost: the
// restore annotation carries it.
func refToV1Beta1(ref map[string]any) {
	delete(ref, "group")
}

// nodeClassRefToV1 converts spec.nodeClassRef of a v1beta1 NodePool template
// or NodeClaim and records the original reference in the nodeclass-reference
// annotation, as Karpenter v1.0 did on every conversion to v1: JSON "null"
// when there is none. Karpenter v1.0 reads the annotation back when it
// converts to v1beta1, so with it an object converted here reads the same
// through Karpenter's conversion (after switching back to it, or with
// karpgate uninstalled) as through karpgate's. Unlike Karpenter's typed
// encoding, the payload keeps empty and unknown fields, so the way back here
// is exact.
func nodeClassRefToV1(obj, spec map[string]any, specPath string) error {
	ref, err := optMap(spec, "nodeClassRef", specPath)
	if err != nil {
		return err
	}
	payload := "null"
	if ref != nil {
		if payload, err = orderedJSON(ref, nodeClassRefOrder); err != nil {
			return fieldError(childPath(specPath, "nodeClassRef"), "", "cannot encode: %v", err)
		}
		if err := refToV1(ref, childPath(specPath, "nodeClassRef")); err != nil {
			return err
		}
	}
	return setAnnotation(obj, karpenter.NodeClassReferenceCompatibilityAnnotation, payload)
}

// nodeClassRefToV1Beta1 converts spec.nodeClassRef of a v1 NodePool template
// or NodeClaim. The nodeclass-reference annotation gives the original
// v1beta1 reference, but only while it still describes the v1 reference:
// Karpenter let it win even after a v1 edit, showing v1beta1 readers a stale
// reference.
func nodeClassRefToV1Beta1(obj, spec map[string]any, specPath string) error {
	key := karpenter.NodeClassReferenceCompatibilityAnnotation
	recorded, _, err := jsonAnnotation(obj, key, true)
	if err != nil {
		return err
	}
	deleteAnnotation(obj, key)
	ref, err := optMap(spec, "nodeClassRef", specPath)
	if err != nil || ref == nil {
		return err
	}
	if recorded != nil {
		candidate := copyMap(recorded)
		if err := refToV1(candidate, annotationPath(key)); err != nil {
			return err
		}
		if equalValues(candidate, ref) {
			spec["nodeClassRef"] = recorded
			return nil
		}
	}
	refToV1Beta1(ref)
	return nil
}
