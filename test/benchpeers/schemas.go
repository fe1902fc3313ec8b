package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// writeSchemas turns every served version of the CRDs in set into the JSON
// schema files kubeconform reads, at <dir>/<group>/<kind>_<version>.json
// (kind in lower case), and returns the --schema-location template for
// them. The conversion is what kubeconform's openapi2jsonschema.py does by
// default: objects that list properties refuse others below the root, and
// the int-or-string format becomes a oneOf.
func writeSchemas(ctx context.Context, set crdsource.Set, dir string) (string, error) {
	files, err := crdsource.Files(ctx, set)
	if err != nil {
		return "", err
	}
	written := 0
	for _, f := range files {
		var crd struct {
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Kind string `json:"kind"`
				} `json:"names"`
				Versions []struct {
					Name   string `json:"name"`
					Served bool   `json:"served"`
					Schema struct {
						OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(f.Data, &crd); err != nil {
			return "", fmt.Errorf("%s: %w", f.Name, err)
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			schema := jsonSchema(v.Schema.OpenAPIV3Schema, true)
			raw, err := json.MarshalIndent(schema, "", "  ")
			if err != nil {
				return "", err
			}
			name := filepath.Join(dir, crd.Spec.Group, strings.ToLower(crd.Spec.Names.Kind)+"_"+v.Name+".json")
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return "", err
			}
			if err := os.WriteFile(name, raw, 0o644); err != nil {
				return "", err
			}
			written++
		}
	}
	if written == 0 {
		return "", fmt.Errorf("CRD set %s has no served version with a schema", set)
	}
	return filepath.Join(dir, "{{ .Group }}", "{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"), nil
}

// jsonSchema converts one OpenAPI v3 schema node (and everything below it).
func jsonSchema(node any, root bool) any {
	switch n := node.(type) {
	case map[string]any:
		if n["format"] == "int-or-string" {
			return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
		}
		out := make(map[string]any, len(n)+1)
		for k, v := range n {
			out[k] = jsonSchema(v, false)
		}
		if _, has := n["properties"]; has && !root {
			if _, set := n["additionalProperties"]; !set {
				out["additionalProperties"] = false
			}
		}
		return out
	case []any:
		out := make([]any, len(n))
		for i, v := range n {
			out[i] = jsonSchema(v, false)
		}
		return out
	default:
		return node
	}
}
