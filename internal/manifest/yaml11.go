package manifest

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// YAML11Boolean is a plain scalar that YAML 1.1 reads as a boolean and YAML
// 1.2 as a string: yes, no, on, off, y and n, in their YAML 1.1 spellings.
// kubectl and Helm read manifests with sigs.k8s.io/yaml, which follows YAML
// 1.1 here (kubernetes/kubernetes#34146): `encrypted: yes` reaches the API
// server as true, `team: no` as false and a key `on:` as "true". YAML 1.2
// readers, yaml.v3 (which this package parses with) among them, read the
// strings "yes", "no" and "on". Content holds kubectl's reading; the list
// lets lint say where the two differ.
type YAML11Boolean struct {
	// Path is the field path of the value, or of the entry whose key it is,
	// as kubectl reads it.
	Path string
	// Line and Column are where the scalar is written.
	Line, Column int
	// Text is the scalar as written, such as "yes".
	Text string
	// Value is YAML 1.1's reading.
	Value bool
	// Key is true when the scalar is a mapping key.
	Key bool
}

// yaml11Booleans are the YAML 1.1 spellings of the booleans
// (https://yaml.org/type/bool.html) that YAML 1.2's core schema reads as
// strings; true, True, TRUE, false, False and FALSE are booleans in both.
var yaml11Booleans = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

// yaml11Boolean is kubectl's reading of a plain scalar YAML 1.2 reads as a
// string; ok is false for every other scalar. A quoted scalar, or one with
// an explicit tag (`!!str yes`), is a string to both.
func yaml11Boolean(n *yaml.Node) (value, ok bool) {
	// Every spelling is at most three bytes: most scalars are ruled out
	// before their tag is looked at.
	if len(n.Value) > 3 || n.Style != 0 || n.ShortTag() != "!!str" {
		return false, false
	}
	value, ok = yaml11Booleans[n.Value]
	return value, ok
}

func (d *decoder) note(n *yaml.Node, path string, key, value bool) {
	d.booleans = append(d.booleans, YAML11Boolean{Path: path, Line: n.Line, Column: n.Column, Text: n.Value, Value: value, Key: key})
}

// booleansUnder returns the booleans noted at or under the path prefix
// (the item of a `kind: List`), with paths relative to it.
func (d *decoder) booleansUnder(prefix string) []YAML11Boolean {
	var out []YAML11Boolean
	for _, b := range d.booleans {
		rest, ok := strings.CutPrefix(b.Path, prefix)
		if !ok || rest != "" && rest[0] != '.' && rest[0] != '[' {
			continue
		}
		b.Path = strings.TrimPrefix(rest, ".")
		out = append(out, b)
	}
	return out
}

// key is sentKey, noting a YAML 1.1 boolean.
func (d *decoder) key(n *yaml.Node) (string, error) {
	if b, ok := yaml11Boolean(n); ok {
		name := strconv.FormatBool(b)
		d.note(n, ChildPath(FormatFieldPath(d.path), name), true, b)
		return name, nil
	}
	return sentKey(n)
}

// sentKey is a mapping key as kubectl sends it. sigs.k8s.io/yaml reads a
// plain key as YAML 1.1 reads any scalar, as a boolean, a number or null,
// and writes it back as a JSON key: `on` becomes "true", `0777` becomes
// "511" and `1.0` becomes "1". A null key, or an integer beyond int64, has
// no JSON form, and kubectl refuses the document.
func sentKey(n *yaml.Node) (string, error) {
	if n.Style != 0 {
		return n.Value, nil
	}
	if b, ok := yaml11Boolean(n); ok {
		return strconv.FormatBool(b), nil
	}
	switch n.ShortTag() {
	case "!!null":
		return "", fmt.Errorf("line %d column %d: the mapping key %q is null to kubectl, which cannot send it; quote it", n.Line, n.Column, n.Value)
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return "", fmt.Errorf("line %d: %w", n.Line, err)
		}
		return strconv.FormatBool(b), nil
	case "!!int", "!!float":
		v, err := scalarValue(n)
		if err != nil {
			return "", err
		}
		switch x := v.(type) {
		case int64:
			return strconv.FormatInt(x, 10), nil
		case float64:
			var u uint64
			if n.ShortTag() == "!!int" && n.Decode(&u) == nil {
				return "", fmt.Errorf("line %d column %d: the mapping key %s is an integer too large for kubectl to send; quote it", n.Line, n.Column, n.Value)
			}
			return floatKey(x), nil
		}
	}
	return n.Value, nil
}

// keyIs reports whether the key node is written as name, or is sent as
// name: a field path names keys as kubectl sends them.
func keyIs(n *yaml.Node, name string) bool {
	if n.Value == name {
		return true
	}
	if n.Kind != yaml.ScalarNode || n.Style != 0 {
		return false
	}
	sent, err := sentKey(n)
	return err == nil && sent == name
}

// floatKey writes a float key as sigs.k8s.io/yaml does: the shortest form
// at 32-bit precision, and YAML's names for the infinities and NaN.
func floatKey(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	case math.IsNaN(f):
		return ".nan"
	}
	return strconv.FormatFloat(f, 'g', -1, 32)
}
