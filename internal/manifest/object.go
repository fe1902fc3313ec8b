package manifest

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"go.yaml.in/yaml/v3"
)

// StdinName is the input name that means standard input.
const StdinName = "-"

// Document is one YAML/JSON document of a source and the objects it holds:
// none for an empty document, one normally, several for a `kind: List`.
type Document struct {
	Source  string // file path, or "-" for standard input
	Index   int    // 0-based position of the document in its source
	Raw     RawDocument
	Root    *yaml.Node // the document's content node; nil when empty
	Objects []*Object
}

// Object is one Kubernetes object with the node tree it was decoded from.
type Object struct {
	Source   string
	Document int
	// Item is the object's index inside a `kind: List`, or -1.
	Item int
	// Node is the object's mapping node; its positions are lines and columns
	// in the source, not in the document.
	Node *yaml.Node
	// Content is the object as JSON-compatible values (map[string]any,
	// []any, string, int64, float64, bool, nil), ready for unstructured use.
	Content map[string]any
	// YAML11Booleans are the plain scalars of the object that YAML 1.1
	// reads as booleans and YAML 1.2 as strings (see YAML11Boolean);
	// Content holds them as kubectl reads them.
	YAML11Booleans []YAML11Boolean
}

// DisplaySource names the source for people: "<stdin>" for standard input.
func (o *Object) DisplaySource() string { return DisplayName(o.Source) }

// DisplayName names a source for people.
func DisplayName(source string) string {
	if source == StdinName {
		return "<stdin>"
	}
	return source
}

func (o *Object) str(path ...string) string {
	s, _, _ := unstructured.NestedString(o.Content, path...)
	return s
}

// APIVersion returns the object's apiVersion, or "" when it has none.
func (o *Object) APIVersion() string { return o.str("apiVersion") }

// Kind returns the object's kind, or "".
func (o *Object) Kind() string { return o.str("kind") }

// Name returns metadata.name, or "".
func (o *Object) Name() string { return o.str("metadata", "name") }

// Namespace returns metadata.namespace, or "".
func (o *Object) Namespace() string { return o.str("metadata", "namespace") }

// Ref names the object for messages: "NodePool/default (file.yaml:12)".
func (o *Object) Ref() string {
	name := o.Name()
	if name == "" {
		name = "<unnamed>"
	}
	line := 0
	if o.Node != nil {
		line = o.Node.Line
	}
	return fmt.Sprintf("%s/%s (%s:%d)", o.Kind(), name, o.DisplaySource(), line)
}
