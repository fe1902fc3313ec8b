package crdschema

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"

	"github.com/karpgate/karpgate/internal/manifest"
)

// Fixes are offered only when they are obvious from the schema: the
// spelling of a field or enum value, a missing field to add, quotes to add
// or remove. Everything else keeps the API server's message alone.

// fixFor suggests a fix for an OpenAPI violation of obj.
func fixFor(ss *structuralschema.Structural, obj map[string]any, class Class, e *field.Error, cause error) string {
	var v *openapierrors.Validation
	errors.As(cause, &v)
	switch class {
	case Required:
		segs := manifest.ParseFieldPath(e.Field)
		if len(segs) == 0 {
			return ""
		}
		last, parent := segs[len(segs)-1], manifest.FormatFieldPath(segs[:len(segs)-1])
		if last.IsIndex {
			return ""
		}
		where := "at the top level"
		if parent != "" {
			where = "under " + parent
		}
		if s := schemaAt(ss, segs); s != nil && s.ValueValidation != nil && len(s.ValueValidation.Enum) > 0 {
			return fmt.Sprintf("Add %s %s, one of %s.", last.Key, where, enumList(s))
		}
		return fmt.Sprintf("Add %s %s.", last.Key, where)
	case Enum:
		if v == nil {
			return ""
		}
		got, ok := v.Value.(string)
		if !ok {
			return ""
		}
		var supported []string
		for _, value := range v.Values {
			if s, ok := value.(string); ok {
				supported = append(supported, s)
			}
		}
		if best := closest(got, supported); best != "" {
			return fmt.Sprintf("Did you mean %q?", best)
		}
	case Type:
		segs := manifest.ParseFieldPath(e.Field)
		s := schemaAt(ss, segs)
		value, found := valueAt(obj, segs)
		if s == nil || !found {
			return ""
		}
		return typeFix(s, value)
	}
	return ""
}

// typeFix handles the common YAML slip: a number where the schema wants a
// string (quote it), or a quoted number where it wants a number.
func typeFix(s *structuralschema.Structural, value any) string {
	switch s.Type {
	case "string":
		switch value.(type) {
		case int64, float64, bool:
			return fmt.Sprintf("Quote the value: %q.", fmt.Sprint(value))
		}
	case "integer", "number":
		if str, ok := value.(string); ok {
			if _, err := strconv.ParseFloat(str, 64); err == nil {
				return fmt.Sprintf("Remove the quotes: %s.", str)
			}
		}
	}
	return ""
}

// unknownFieldFix suggests the field the author probably meant, or lists
// what is allowed where the unknown field was written.
func unknownFieldFix(ss *structuralschema.Structural, path string) string {
	segs := manifest.ParseFieldPath(path)
	if len(segs) == 0 {
		return ""
	}
	name := segs[len(segs)-1].Key
	var known []string
	if len(segs) == 2 && segs[0].Key == "metadata" {
		known = objectMetaFields
	} else if parent := schemaAt(ss, segs[:len(segs)-1]); parent != nil {
		for k := range parent.Properties {
			known = append(known, k)
		}
		slices.Sort(known)
	}
	if len(known) == 0 {
		return "Remove it."
	}
	if best := closest(name, known); best != "" {
		return fmt.Sprintf("Did you mean %q?", best)
	}
	if len(known) <= 8 {
		return fmt.Sprintf("Remove it; %s allows %s.", orTop(manifest.FormatFieldPath(segs[:len(segs)-1])), strings.Join(known, ", "))
	}
	return "Remove it, or move it to where the CRD declares it."
}

// objectMetaFields are the fields of metadata a manifest may set.
var objectMetaFields = []string{"annotations", "finalizers", "generateName", "labels", "name", "namespace", "ownerReferences"}

func orTop(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

// schemaAt walks the structural schema along a field path; nil when the
// path leaves the schema.
func schemaAt(s *structuralschema.Structural, segs []manifest.PathSegment) *structuralschema.Structural {
	for _, seg := range segs {
		if s == nil {
			return nil
		}
		switch {
		case seg.IsIndex:
			s = s.Items
		default:
			if p, ok := s.Properties[seg.Key]; ok {
				s = &p
			} else if s.AdditionalProperties != nil {
				s = s.AdditionalProperties.Structural
			} else {
				return nil
			}
		}
	}
	return s
}

// valueAt reads the value at a field path of obj.
func valueAt(obj any, segs []manifest.PathSegment) (any, bool) {
	for _, seg := range segs {
		switch x := obj.(type) {
		case map[string]any:
			if seg.IsIndex {
				return nil, false
			}
			v, ok := x[seg.Key]
			if !ok {
				return nil, false
			}
			obj = v
		case []any:
			if !seg.IsIndex || seg.Index < 0 || seg.Index >= len(x) {
				return nil, false
			}
			obj = x[seg.Index]
		default:
			return nil, false
		}
	}
	return obj, true
}

func enumList(s *structuralschema.Structural) string {
	var out []string
	for _, e := range s.ValueValidation.Enum {
		out = append(out, fmt.Sprint(e.Object))
	}
	return strings.Join(out, ", ")
}

// closest returns the candidate a typo most likely meant: equal ignoring
// case, or within an edit distance of a third of its length (at most 3);
// "" when none is close or two are equally close.
func closest(got string, candidates []string) string {
	best, bestDistance, tie := "", 1<<30, false
	for _, c := range candidates {
		if strings.EqualFold(c, got) {
			return c
		}
		d := editDistance(strings.ToLower(got), strings.ToLower(c))
		switch {
		case d < bestDistance:
			best, bestDistance, tie = c, d, false
		case d == bestDistance:
			tie = true
		}
	}
	limit := min(3, max(1, len(got)/3))
	if tie || bestDistance > limit {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
