package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// Draft is the JSON Schema dialect written: the one yaml-language-server
// and most editors understand fully.
const Draft = "https://json-schema.org/draft/2020-12/schema"

// ID is where each release publishes the schema; examples outside this
// repository point their yaml-language-server comment at it.
const ID = "https://github.com/karpgate/karpgate/releases/latest/download/karpgate.schema.json"

// object is one schema node; encoding/json writes its keys sorted, so the
// output is stable.
type object = map[string]any

// Generate writes the schema of karpgate.yaml: the structure from the Go
// types of config.Config (walked by reflection, under their yaml names),
// the descriptions from their doc comments (docs, see ReadDocs), and the
// constraints config's validation applies, from the values it checks
// against.
func Generate(docs Docs) ([]byte, error) {
	g := generator{docs: docs}
	root := g.schemaOf(reflect.TypeFor[config.Config](), "")
	root["$schema"] = Draft
	root["$id"] = ID
	root["title"] = "karpgate.yaml"
	// mutations.pinLatestAlias needs a version to pin to.
	root["if"] = object{
		"properties": object{"mutations": object{"properties": object{"pinLatestAlias": object{"const": true}}, "required": []any{"pinLatestAlias"}}},
		"required":   []any{"mutations"},
	}
	root["then"] = object{
		"properties": object{"amis": object{"properties": object{"approvedAliasVersions": object{"type": "object", "minProperties": 1}}, "required": []any{"approvedAliasVersions"}}},
		"required":   []any{"amis"},
	}
	if len(g.unknown) > 0 {
		return nil, fmt.Errorf("config types the schema cannot describe: %s", strings.Join(g.unknown, ", "))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

type generator struct {
	docs    Docs
	unknown []string
}

var (
	actionType = reflect.TypeFor[config.Action]()
	pointType  = reflect.TypeFor[config.EnforcementPoint]()
)

// schemaOf describes a value of type t at the YAML path path. Every value
// may also be null: an empty YAML key (`amis:`) reads as the zero value,
// which karpgate accepts.
func (g *generator) schemaOf(t reflect.Type, path string) object {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s := object{}
	switch {
	case t == actionType:
		s["enum"] = enumOf(config.Actions)
	case t == pointType:
		s["enum"] = enumOf(config.EnforcementPoints)
	case t.Kind() == reflect.String:
		s["type"] = "string"
	case t.Kind() == reflect.Bool:
		s["type"] = "boolean"
	case t.Kind() == reflect.Slice:
		s["type"] = "array"
		s["items"] = g.schemaOf(t.Elem(), path+"[]")
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		s["type"] = "object"
		s["additionalProperties"] = g.schemaOf(t.Elem(), path+"[]")
		if t.Key() == pointType {
			s["propertyNames"] = object{"enum": enumOf(config.EnforcementPoints)}
		}
	case t.Kind() == reflect.Struct:
		s["type"] = "object"
		s["additionalProperties"] = false
		properties := object{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			fieldPath := strings.TrimPrefix(path+"."+name, ".")
			p := g.schemaOf(f.Type, fieldPath)
			if d := g.docs.field(t.Name(), f.Name); d != "" {
				p["description"] = d
			}
			properties[name] = p
		}
		s["properties"] = properties
		if d := g.docs.types[t.Name()]; d != "" && path == "" {
			s["description"] = d
		}
	default:
		g.unknown = append(g.unknown, fmt.Sprintf("%s (%s)", path, t))
		return s
	}
	if refine, ok := refinements[path]; ok {
		refine(s)
	}
	allowNull(s)
	return s
}

// refinements are the checks of config's validate, by YAML path ("[]"
// stands for any map key or list index). An empty string means unset to
// karpgate, so the patterns admit it.
var refinements = map[string]func(object){
	"apiVersion": func(s object) { delete(s, "type"); s["enum"] = []any{config.APIVersion, ""} },
	"kind":       func(s object) { delete(s, "type"); s["enum"] = []any{config.Kind, ""} },
	"kubernetesVersion": func(s object) {
		s["pattern"] = "^$|" + config.KubernetesVersionPattern.String()
	},
	"karpenterVersion": func(s object) {
		// release.ParseVersion's grammar: vMAJOR.MINOR[.PATCH], no leading zeros.
		s["pattern"] = `^$|^\s*v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))?\s*$`
	},
	"amis.approvedAliasVersions": func(s object) {
		// The families some release karpgate knows can pin (karpenterVersion
		// picks the release; config's validate checks the family against
		// it). Windows aliases can only be @latest: no version to approve.
		var families []any
		for _, r := range release.Known() {
			for _, f := range r.Facts.Schema.AliasFamilies {
				if !f.LatestOnly && !slices.Contains(families, any(f.Family)) {
					families = append(families, f.Family)
				}
			}
		}
		s["propertyNames"] = object{"enum": families}
	},
	"amis.approvedAliasVersions[][]": func(s object) {
		// Only the part after @, and a pinned one.
		s["pattern"] = "^[^@]+$"
		s["not"] = object{"const": "latest"}
	},
}

func allowNull(s object) {
	if t, ok := s["type"].(string); ok {
		s["type"] = []any{t, "null"}
	}
	if e, ok := s["enum"].([]any); ok && !slices.Contains(e, nil) {
		s["enum"] = append(e, nil)
	}
}

func enumOf[T ~string](values []T) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}
