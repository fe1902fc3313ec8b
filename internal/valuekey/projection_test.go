package valuekey

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

// FuzzProjectionKey: two values share a memo key exactly when the rules
// would see the same reduced input (the same text: numbers written
// differently, 1 and 1.0, may miss, never collide); a key shared by
// different reductions would hand one object's violations to another. The
// key made from the Go values an object decodes to is the key of their
// Rego conversion.
func FuzzProjectionKey(f *testing.F) {
	seeds := []string{
		`{"spec": {"disruption": {"budgets": [{"nodes": "0"}]}}, "kind": "NodePool"}`,
		`{"spec": {"disruption": {"budgets": [{"nodes": "0"}], "x": 1}}, "kind": "NodePool"}`,
		`{"spec": {"disruption": "budgets"}}`,
		`{"spec": "x"}`,
		`{"spec": {"disruption": {}}}`,
		`{"spec": {}}`,
		`{}`,
		`{"spec": {"amiFamily": {"a": 1}}}`,
		`{"spec": {"amiFamily": "AL2", "disruption": null}}`,
		`{"apiVersion": "v1", "kind": ["NodePool"]}`,
		`{"spec": {"disruption": {"budgets": [1.0]}}}`,
	}
	for i := range seeds {
		f.Add(seeds[i], seeds[(i+1)%len(seeds)])
	}
	p := NewProjection([][]string{{"kind"}, {"apiVersion"}, {"spec", "disruption", "budgets"}, {"spec", "disruption"}}, [][]string{{"spec", "amiFamily"}, {"spec"}})
	var enc Encoder
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, doc := range []string{a, b} {
			// Integers as int64, the rest float64, as objects are decoded.
			d := json.NewDecoder(strings.NewReader(doc))
			d.UseNumber()
			var decoded any
			if d.Decode(&decoded) != nil {
				continue
			}
			goValue, isObject := asDecoded(decoded).(map[string]any)
			if !isObject {
				continue
			}
			regoValue, err := ast.InterfaceToValue(goValue)
			if err != nil {
				continue
			}
			goKey, ok := p.AppendGoKey(&enc, nil, goValue)
			if !ok {
				t.Fatalf("%s: no key from its Go values", doc)
			}
			if regoKey := p.AppendKey(&enc, nil, regoValue); string(goKey) != string(regoKey) {
				t.Fatalf("%s: key %q from its Go values, %q from its Rego conversion", doc, goKey, regoKey)
			}
		}
		va, errA := ast.ParseTerm(a)
		vb, errB := ast.ParseTerm(b)
		if errA != nil || errB != nil || !va.IsGround() || !vb.IsGround() {
			return
		}
		if _, ok := va.Value.(ast.Object); !ok {
			return // the engine reduces input documents, always objects
		}
		if _, ok := vb.Value.(ast.Object); !ok {
			return
		}
		sameKey := string(p.AppendKey(&enc, nil, va.Value)) == string(p.AppendKey(&enc, nil, vb.Value))
		ra, rb := p.Reduce(va.Value), p.Reduce(vb.Value)
		if sameKey && ra.Compare(rb) != 0 {
			t.Fatalf("%s and %s share a key but reduce to %v and %v", a, b, ra, rb)
		}
		if sameText := ra.String() == rb.String(); sameKey != sameText {
			t.Fatalf("%s and %s: same key %v, same reduction %v (%v, %v)", a, b, sameKey, sameText, ra, rb)
		}
	})
}

// asDecoded gives integers as int64 and other numbers as float64, as the
// manifest reader decodes them, where json.Decoder.UseNumber gives
// json.Number.
func asDecoded(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = asDecoded(e)
		}
	case []any:
		for i, e := range v {
			v[i] = asDecoded(e)
		}
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	}
	return v
}
