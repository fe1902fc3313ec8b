package conversion

import (
	"strconv"
	"strings"
)

// Typed access to the fields the conversion reads. Absent and null fields
// read as absent; a field of the wrong type is a fielderr.FieldError naming its path.
// Fields the conversion does not read are never type-checked: they pass
// through untouched.

// childPath appends a map key to a field path, bracketing keys that would be
// ambiguous after a dot (annotation keys, tag keys).
func childPath(path, key string) string {
	if key == "" || strings.ContainsAny(key, ".[]/ ") {
		return path + "[" + key + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// optMap returns parent[key] as a map; nil when absent or null.
func optMap(parent map[string]any, key, path string) (map[string]any, error) {
	v, ok := parent[key]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, wrongType(childPath(path, key), v, "a map")
	}
	return m, nil
}

// optString returns parent[key] as a string; found is false when absent or null.
func optString(parent map[string]any, key, path string) (s string, found bool, err error) {
	v, ok := parent[key]
	if !ok || v == nil {
		return "", false, nil
	}
	s, ok = v.(string)
	if !ok {
		return "", false, wrongType(childPath(path, key), v, "a string")
	}
	return s, true, nil
}

// optList returns parent[key] as a list; found is false when absent or null.
func optList(parent map[string]any, key, path string) (l []any, found bool, err error) {
	v, ok := parent[key]
	if !ok || v == nil {
		return nil, false, nil
	}
	l, ok = v.([]any)
	if !ok {
		return nil, false, wrongType(childPath(path, key), v, "a list")
	}
	return l, true, nil
}

// listOfMaps returns parent[key] as a list whose items are all maps.
func listOfMaps(parent map[string]any, key, path string) ([]map[string]any, bool, error) {
	l, found, err := optList(parent, key, path)
	if err != nil || !found {
		return nil, found, err
	}
	out := make([]map[string]any, len(l))
	for i, item := range l {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, true, wrongType(indexPath(childPath(path, key), i), item, "a map")
		}
		out[i] = m
	}
	return out, true, nil
}

// ensureMap returns parent[key] as a map, creating it when absent or null.
// Callers have already checked its type with optMap.
func ensureMap(parent map[string]any, key string) map[string]any {
	if m, ok := parent[key].(map[string]any); ok {
		return m
	}
	m := map[string]any{}
	parent[key] = m
	return m
}

// isSet reports whether key holds a non-null value.
func isSet(parent map[string]any, key string) bool {
	v, ok := parent[key]
	return ok && v != nil
}

// FieldPath writes a path of map keys (strings) and list indices (ints) the
// way errors name fields: `spec.disruption.budgets[1]`,
// `metadata.annotations[karpenter.sh/nodepool-hash]`.
func FieldPath(steps []any) string {
	s := ""
	for _, step := range steps {
		switch v := step.(type) {
		case string:
			s = childPath(s, v)
		case int:
			s = indexPath(s, v)
		}
	}
	return s
}
