package manifest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
)

// kubectlReads is what kubectl sends for a YAML document: the resource
// builder's YAMLOrJSONDecoder converts it to JSON with sigs.k8s.io/yaml, and
// the API server decodes that JSON as unstructured.
func kubectlReads(doc string) (map[string]any, error) {
	raw, err := k8syaml.ToJSON([]byte(doc))
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, utiljson.Unmarshal(raw, &out)
}

// karpgateReads is Content through the same JSON decoding, so that the two
// compare number for number.
func karpgateReads(t *testing.T, doc string) (map[string]any, *Object, error) {
	t.Helper()
	d, err := ParseDocument("x.yaml", 0, RawDocument{Bytes: []byte(doc), StartLine: 1})
	if err != nil {
		return nil, nil, err
	}
	raw, err := json.Marshal(d.Objects[0].Content)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := utiljson.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out, d.Objects[0], nil
}

// Every scalar reads as kubectl reads it, as a value and as a key, checked
// against kubectl's own decoding code. Non-finite values (.inf, .nan) are
// left out: kubectl cannot send them, and the schema stage reports them.
func TestScalarsReadAsKubectlReadsThem(t *testing.T) {
	scalars := []string{
		"yes", "Yes", "YES", "y", "Y", "no", "No", "NO", "n", "N", "on", "On", "ON", "off", "Off", "OFF",
		"true", "True", "TRUE", "false", "False", "FALSE", "yEs", "oN", "nO",
		`"yes"`, `'on'`, `!!str yes`, `"true"`, `!!str 12`, `!!binary aGVsbG8=`, "2024-01-01 10:00:00",
		"0777", "0o17", "0x1F", "0b101", "1_000", "+12", "-0", "08", "0_7", "+0x1F", "-0x1F",
		"0.0", "1.0", "1e3", "1E3", ".5", "5.", "-.5", "1_0.5", "0.1_0",
		"123456789012345678901", "-9223372036854775809", "9223372036854775807",
		"2024-01-01", "2024-01-01T10:00:00Z", "12:30:00", "1:20", "=", "abc", "a b",
		"~", "null", "Null", "NULL", "9223372036854775808", "0xFFFFFFFFFFFFFFFF",
	}
	for _, s := range scalars {
		for _, asKey := range []bool{false, true} {
			doc := "apiVersion: v1\nkind: X\nspec:\n  a: " + s + "\n"
			if asKey {
				if strings.HasPrefix(s, "!!") {
					continue // a tagged key is a string to both, like a quoted one
				}
				doc = "apiVersion: v1\nkind: X\nspec:\n  " + s + ": v\n"
			} else if s == "0xFFFFFFFFFFFFFFFF" {
				continue // kubectl sends a float; karpgate refuses the integer out of range (known, left alone)
			}
			want, kubectlErr := kubectlReads(doc)
			got, _, err := karpgateReads(t, doc)
			if (kubectlErr != nil) != (err != nil) {
				t.Errorf("%q (key %v): kubectl error %v, karpgate error %v", s, asKey, kubectlErr, err)
				continue
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("%q (key %v): kubectl sends %v, karpgate reads %v", s, asKey, want["spec"], got["spec"])
			}
		}
	}
}

// The YAML 1.1 booleans are noted where they are written, with their path
// in the object as kubectl reads it, in lists, keys and `kind: List` items
// alike; quoted ones, tagged ones and booleans of both versions are not.
func TestYAML11BooleansAreNoted(t *testing.T) {
	doc := `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: a
  labels:
    spot: yes
    quoted: "yes"
    tagged: !!str no
    plain: true
spec:
  tags:
    on: x
  blockDeviceMappings:
    - ebs: {encrypted: Y}
`
	_, obj, err := karpgateReads(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []YAML11Boolean{
		{Path: "metadata.labels.spot", Line: 6, Column: 11, Text: "yes", Value: true},
		{Path: "spec.tags.true", Line: 12, Column: 5, Text: "on", Value: true, Key: true},
		{Path: "spec.blockDeviceMappings[0].ebs.encrypted", Line: 14, Column: 24, Text: "Y", Value: true},
	}
	if !reflect.DeepEqual(obj.YAML11Booleans, want) {
		t.Errorf("noted %+v\nwant %+v", obj.YAML11Booleans, want)
	}
	// Field paths name keys as kubectl sends them, and find them as
	// written: a value's path leads to its key, on its line; a key's path
	// to the key itself.
	for _, b := range want {
		got := obj.Position(b.Path)
		if got.Line != b.Line || b.Key && got.Column != b.Column {
			t.Errorf("%s is at %d:%d, want line %d (column %d for a key)", b.Path, got.Line, got.Column, b.Line, b.Column)
		}
	}

	list := "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: A\n  x: off\n- apiVersion: v1\n  kind: B\n  z: n\n"
	d, err := ParseDocument("list.yaml", 0, RawDocument{Bytes: []byte(list), StartLine: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []YAML11Boolean{
		{Path: "x", Line: 6, Column: 6, Text: "off", Value: false},
		{Path: "z", Line: 9, Column: 6, Text: "n", Value: false},
	} {
		if got := d.Objects[i].YAML11Booleans; !reflect.DeepEqual(got, []YAML11Boolean{want}) {
			t.Errorf("item %d noted %+v, want %+v", i, got, want)
		}
	}
}
