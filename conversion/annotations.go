package conversion

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/karpgate/karpgate/internal/karpenter"
)

const annotationsPath = "metadata.annotations"

func annotationPath(key string) string { return childPath(annotationsPath, key) }

// annotationsOf returns metadata.annotations, nil when there are none.
func annotationsOf(obj map[string]any) (map[string]any, error) {
	meta, err := optMap(obj, "metadata", "")
	if err != nil || meta == nil {
		return nil, err
	}
	return optMap(meta, "annotations", "metadata")
}

// getAnnotation reads one annotation; found is false when it is absent.
func getAnnotation(obj map[string]any, key string) (value string, found bool, err error) {
	annotations, err := annotationsOf(obj)
	if err != nil || annotations == nil {
		return "", false, err
	}
	return optString(annotations, key, annotationsPath)
}

// setAnnotation writes one annotation, creating metadata.annotations.
func setAnnotation(obj map[string]any, key, value string) error {
	if _, err := annotationsOf(obj); err != nil {
		return err
	}
	ensureMap(ensureMap(obj, "metadata"), "annotations")[key] = value
	return nil
}

// deleteAnnotation removes one annotation. When that leaves the annotations
// (and then metadata) empty, the empty map goes too: an object without
// annotations converts to one without an `annotations: {}` the other way.
func deleteAnnotation(obj map[string]any, key string) {
	meta, _ := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	if _, ok := annotations[key]; !ok {
		return
	}
	delete(annotations, key)
	if len(annotations) == 0 {
		delete(meta, "annotations")
		if len(meta) == 0 {
			delete(obj, "metadata")
		}
	}
}

// labelOf reads metadata.labels[key].
func labelOf(obj map[string]any, key string) (string, bool, error) {
	meta, err := optMap(obj, "metadata", "")
	if err != nil || meta == nil {
		return "", false, err
	}
	labels, err := optMap(meta, "labels", "metadata")
	if err != nil || labels == nil {
		return "", false, err
	}
	return optString(labels, key, "metadata.labels")
}

// orderedJSON encodes m with the keys in order first, as a Go struct with
// those JSON fields would, then any other keys sorted. Karpenter v1.0 wrote
// its compatibility annotations from structs; writing the same bytes lets an
// object Karpenter converted convert back to exactly what it was.
func orderedJSON(m map[string]any, order []string) (string, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	written := 0
	write := func(k string) error {
		if written > 0 {
			b.WriteByte(',')
		}
		written++
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		value, err := json.Marshal(m[k])
		if err != nil {
			return err
		}
		b.Write(value)
		return nil
	}
	known := make(map[string]bool, len(order))
	for _, k := range order {
		known[k] = true
		if _, ok := m[k]; ok {
			if err := write(k); err != nil {
				return "", err
			}
		}
	}
	for _, k := range sortedKeys(m) {
		if !known[k] {
			if err := write(k); err != nil {
				return "", err
			}
		}
	}
	b.WriteByte('}')
	return b.String(), nil
}

// jsonAnnotation parses a compatibility annotation holding a JSON object, or
// JSON null when allowNull (nil map).
func jsonAnnotation(obj map[string]any, key string, allowNull bool) (m map[string]any, found bool, err error) {
	raw, found, err := getAnnotation(obj, key)
	if err != nil || !found {
		return nil, found, err
	}
	v, err := decodeJSON([]byte(raw))
	if err != nil {
		return nil, true, fieldError(annotationPath(key), "remove the annotation or write the JSON Karpenter v1.0 writes", "not valid JSON: %v", err)
	}
	if v == nil && allowNull {
		return nil, true, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, true, fieldError(annotationPath(key), "remove the annotation or write the JSON Karpenter v1.0 writes", "want a JSON object, got %s", typeName(v))
	}
	return m, true, nil
}

// checkNoForeignRestore rejects karpgate's restore annotation for the
// version an object is already in: karpgate never writes it there, and
// honouring it would let a hand-made annotation rewrite the object.
func checkNoForeignRestore(obj map[string]any, version string) error {
	key := karpenter.RestoreAnnotation(version)
	if _, found, err := getAnnotation(obj, key); err != nil || found {
		if err != nil {
			return err
		}
		return fieldError(annotationPath(key), "remove it", "karpgate writes this annotation only on objects that are not %s", version)
	}
	return nil
}

func describeJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
