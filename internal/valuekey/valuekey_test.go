package valuekey

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/karpgate/karpgate/conversion"
)

func astOf(t testing.TB, v any) ast.Value {
	t.Helper()
	value, err := ast.InterfaceToValue(v)
	if err != nil {
		t.Fatal(err)
	}
	return value
}

// A Go value and its Rego conversion share one key, and the key is what
// the package documents.
func TestGoAndRegoValuesShareAKey(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"null", nil, "z"},
		{"booleans", []any{true, false}, "[tf]"},
		{"string", "a:b", "s3:a:b"},
		{"empty string", "", "s0:"},
		{"int", 7, "n7;"},
		{"int64", int64(-7), "n-7;"},
		{"whole float", float64(5), "n5;"},
		{"fraction", 0.25, "n0.25;"},
		{"large float", 1e21, "n1e+21;"},
		{"json.Number", json.Number("1.50"), "n1.50;"},
		{"strings", []string{"b", "a"}, "[s1:bs1:a]"},
		{"object, keys in order", map[string]any{"b": int64(1), "a": map[string]any{}}, "{s1:a{}s1:bn1;}"},
		{"string map", map[string]string{"y": "1", "x": "2"}, "{s1:xs1:2s1:ys1:1}"},
		{"nested", map[string]any{"spec": map[string]any{"budgets": []any{map[string]any{"nodes": "10%"}, nil}}}, "{s4:spec{s7:budgets[{s5:nodess3:10%}z]}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e Encoder
			got, ok := e.AppendGo(nil, tt.v)
			if !ok || string(got) != tt.want {
				t.Errorf("AppendGo: got %q (ok %v), want %q", got, ok, tt.want)
			}
			if got := e.AppendAST(nil, astOf(t, tt.v)); string(got) != tt.want {
				t.Errorf("AppendAST: got %q, want %q", got, tt.want)
			}
		})
	}
}

// Values the two sides cannot agree on are refused on the Go side and get
// a key of their own kind on the Rego side.
func TestUnknownValues(t *testing.T) {
	var e Encoder
	for _, v := range []any{uint64(math.MaxUint64), int32(1), float32(1), map[string]int{"a": 1}, []any{struct{}{}}, map[string]any{"a": []any{1i}}} {
		if _, ok := e.AppendGo(nil, v); ok {
			t.Errorf("%T %v: accepted a type whose conversion the encoder does not mirror", v, v)
		}
		if len(e.goMembers) != 0 {
			t.Errorf("%T: scratch space left behind: %v", v, e.goMembers)
		}
	}
	set := ast.NewSet(ast.StringTerm("a"))
	object := ast.NewObject(ast.Item(ast.IntNumberTerm(1), ast.StringTerm("a")))
	for _, tt := range []struct {
		v    ast.Value
		want string
	}{
		{set, `Xs5:{"a"}`},
		{object, `Xs8:{1: "a"}`},
	} {
		if got := e.AppendAST(nil, tt.v); string(got) != tt.want {
			t.Errorf("%v: got %q, want %q", tt.v, got, tt.want)
		}
	}
}

// FuzzKeys checks, for any two JSON documents read the ways karpgate reads
// objects (numbers as float64, as int64 where whole, as json.Number), that
// the Go key equals the Rego key of the converted value, and that two
// values share a key only when they are equal.
func FuzzKeys(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5,"x",null,true,{}]}`), []byte(`{"a":[1,2.5,"x",null,true,{}]}`))
	f.Add([]byte(`{"a":1}`), []byte(`{"a":1.0}`))
	f.Add([]byte(`["a","b"]`), []byte(`["ab"]`))
	f.Add([]byte(`{"a":"b","c":"d"}`), []byte(`{"a":"b\"c","d":""}`))
	f.Add([]byte(`{"s1:a":1}`), []byte(`{"s":{"1":1}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var e Encoder
		keys := map[string][]ast.Value{}
		for _, doc := range [][]byte{a, b} {
			for _, v := range decodings(doc) {
				goKey, ok := e.AppendGo(nil, v)
				if !ok {
					t.Fatalf("%s: a decoded value refused", doc)
				}
				value, err := ast.InterfaceToValue(v)
				if err != nil {
					continue
				}
				if astKey := e.AppendAST(nil, value); !bytes.Equal(goKey, astKey) {
					t.Fatalf("%s: Go key %q, Rego key %q", doc, goKey, astKey)
				}
				keys[string(goKey)] = append(keys[string(goKey)], value)
			}
		}
		for key, values := range keys {
			for _, v := range values[1:] {
				if v.String() != values[0].String() {
					t.Fatalf("key %q names both %v and %v", key, values[0], v)
				}
			}
		}
	})
}

// decodings reads doc as float64 numbers, as json.Number, and, when it is
// an object, with karpgate's own decoder (integers int64).
func decodings(doc []byte) []any {
	var out []any
	var plain any
	if json.Unmarshal(doc, &plain) != nil {
		return nil
	}
	out = append(out, plain)
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var numbers any
	if d.Decode(&numbers) == nil {
		out = append(out, numbers)
	}
	if object, err := conversion.DecodeObject(doc); err == nil {
		out = append(out, object)
	}
	return out
}
