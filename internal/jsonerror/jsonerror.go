// Package jsonerror describes why a body did not decode as JSON in the
// terms of the JSON a client sent: the byte where it broke, or the field
// whose value has the wrong kind. encoding/json's own messages name Go
// types ("Go struct field ... of type v1.AdmissionRequest"), which mean
// nothing to the sender and tell an attacker what the server is built from.
package jsonerror

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
)

// Describe returns what is wrong with the JSON, and false for an error it
// cannot phrase without Go's terms (log that one instead).
func Describe(err error) (string, bool) {
	var (
		syntax    *json.SyntaxError
		wrongType *json.UnmarshalTypeError
	)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || err.Error() == "unexpected end of JSON input":
		return "the JSON ends early (unexpected end of JSON input)", true
	case errors.As(err, &syntax):
		return fmt.Sprintf("invalid JSON at byte %d (%s)", syntax.Offset, syntax.Error()), true
	case errors.As(err, &wrongType):
		field := wrongType.Field
		if field == "" {
			field = "the body"
		}
		return fmt.Sprintf("%s is a JSON %s where %s belongs", field, wrongType.Value, kind(wrongType.Type)), true
	}
	return "", false
}

// kind names the JSON a Go type reads, without naming the type.
func kind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return kind(t.Elem())
	}
	return "another value"
}
