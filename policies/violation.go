package policies

import (
	"encoding/json"
	"strings"
)

// violation is what a rule's `violation` set holds.
type violation struct {
	Msg   string           `json:"msg"`
	Path  string           `json:"path"`
	Fix   string           `json:"fix"`
	Patch []PatchOperation `json:"patch"`
}

// decodeViolation reads a violation as encoding/json would read its JSON
// text into the struct, which is what defines a violation's shape. The
// common case, an object with exactly those member names and string
// values, is read directly: the round trip through JSON text was a fifth
// of the validating webhook's time on an object with a finding. Anything
// else (other spellings, wrong types, numbers float64 cannot hold) takes
// the round trip, so that it is read, or refused, exactly as before.
func decodeViolation(v any) (got violation, err error) {
	if got, ok := readViolation(v); ok {
		return got, nil
	}
	raw, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(raw, &got)
	}
	return got, err
}

func readViolation(v any) (got violation, ok bool) {
	m, isMap := v.(map[string]any)
	if !isMap {
		return got, false
	}
	for k, member := range m {
		switch k {
		case "msg":
			got.Msg, ok = optionalString(member)
		case "path":
			got.Path, ok = optionalString(member)
		case "fix":
			got.Fix, ok = optionalString(member)
		case "patch":
			got.Patch, ok = readPatch(member)
		default:
			// encoding/json matches member names without regard to
			// case: "Msg" would be read as msg.
			ok = !strings.EqualFold(k, "msg") && !strings.EqualFold(k, "path") &&
				!strings.EqualFold(k, "fix") && !strings.EqualFold(k, "patch")
		}
		if !ok {
			return violation{}, false
		}
	}
	return got, true
}

// optionalString is a string member; null leaves it empty, as it does in
// encoding/json.
func optionalString(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case nil:
		return "", true
	}
	return "", false
}

func readPatch(v any) ([]PatchOperation, bool) {
	if v == nil {
		return nil, true
	}
	items, isArray := v.([]any)
	if !isArray {
		return nil, false
	}
	ops := make([]PatchOperation, len(items))
	for i, item := range items {
		m, isMap := item.(map[string]any)
		if !isMap {
			return nil, false
		}
		for k, member := range m {
			var ok bool
			switch k {
			case "op":
				ops[i].Op, ok = optionalString(member)
			case "path":
				ops[i].Path, ok = optionalString(member)
			case "value":
				ops[i].Value, ok = plainJSON(member)
			default:
				ok = !strings.EqualFold(k, "op") && !strings.EqualFold(k, "path") && !strings.EqualFold(k, "value")
			}
			if !ok {
				return nil, false
			}
		}
	}
	return ops, true
}

// plainJSON is v as encoding/json decodes into an interface: numbers are
// float64. v is what Rego results hold, where numbers are json.Number. It
// copies rather than converting in place (as the budget builtins convert
// the values they own): the
// group cache hands the same violations to evaluations running at once.
func plainJSON(v any) (any, bool) {
	switch t := v.(type) {
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, c := range t {
			var ok bool
			if out[k], ok = plainJSON(c); !ok {
				return nil, false
			}
		}
		return out, true
	case []any:
		out := make([]any, len(t))
		for i, c := range t {
			var ok bool
			if out[i], ok = plainJSON(c); !ok {
				return nil, false
			}
		}
		return out, true
	case string, bool, nil:
		return t, true
	}
	return nil, false
}
