package conversion

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// The restore annotation makes every conversion lossless without a special
// case per field. After converting an object, Convert converts the result
// straight back and compares: wherever the way back would not reproduce the
// original, it records the field's path, what the way back produces there
// ("converted") and what the original held ("original"). On the way back a
// record is applied only while that field still converts to "converted", so
// an edit made in the other version always wins over the record.
//
// Maps are compared key by key; lists of the same length item by item, each
// differing item recorded whole, so that a record about budgets[0] never
// lands on a different budget; lists of different lengths are recorded whole.

// restoreEntry is one record. A missing converted or original means the
// field is absent there.
type restoreEntry struct {
	path         []any // string keys and int indices
	converted    any
	hasConverted bool
	original     any
	hasOriginal  bool
}

type restoreEntryJSON struct {
	Path      []any           `json:"path"`
	Converted json.RawMessage `json:"converted,omitempty"`
	Original  json.RawMessage `json:"original,omitempty"`
}

// diffForRestore lists, sorted by path, the records that turn converted
// back into original.
func diffForRestore(original, converted map[string]any) []restoreEntry {
	var d differ
	d.value(original, true, converted, true)
	sort.Slice(d.out, func(i, j int) bool { return lessPath(d.out[i].path, d.out[j].path) })
	return d.out
}

// differ walks two values with one shared path stack; only a record copies it.
type differ struct {
	path []any
	out  []restoreEntry
}

func (d *differ) value(orig any, hasOrig bool, conv any, hasConv bool) {
	if hasOrig && hasConv {
		if om, ok := orig.(map[string]any); ok {
			if cm, ok := conv.(map[string]any); ok {
				for k, ov := range om {
					cv, inConv := cm[k]
					d.child(k, ov, true, cv, inConv)
				}
				for k, cv := range cm {
					if _, inOrig := om[k]; !inOrig {
						d.child(k, nil, false, cv, true)
					}
				}
				return
			}
		}
		if ol, ok := orig.([]any); ok {
			if cl, ok := conv.([]any); ok && len(ol) == len(cl) {
				for i := range ol {
					if !equalValues(ol[i], cl[i]) {
						d.path = append(d.path, i)
						d.record(ol[i], true, cl[i], true)
						d.path = d.path[:len(d.path)-1]
					}
				}
				return
			}
		}
		if equalValues(orig, conv) {
			return
		}
	}
	if hasOrig || hasConv {
		d.record(orig, hasOrig, conv, hasConv)
	}
}

func (d *differ) child(key string, orig any, hasOrig bool, conv any, hasConv bool) {
	d.path = append(d.path, key)
	d.value(orig, hasOrig, conv, hasConv)
	d.path = d.path[:len(d.path)-1]
}

func (d *differ) record(orig any, hasOrig bool, conv any, hasConv bool) {
	path := append([]any(nil), d.path...)
	d.out = append(d.out, restoreEntry{path: path, converted: conv, hasConverted: hasConv, original: orig, hasOriginal: hasOrig})
}

// lessPath orders paths step by step; a key sorts before an index.
func lessPath(a, b []any) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		as, aIsKey := a[i].(string)
		bs, bIsKey := b[i].(string)
		switch {
		case aIsKey != bIsKey:
			return aIsKey
		case aIsKey && as != bs:
			return as < bs
		case !aIsKey && a[i].(int) != b[i].(int):
			return a[i].(int) < b[i].(int)
		}
	}
	return len(a) < len(b)
}

// apply restores the original value if the field still holds converted.
func (e restoreEntry) apply(obj map[string]any) {
	var parent any = obj
	for _, step := range e.path[:len(e.path)-1] {
		var ok bool
		if parent, ok = child(parent, step); !ok {
			return
		}
	}
	last := e.path[len(e.path)-1]
	switch p := parent.(type) {
	case map[string]any:
		key, ok := last.(string)
		if !ok {
			return
		}
		cur, has := p[key]
		if has != e.hasConverted || (has && !equalValues(cur, e.converted)) {
			return
		}
		if e.hasOriginal {
			p[key] = copyValue(e.original)
		} else {
			delete(p, key)
		}
	case []any:
		i, ok := last.(int)
		if !ok || i < 0 || i >= len(p) || !e.hasConverted || !e.hasOriginal || !equalValues(p[i], e.converted) {
			return
		}
		p[i] = copyValue(e.original)
	}
}

func child(parent any, step any) (any, bool) {
	switch p := parent.(type) {
	case map[string]any:
		key, ok := step.(string)
		if !ok {
			return nil, false
		}
		v, ok := p[key]
		return v, ok
	case []any:
		i, ok := step.(int)
		if !ok || i < 0 || i >= len(p) {
			return nil, false
		}
		return p[i], true
	}
	return nil, false
}

// check keeps records inside spec, status, labels and annotations: a
// conversion may change nothing else in metadata, and a record must not
// write karpgate's own annotations.
func (e restoreEntry) check() error {
	path := e.path
	if len(path) == 0 {
		return fmt.Errorf("empty path")
	}
	switch path[0] {
	case "spec", "status":
		return nil
	case "metadata":
		if len(path) >= 2 && (path[1] == "labels" || path[1] == "annotations") {
			if len(path) >= 3 && (path[2] == karpenter.RestoreV1Annotation || path[2] == karpenter.RestoreV1Beta1Annotation) {
				return fmt.Errorf("path %s rewrites a karpgate restore annotation", describeJSON(path))
			}
			return nil
		}
	}
	return fmt.Errorf("path %s is outside spec, status, metadata.labels and metadata.annotations", describeJSON(path))
}

// restorePayload is the annotation's JSON. Annotations and Metadata say
// what metadata.annotations, or metadata, held before the annotation was
// added when that was empty or null, so that taking the annotation off
// gives back exactly the object it was put on.
type restorePayload struct {
	Records     []restoreEntryJSON `json:"records"`
	Annotations json.RawMessage    `json:"annotations,omitempty"`
	Metadata    json.RawMessage    `json:"metadata,omitempty"`
}

// putRestore adds the restore annotation key holding entries to obj.
func putRestore(obj map[string]any, key string, entries []restoreEntry) error {
	var payload restorePayload
	var err error
	marshal := func(v any) json.RawMessage {
		b, e := json.Marshal(v)
		if e != nil && err == nil {
			err = e
		}
		return b
	}
	payload.Records = make([]restoreEntryJSON, len(entries))
	for i, e := range entries {
		payload.Records[i].Path = e.path
		if e.hasConverted {
			payload.Records[i].Converted = marshal(e.converted)
		}
		if e.hasOriginal {
			payload.Records[i].Original = marshal(e.original)
		}
	}
	meta, hasMeta := obj["metadata"]
	if metaMap, ok := meta.(map[string]any); ok {
		if annotations, has := metaMap["annotations"]; has && isEmpty(annotations) {
			payload.Annotations = marshal(annotations)
		} else if !has && len(metaMap) == 0 {
			payload.Metadata = marshal(meta)
		}
	} else if hasMeta && meta == nil {
		payload.Metadata = marshal(meta)
	}
	if err != nil {
		return fmt.Errorf("encoding %s: %w", key, err)
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", key, err)
	}
	return setAnnotation(obj, key, string(b))
}

func isEmpty(v any) bool {
	m, ok := v.(map[string]any)
	return v == nil || (ok && len(m) == 0)
}

// takeRestore removes the restore annotation for the version being
// converted to, leaving the object as it was before the annotation was put
// on, and returns its records.
func takeRestore(obj map[string]any, key string) ([]restoreEntry, error) {
	raw, found, err := getAnnotation(obj, key)
	if err != nil || !found {
		return nil, err
	}
	payload, entries, err := decodeRestore(raw)
	if err != nil {
		return nil, fieldError(annotationPath(key), "remove the annotation; karpgate writes it as {\"records\": [{path, converted, original}]}", "%v", err)
	}
	deleteAnnotation(obj, key)
	if len(payload.Annotations) > 0 {
		v, _, _ := decodeRaw(payload.Annotations)
		if !isEmpty(v) {
			return nil, fieldError(annotationPath(key), "remove the annotation", "annotations must be {} or null")
		}
		ensureMap(obj, "metadata")["annotations"] = v
	} else if len(payload.Metadata) > 0 {
		v, _, _ := decodeRaw(payload.Metadata)
		if _, has := obj["metadata"]; !isEmpty(v) || has {
			return nil, fieldError(annotationPath(key), "remove the annotation", "metadata must be {} or null, and only stand for a metadata that is gone")
		}
		obj["metadata"] = v
	}
	return entries, nil
}

func decodeRestore(raw string) (restorePayload, []restoreEntry, error) {
	var payload restorePayload
	if err := json.Unmarshal([]byte(raw), &payload); err != nil {
		return payload, nil, fmt.Errorf("not valid JSON: %w", err)
	}
	entries := make([]restoreEntry, len(payload.Records))
	for i, r := range payload.Records {
		e := &entries[i]
		for _, step := range r.Path {
			switch s := step.(type) {
			case string:
				e.path = append(e.path, s)
			case float64:
				if s < 0 || s > 1<<30 || s != float64(int(s)) {
					return payload, nil, fmt.Errorf("record %d: path index %v is not a list index", i, s)
				}
				e.path = append(e.path, int(s))
			default:
				return payload, nil, fmt.Errorf("record %d: path steps must be strings or list indices", i)
			}
		}
		var err error
		if e.converted, e.hasConverted, err = decodeRaw(r.Converted); err != nil {
			return payload, nil, fmt.Errorf("record %d: converted: %w", i, err)
		}
		if e.original, e.hasOriginal, err = decodeRaw(r.Original); err != nil {
			return payload, nil, fmt.Errorf("record %d: original: %w", i, err)
		}
		if err := e.check(); err != nil {
			return payload, nil, fmt.Errorf("record %d: %w", i, err)
		}
	}
	return payload, entries, nil
}

func decodeRaw(raw json.RawMessage) (any, bool, error) {
	if len(raw) == 0 {
		return nil, false, nil
	}
	v, err := decodeJSON(raw)
	return v, true, err
}

// RestoredFields lists the field paths (`spec.template.spec.resources`) that
// obj's restore annotation for version holds: what the object would lose if
// the annotation were dropped instead of converted back to version.
func RestoredFields(obj map[string]any, version string) ([]string, error) {
	key := karpenter.RestoreAnnotation(version)
	raw, found, err := getAnnotation(obj, key)
	if err != nil || !found {
		return nil, err
	}
	_, entries, err := decodeRestore(raw)
	if err != nil {
		return nil, fieldError(annotationPath(key), "", "%v", err)
	}
	paths := make([]string, len(entries))
	for i, e := range entries {
		paths[i] = FieldPath(e.path)
	}
	return paths, nil
}
