package render

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Schema is the part of JSON Schema (draft-07) that values.schema.json uses.
type Schema struct {
	Schema           string             `json:"$schema,omitempty"`
	Title            string             `json:"title,omitempty"`
	Description      string             `json:"description,omitempty"`
	Type             any                `json:"type,omitempty"` // a name, or a list of names
	Enum             []string           `json:"enum,omitempty"`
	Pattern          string             `json:"pattern,omitempty"`
	MinLength        *int               `json:"minLength,omitempty"`
	Minimum          *float64           `json:"minimum,omitempty"`
	Maximum          *float64           `json:"maximum,omitempty"`
	ExclusiveMinimum *float64           `json:"exclusiveMinimum,omitempty"`
	ExclusiveMaximum *float64           `json:"exclusiveMaximum,omitempty"`
	Properties       map[string]*Schema `json:"properties,omitempty"`
	// AdditionalProperties is false for structs (a misspelled key is an
	// error) and the value schema for maps.
	AdditionalProperties any     `json:"additionalProperties,omitempty"`
	Items                *Schema `json:"items,omitempty"`
	MinItems             *int    `json:"minItems,omitempty"`
}

func num(v float64) *float64 { return &v }
func intp(v int) *int        { return &v }

// typeSchemas are types whose JSON form is not their Go shape: quantities
// and int-or-strings take either, as Kubernetes reads them.
var typeSchemas = map[reflect.Type]func() *Schema{
	reflect.TypeFor[resource.Quantity]():   func() *Schema { return &Schema{Type: []string{"string", "number"}} },
	reflect.TypeFor[intstr.IntOrString]():  func() *Schema { return &Schema{Type: []string{"string", "integer"}} },
	reflect.TypeFor[metav1.Time]():         func() *Schema { return &Schema{Type: "string"} },
	reflect.TypeFor[metav1.Duration]():     func() *Schema { return &Schema{Type: "string"} },
	reflect.TypeFor[metav1.MicroTime]():    func() *Schema { return &Schema{Type: "string"} },
	reflect.TypeFor[corev1.ResourceName](): func() *Schema { return &Schema{Type: "string"} },
}

// typeEnums are the string types whose values the API server accepts from
// a closed set; the schema catches a wrong case (fail for Fail) at install.
var typeEnums = map[reflect.Type][]string{
	reflect.TypeFor[corev1.PullPolicy]():                         {string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever)},
	reflect.TypeFor[admissionregistrationv1.FailurePolicyType](): {string(admissionregistrationv1.Fail), string(admissionregistrationv1.Ignore)},
	reflect.TypeFor[corev1.NodeSelectorOperator](): {string(corev1.NodeSelectorOpIn), string(corev1.NodeSelectorOpNotIn),
		string(corev1.NodeSelectorOpExists), string(corev1.NodeSelectorOpDoesNotExist), string(corev1.NodeSelectorOpGt), string(corev1.NodeSelectorOpLt)},
	reflect.TypeFor[metav1.LabelSelectorOperator](): {string(metav1.LabelSelectorOpIn), string(metav1.LabelSelectorOpNotIn),
		string(metav1.LabelSelectorOpExists), string(metav1.LabelSelectorOpDoesNotExist)},
}

// ValuesSchema is values.schema.json: the JSON schema of Values, with every
// struct closed to unknown keys and the descriptions of values.yaml.
func ValuesSchema() ([]byte, error) {
	docs := valueDocs()
	root, err := schemaOf(reflect.TypeFor[Values](), "", docs, 0)
	if err != nil {
		return nil, err
	}
	for path := range docs {
		if !hasPath(root, path) {
			return nil, fmt.Errorf("values documentation for %q: Values has no such value", path)
		}
	}
	root.Schema = "http://json-schema.org/draft-07/schema#"
	root.Title = "karpgate Helm chart values"
	// Helm passes a parent chart's global values to a subchart: a chart
	// used as a dependency must accept them.
	root.Properties["global"] = &Schema{Type: "object", Description: "Global values of a parent chart."}
	data, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func schemaOf(t reflect.Type, path string, docs map[string]valueDoc, depth int) (*Schema, error) {
	if depth > 32 {
		return nil, fmt.Errorf("values %s: type %s nests too deep (a recursive type?)", path, t)
	}
	s, err := shapeOf(t, path, docs, depth)
	if err != nil {
		return nil, err
	}
	if d, ok := docs[path]; ok && path != "" {
		s.Description = strings.ReplaceAll(d.comment, "\n", " ")
		if d.schema != nil {
			d.schema(s)
		}
	}
	return s, nil
}

func shapeOf(t reflect.Type, path string, docs map[string]valueDoc, depth int) (*Schema, error) {
	if f, ok := typeSchemas[t]; ok {
		return f(), nil
	}
	if enum, ok := typeEnums[t]; ok {
		return &Schema{Type: "string", Enum: enum}, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem(), path, docs, depth+1)
	case reflect.Struct:
		s := &Schema{Type: "object", AdditionalProperties: false, Properties: map[string]*Schema{}}
		if err := addFields(s, t, path, docs, depth); err != nil {
			return nil, err
		}
		return s, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("values %s: map key %s is not a string", path, t.Key())
		}
		elem, err := schemaOf(t.Elem(), path+".*", docs, depth+1)
		if err != nil {
			return nil, err
		}
		return &Schema{Type: "object", AdditionalProperties: elem}, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return &Schema{Type: "string"}, nil // base64, as encoding/json writes it
		}
		items, err := schemaOf(t.Elem(), path+"[]", docs, depth+1)
		if err != nil {
			return nil, err
		}
		return &Schema{Type: "array", Items: items}, nil
	case reflect.String:
		return &Schema{Type: "string"}, nil
	case reflect.Bool:
		return &Schema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &Schema{Type: "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number"}, nil
	case reflect.Interface:
		return &Schema{}, nil
	}
	return nil, fmt.Errorf("values %s: no JSON schema for Go type %s", path, t)
}

// addFields adds a struct's JSON fields, embedded and inline ones flattened
// as encoding/json and Kubernetes' converters do.
func addFields(s *Schema, t reflect.Type, path string, docs map[string]valueDoc, depth int) error {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" || strings.Contains(opts, "inline") {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if err := addFields(s, ft, path, docs, depth+1); err != nil {
				return err
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		child, err := schemaOf(f.Type, joinPath(path, name), docs, depth+1)
		if err != nil {
			return err
		}
		s.Properties[name] = child
	}
	return nil
}

func hasPath(s *Schema, path string) bool {
	for _, key := range strings.Split(path, ".") {
		if s == nil || s.Properties[key] == nil {
			return false
		}
		s = s.Properties[key]
	}
	return true
}
