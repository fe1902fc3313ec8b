package crdschema

import (
	"errors"

	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
)

// Class sorts violations by what is wrong, so that each class can be a rule
// of its own (enabled, graded and waived separately).
type Class string

// The classes, one lint rule each.
const (
	// Required: a required field is missing.
	Required Class = "required"
	// Type: a value of the wrong type (or format, such as a duration).
	Type Class = "type"
	// Enum: a value outside the schema's enum.
	Enum Class = "enum"
	// Pattern: a string that does not match the schema's pattern.
	Pattern Class = "pattern"
	// Bounds: minimum/maximum, length, item or property counts.
	Bounds Class = "bounds"
	// Rule: an x-kubernetes-validations CEL rule failed (or ran out of its
	// cost budget).
	Rule Class = "rule"
	// UnknownField: a field the schema does not declare; kubectl asks for
	// strict field validation, so the API server refuses it.
	UnknownField Class = "unknownField"
	// Metadata: ObjectMeta is malformed or invalid (name, labels,
	// annotations, finalizers, embedded objects' metadata).
	Metadata Class = "metadata"
	// List: duplicate items in an x-kubernetes-list-type set or map.
	List Class = "list"
	// Other: anything else the API server refuses, such as an apiVersion
	// the CRD set does not serve.
	Other Class = "other"
)

// Classes lists every class in rule order.
var Classes = []Class{Required, Type, Enum, Pattern, Bounds, Rule, UnknownField, Metadata, List, Other}

// Violation is one reason the API server would refuse the object.
type Violation struct {
	Class Class `json:"class"`
	// Path is the field path, such as spec.disruption.budgets[0].nodes; ""
	// means the whole object.
	Path string `json:"path"`
	// Message is the API server's own message without the path, such as
	// `Invalid value: "abc": spec.disruption.budgets[0].nodes in body should
	// match '^((100|[0-9]{1,2})%|[0-9]+)$'` or a CEL rule's message.
	Message string `json:"message"`
	// Fix is a suggestion when one is obvious, such as the spelling of a
	// misspelt field; "" otherwise.
	Fix string `json:"fix,omitempty"`
}

// classOfOpenAPI classifies one kube-openapi validation error by its code.
func classOfOpenAPI(err error) Class {
	var v *openapierrors.Validation
	if !errors.As(err, &v) {
		return Other
	}
	switch v.Code() {
	case openapierrors.RequiredFailCode:
		return Required
	case openapierrors.InvalidTypeCode:
		return Type
	case openapierrors.EnumFailCode:
		return Enum
	case openapierrors.PatternFailCode:
		return Pattern
	case openapierrors.TooLongFailCode, openapierrors.TooShortFailCode, openapierrors.MaxFailCode,
		openapierrors.MinFailCode, openapierrors.MultipleOfFailCode, openapierrors.MaxItemsFailCode,
		openapierrors.MinItemsFailCode, openapierrors.TooManyPropertiesCode, openapierrors.TooFewPropertiesCode:
		return Bounds
	case openapierrors.UniqueFailCode:
		return List
	}
	return Other
}

// classOfFieldError classifies an error from the API server's validation
// code when no finer signal exists.
func classOfFieldError(e *field.Error) Class {
	switch e.Type {
	case field.ErrorTypeRequired:
		return Required
	case field.ErrorTypeTypeInvalid:
		return Type
	case field.ErrorTypeNotSupported:
		return Enum
	case field.ErrorTypeTooLong, field.ErrorTypeTooMany:
		return Bounds
	case field.ErrorTypeDuplicate:
		return List
	}
	return Other
}

// blocking reports whether errs hold an error the API server treats as
// blocking CEL: type, required, enum, length and count failures, which would
// make rules evaluate garbage.
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong,
			field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}
