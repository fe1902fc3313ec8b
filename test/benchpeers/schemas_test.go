package main

import (
	"reflect"
	"testing"
)

func TestJSONSchemaAsOpenAPI2JSONSchemaWrites(t *testing.T) {
	in := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"spec": map[string]any{
				"type":       "object",
				"properties": map[string]any{"limit": map[string]any{"format": "int-or-string"}},
			},
			"free": map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": true},
		},
	}
	want := map[string]any{
		"type": "object", // the root keeps accepting other fields
		"properties": map[string]any{
			"spec": map[string]any{
				"type":                 "object",
				"properties":           map[string]any{"limit": map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}},
				"additionalProperties": false,
			},
			"free": map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": true},
		},
	}
	if got := jsonSchema(in, true); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
}
