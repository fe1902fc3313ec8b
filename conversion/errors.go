package conversion

import (
	"fmt"

	"github.com/karpgate/karpgate/internal/fielderr"
)

// Error is a failed conversion of one object: it names the object and wraps
// the fielderr.FieldError that says which field is wrong and how to fix it.
type Error struct {
	Object string // "NodePool/default"
	Err    error
}

func (e *Error) Error() string { return e.Object + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

func fieldError(path, fix, format string, args ...any) *fielderr.FieldError {
	return &fielderr.FieldError{Path: path, Problem: fmt.Sprintf(format, args...), Fix: fix}
}

func wrongType(path string, got any, want string) *fielderr.FieldError {
	return fieldError(path, "", "want %s, got %s", want, typeName(got))
}

// objectName names an object for messages: "NodePool/default".
func objectName(obj map[string]any) string {
	kind, _ := obj["kind"].(string)
	if kind == "" {
		kind = "<no kind>"
	}
	name := "<unnamed>"
	if meta, ok := obj["metadata"].(map[string]any); ok {
		if n, ok := meta["name"].(string); ok && n != "" {
			name = n
		}
	}
	return kind + "/" + name
}
