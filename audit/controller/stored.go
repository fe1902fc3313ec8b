package controller

import (
	"crypto/sha256"
	"encoding/json"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Stored is an audited object as the audit's cache keeps it: its JSON
// without managedFields, and a hash of what the rules judge.
type Stored struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	// Raw is the object as JSON, without metadata.managedFields.
	Raw []byte
	// Judged hashes the object without its status and the metadata every
	// write changes (resourceVersion, generation): an update that leaves it
	// alone (a NodeClaim's status) is not judged again until the resync.
	Judged [sha256.Size]byte
}

// DeepCopyObject copies the value; Raw is never written after Compact.
func (s *Stored) DeepCopyObject() runtime.Object {
	c := *s
	c.ObjectMeta = *s.ObjectMeta.DeepCopy()
	return &c
}

// Compact is the informers' transform: an unstructured object becomes a
// Stored. Anything else (a deletion tombstone) passes through.
func Compact(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	judged := maps.Clone(u.Object)
	delete(judged, "status")
	if metadata, ok := u.Object["metadata"].(map[string]any); ok {
		m := maps.Clone(metadata)
		delete(m, "resourceVersion")
		delete(m, "generation")
		judged["metadata"] = m
	}
	content, err := json.Marshal(judged) // map keys sorted: one encoding per content
	if err != nil {
		return nil, err
	}
	return &Stored{
		TypeMeta:   metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
		ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), UID: u.GetUID(), ResourceVersion: u.GetResourceVersion()},
		Raw:        raw,
		Judged:     sha256.Sum256(content),
	}, nil
}

// key names an audited object: its kind and name (every Karpenter kind is
// cluster-scoped).
func key(kind, name string) string { return kind + "/" + name }
