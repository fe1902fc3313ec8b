package conversion

import (
	"encoding/json"
	"fmt"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// RestoreRecord is one record of a restore annotation (restore.go), for a
// caller that must decide whether to trust it before Convert applies it:
// the admission webhook, which judges a v1beta1 write as the v1 object the
// API server will store. Convert sets the field at Path to Original
// (removes it when HasOriginal is false) if the field converts to
// Converted (is absent when HasConverted is false).
type RestoreRecord struct {
	Path         []any // string keys and int list indices
	Converted    any
	HasConverted bool
	Original     any
	HasOriginal  bool
}

// FieldPath is the record's path as errors name fields:
// `spec.amiSelectorTerms[0].alias`.
func (r RestoreRecord) FieldPath() string { return FieldPath(r.Path) }

// HeldBy reports whether obj already holds what the record restores: the
// value Original at Path, or no field there when HasOriginal is false.
func (r RestoreRecord) HeldBy(obj map[string]any) bool {
	var v any = obj
	for _, step := range r.Path {
		next, ok := child(v, step)
		if !ok {
			return !r.HasOriginal
		}
		v = next
	}
	return r.HasOriginal && equalValues(v, r.Original)
}

// RestoreRecords decodes the records of obj's restore annotation for
// version, the annotation a conversion of obj to version consumes; nil
// when there is none. An annotation Convert would refuse is an error that
// names it.
func RestoreRecords(obj map[string]any, version string) ([]RestoreRecord, error) {
	key := karpenter.RestoreAnnotation(version)
	raw, found, err := getAnnotation(obj, key)
	if err != nil || !found {
		return nil, err
	}
	_, entries, err := decodeRestore(raw)
	if err != nil {
		return nil, fieldError(annotationPath(key), "remove the annotation; karpgate writes it as {\"records\": [{path, converted, original}]}", "%v", err)
	}
	out := make([]RestoreRecord, len(entries))
	for i, e := range entries {
		out[i] = RestoreRecord{Path: e.path, Converted: e.converted, HasConverted: e.hasConverted, Original: e.original, HasOriginal: e.hasOriginal}
	}
	return out, nil
}

// WithRestoreRecords returns a copy of obj whose restore annotation for
// version keeps only the records keep accepts (by their index in
// RestoreRecords), and whatever else the annotation says about the
// metadata it was put on. Converting the copy is converting obj as if the
// records left out had never been written.
func WithRestoreRecords(obj map[string]any, version string, keep func(i int) bool) (map[string]any, error) {
	key := karpenter.RestoreAnnotation(version)
	raw, found, err := getAnnotation(obj, key)
	if err != nil || !found {
		return copyMap(obj), err
	}
	payload, _, err := decodeRestore(raw)
	if err != nil {
		return nil, fieldError(annotationPath(key), "remove the annotation", "%v", err)
	}
	kept := payload.Records[:0:0]
	for i, r := range payload.Records {
		if keep(i) {
			kept = append(kept, r)
		}
	}
	payload.Records = kept
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", key, err)
	}
	out := copyMap(obj)
	return out, setAnnotation(out, key, string(b))
}
