package conversion

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
)

// The conversion works on JSON-compatible values: map[string]any, []any,
// string, bool, nil, and numbers as int64 (integers) or float64 (anything
// else), which is what internal/manifest produces from YAML. Numbers compare
// by value, so 1 and 1.0 are the same number, as they are in JSON.

// DecodeObject parses one JSON object into JSON-compatible values with
// integers as int64, the form Convert expects.
func DecodeObject(data []byte) (map[string]any, error) {
	v, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a JSON object, got %s", typeName(v))
	}
	return m, nil
}

func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return normalizeNumbers(v)
}

// normalizeNumbers replaces json.Number with int64 or float64.
func normalizeNumbers(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			n, err := normalizeNumbers(c)
			if err != nil {
				return nil, err
			}
			t[k] = n
		}
	case []any:
		for i, c := range t {
			n, err := normalizeNumbers(c)
			if err != nil {
				return nil, err
			}
			t[i] = n
		}
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return i, nil
		}
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return nil, fmt.Errorf("number %s is out of range", t)
		}
		return f, nil
	}
	return v, nil
}

// copyValue deep-copies a JSON-compatible value.
func copyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return copyMap(t)
	case []any:
		out := make([]any, len(t))
		for i, c := range t {
			out[i] = copyValue(c)
		}
		return out
	default:
		return v
	}
}

func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, c := range m {
		out[k] = copyValue(c)
	}
	return out
}

// equalValues reports whether two JSON-compatible values are the same JSON.
func equalValues(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalValues(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case int64, float64, int, int32, float32, uint64:
		xf, ok1 := number(a)
		yf, ok2 := number(b)
		return ok1 && ok2 && xf == yf
	case string, bool, nil:
		return a == b
	default:
		// Not a JSON-compatible type; compare without risking a panic on
		// uncomparable values.
		return reflect.DeepEqual(a, b)
	}
}

// number widens any numeric type to float64, exact for |n| <= 2^53; int64
// values beyond that compare through their float64 image, which is what a
// JSON decoder without UseNumber would see as well.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	case float32:
		return float64(n), true
	}
	return 0, false
}

// isInteger reports whether v is a JSON number without a fractional part.
func isInteger(v any) bool {
	f, ok := number(v)
	return ok && f == math.Trunc(f) && !math.IsInf(f, 0)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a map"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64, int, int32, float32, uint64:
		return "a number"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// Equal reports whether two JSON-compatible values are the same JSON, with
// numbers compared by value.
func Equal(a, b any) bool { return equalValues(a, b) }
