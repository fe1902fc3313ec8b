package conversion

import (
	"fmt"
	"strings"
)

// Error is a failed conversion of one object: it names the object and wraps
// the FieldError that says which field is wrong and how to fix it.
type Error struct {
	Object string // "NodePool/default"
	Err    error
}

func (e *Error) Error() string { return e.Object + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// FieldError is a problem with one field, named by its path such as
// `spec.disruption.budgets[1]` or `metadata.annotations[compatibility.karpenter.sh/v1beta1-kubelet-conversion]`.
type FieldError struct {
	Path    string
	Problem string
	Fix     string // optional
}

func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	if e.Fix != "" {
		b.WriteString("; ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

func fieldError(path, fix, format string, args ...any) *FieldError {
	return &FieldError{Path: path, Problem: fmt.Sprintf(format, args...), Fix: fix}
}

func wrongType(path string, got any, want string) *FieldError {
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
