package config

import (
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

var configType = reflect.TypeFor[Config]()

type unknownKeyError struct {
	path, msg string
}

// checkKnownKeys walks node beside the Go type t and reports the first
// mapping key that t has no field for. yaml.v3's KnownFields reports only a
// line and a Go type name; people need the key's path in their file.
func checkKnownKeys(node *yaml.Node, t reflect.Type, path string) *unknownKeyError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if node.Kind == yaml.AliasNode {
		node = node.Alias
	}
	switch t.Kind() {
	case reflect.Struct:
		if node.Kind != yaml.MappingNode {
			return nil // a type error; Decode reports it with its line
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(node.Content); i += 2 {
			key := node.Content[i].Value
			keyPath := joinPath(path, key, false)
			field, ok := fields[key]
			if !ok {
				return &unknownKeyError{path: keyPath, msg: fmt.Sprintf("unknown key %q; known keys here: %s", key, strings.Join(fieldNames(t), ", "))}
			}
			if err := checkKnownKeys(node.Content[i+1], field.Type, keyPath); err != nil {
				return err
			}
		}
	case reflect.Map:
		if node.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(node.Content); i += 2 {
			if err := checkKnownKeys(node.Content[i+1], t.Elem(), joinPath(path, node.Content[i].Value, true)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if node.Kind != yaml.SequenceNode {
			return nil
		}
		for i, item := range node.Content {
			if err := checkKnownKeys(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// joinPath extends a field path; map keys go in brackets because rule IDs
// and label keys may hold dots.
func joinPath(path, key string, mapKey bool) string {
	switch {
	case mapKey:
		return path + "[" + key + "]"
	case path == "":
		return key
	default:
		return path + "." + key
	}
}

func yamlFields(t reflect.Type) map[string]reflect.StructField {
	fields := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f
	}
	return fields
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name != "-" && name != "" {
			names = append(names, name)
		}
	}
	return names
}
