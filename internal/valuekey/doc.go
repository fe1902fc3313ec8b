// Package valuekey writes a key for a JSON value: a byte string that two
// values share only when they are the same value. It writes the same key
// for a Go value, as JSON and YAML decoders make them, and for the Rego
// value ast.InterfaceToValue converts it to, so that a memo can be looked
// up with an object before (or without ever) converting it to Rego's
// representation, and filled with either.
//
// The encoding is tagged and length-prefixed, so no two values share a
// key: null "z", booleans "t" and "f", a number "n" and its text and ";"
// (the text ast.InterfaceToValue gives it), a string "s", its length, ":"
// and its bytes, an array "[", its elements and "]", an object "{", its
// keys (as strings) and values in key order and "}". Two numbers written
// differently (1 and 1.0) get different keys: a memo then misses, it never
// confuses them.
//
// A Projection keys part of an object (some of its field paths) the same
// way, without building the part, so that a memo can remember what depends
// on those fields alone.
package valuekey
