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

// diffForRestore lists the records that turn converted back into original.
func diffForRestore(original, converted map[string]any) []restoreEntry {
	var out []restoreEntry
	diffValue(nil, original, true, converted, true, &out)
	return out
}

func diffValue(path []any, orig any, hasOrig bool, conv any, hasConv bool, out *[]restoreEntry) {
	if hasOrig && hasConv {
		if om, ok := orig.(map[string]any); ok {
			if cm, ok := conv.(map[string]any); ok {
				keys := make([]string, 0, len(om)+len(cm))
				for k := range om {
					keys = append(keys, k)
				}
				for k := range cm {
					if _, ok := om[k]; !ok {
						keys = append(keys, k)
					}
				}
				sort.Strings(keys)
				for _, k := range keys {
					ov, inOrig := om[k]
					cv, inConv := cm[k]
					diffValue(appendPath(path, k), ov, inOrig, cv, inConv, out)
				}
				return
			}
		}
		if ol, ok := orig.([]any); ok {
			if cl, ok := conv.([]any); ok && len(ol) == len(cl) {
				for i := range ol {
					if !equalValues(ol[i], cl[i]) {
						*out = append(*out, restoreEntry{path: appendPath(path, i), converted: cl[i], hasConverted: true, original: ol[i], hasOriginal: true})
					}
				}
				return
			}
		}
		if equalValues(orig, conv) {
			return
		}
	}
	if !hasOrig && !hasConv {
		return
	}
	*out = append(*out, restoreEntry{path: appendPath(path), converted: conv, hasConverted: hasConv, original: orig, hasOriginal: hasOrig})
}

func appendPath(path []any, step ...any) []any {
	out := make([]any, 0, len(path)+len(step))
	return append(append(out, path...), step...)
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

// checkRestorePath keeps records inside spec, status, labels and
// annotations: a conversion may change nothing else in metadata, and a
// record must not write karpgate's own annotations.
func checkRestorePath(path []any) error {
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

func encodeRestore(entries []restoreEntry) (string, error) {
	out := make([]restoreEntryJSON, len(entries))
	for i, e := range entries {
		out[i].Path = e.path
		if e.hasConverted {
			b, err := json.Marshal(e.converted)
			if err != nil {
				return "", err
			}
			out[i].Converted = b
		}
		if e.hasOriginal {
			b, err := json.Marshal(e.original)
			if err != nil {
				return "", err
			}
			out[i].Original = b
		}
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// takeRestore removes the restore annotation for the version being
// converted to and returns its records.
func takeRestore(obj map[string]any, key string) ([]restoreEntry, error) {
	raw, found, err := getAnnotation(obj, key)
	if err != nil || !found {
		return nil, err
	}
	deleteAnnotation(obj, key)
	entries, err := decodeRestore(raw)
	if err != nil {
		return nil, fieldError(annotationPath(key), "remove the annotation; karpgate wrote it as a JSON list of {path, converted, original}", "%v", err)
	}
	return entries, nil
}

func decodeRestore(raw string) ([]restoreEntry, error) {
	var records []restoreEntryJSON
	if err := json.Unmarshal([]byte(raw), &records); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	entries := make([]restoreEntry, len(records))
	for i, r := range records {
		e := &entries[i]
		for _, step := range r.Path {
			switch s := step.(type) {
			case string:
				e.path = append(e.path, s)
			case float64:
				if s < 0 || s != float64(int(s)) {
					return nil, fmt.Errorf("entry %d: path index %v is not a list index", i, s)
				}
				e.path = append(e.path, int(s))
			default:
				return nil, fmt.Errorf("entry %d: path steps must be strings or list indices", i)
			}
		}
		if err := checkRestorePath(e.path); err != nil {
			return nil, fmt.Errorf("entry %d: %v", i, err)
		}
		var err error
		if e.converted, e.hasConverted, err = decodeRaw(r.Converted); err != nil {
			return nil, fmt.Errorf("entry %d: converted: %v", i, err)
		}
		if e.original, e.hasOriginal, err = decodeRaw(r.Original); err != nil {
			return nil, fmt.Errorf("entry %d: original: %v", i, err)
		}
	}
	return entries, nil
}

func decodeRaw(raw json.RawMessage) (any, bool, error) {
	if len(raw) == 0 {
		return nil, false, nil
	}
	v, err := decodeJSON(raw)
	return v, true, err
}
