package treepatch

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/karpgate/karpgate/conversion"
)

const nodePool = `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"default","labels":{"team":"a"}},
"spec":{"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},
"requirements":[{"key":"kubernetes.io/arch","operator":"In","values":["amd64"]},{"key":"karpenter.sh/capacity-type","operator":"In","values":["spot"]}]}},
"disruption":{"consolidationPolicy":"WhenEmptyOrUnderutilized","budgets":[{"nodes":"10%"}]},"limits":{"cpu":1000},"weight":10,"empty":null}}`

func TestApply(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		ops  []Operation
		want string // the document after the patch; "" when it does not apply
		// wantErr is what the error says, when the patch does not apply.
		wantErr string
		// unsupported: Apply leaves the patch to json-patch v4.
		unsupported bool
	}{
		{
			name: "add a label",
			ops:  []Operation{{Op: "add", Path: "/metadata/labels/env", Value: "prod"}},
			want: `{"metadata":{"labels":{"team":"a","env":"prod"}}}`,
		},
		{
			name: "add replaces a member that is there",
			ops:  []Operation{{Op: "add", Path: "/metadata/labels/team", Value: "b"}},
			want: `{"metadata":{"labels":{"team":"b"}}}`,
		},
		{
			name:    "add an object under a missing parent does not apply",
			ops:     []Operation{{Op: "add", Path: "/metadata/annotations/a", Value: "x"}},
			wantErr: "operation 0 (add /metadata/annotations/a): /metadata/annotations does not exist",
		},
		{
			name:    "add through null does not apply",
			ops:     []Operation{{Op: "add", Path: "/spec/empty/a", Value: "x"}},
			wantErr: "/spec/empty is null, so it has no members",
		},
		{
			name:    "add through a string does not apply",
			ops:     []Operation{{Op: "add", Path: "/kind/a", Value: "x"}},
			wantErr: "/kind is a string, not an object or an array",
		},
		{
			name: "add appends with -",
			ops:  []Operation{{Op: "add", Path: "/spec/disruption/budgets/-", Value: map[string]any{"nodes": "0"}}},
			want: `{"spec":{"disruption":{"budgets":[{"nodes":"10%"},{"nodes":"0"}]}}}`,
		},
		{
			name: "add inserts at an index",
			ops:  []Operation{{Op: "add", Path: "/spec/disruption/budgets/0", Value: map[string]any{"nodes": "0"}}},
			want: `{"spec":{"disruption":{"budgets":[{"nodes":"0"},{"nodes":"10%"}]}}}`,
		},
		{
			name: "add at the length appends",
			ops:  []Operation{{Op: "add", Path: "/spec/disruption/budgets/1", Value: "x"}},
			want: `{"spec":{"disruption":{"budgets":[{"nodes":"10%"},"x"]}}}`,
		},
		{
			name:    "add past the length does not apply",
			ops:     []Operation{{Op: "add", Path: "/spec/disruption/budgets/2", Value: "x"}},
			wantErr: "/spec/disruption/budgets/2 is past the end of an array of 1",
		},
		{
			name: "a later operation sees an earlier one",
			ops: []Operation{
				{Op: "add", Path: "/metadata/annotations", Value: map[string]any{}},
				{Op: "add", Path: "/metadata/annotations/karpgate.io~1pinned", Value: "true"},
			},
			want: `{"metadata":{"labels":{"team":"a"},"annotations":{"karpgate.io/pinned":"true"}}}`,
		},
		{
			name: "replace a value",
			ops:  []Operation{{Op: "replace", Path: "/spec/weight", Value: 20.0}},
			want: `{"spec":{"weight":20}}`,
		},
		{
			// v4 reads the missing key as null instead of refusing it.
			name: "replace a missing key adds it, as in v4",
			ops:  []Operation{{Op: "replace", Path: "/metadata/labels/env", Value: "prod"}},
			want: `{"metadata":{"labels":{"team":"a","env":"prod"}}}`,
		},
		{
			name: "replace past the end of an array does not apply",
			ops:  []Operation{{Op: "replace", Path: "/spec/disruption/budgets/1", Value: "x"}},
		},
		{
			name: "remove a key",
			ops:  []Operation{{Op: "remove", Path: "/spec/limits"}},
			want: `{"spec":{"limits":null}}`,
		},
		{
			name:    "remove a missing key does not apply",
			ops:     []Operation{{Op: "remove", Path: "/spec/nope"}},
			wantErr: "/spec/nope does not exist",
		},
		{
			name: "remove an array member",
			ops:  []Operation{{Op: "remove", Path: "/spec/template/spec/requirements/0"}},
			want: `{"spec":{"template":{"spec":{"requirements":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["spot"]}]}}}}`,
		},
		{
			name: "test then replace, as the alias pin does",
			ops: []Operation{
				{Op: "test", Path: "/spec/template/spec/nodeClassRef/name", Value: "default"},
				{Op: "replace", Path: "/spec/template/spec/nodeClassRef/name", Value: "pinned"},
			},
			want: `{"spec":{"template":{"spec":{"nodeClassRef":{"name":"pinned"}}}}}`,
		},
		{
			name: "a failed test stops the patch",
			ops: []Operation{
				{Op: "test", Path: "/spec/template/spec/nodeClassRef/name", Value: "other"},
				{Op: "replace", Path: "/spec/template/spec/nodeClassRef/name", Value: "pinned"},
			},
			wantErr: "operation 0 (test /spec/template/spec/nodeClassRef/name): test failed",
		},
		{
			name: "test compares numbers by their JSON text",
			ops:  []Operation{{Op: "test", Path: "/spec/limits/cpu", Value: 1000.0}},
			want: `{}`,
		},
		{
			// The object's integers are int64, the patch's numbers float64.
			name: "test of an integer against a fraction fails",
			ops:  []Operation{{Op: "test", Path: "/spec/weight", Value: 10.5}},
		},
		{
			name: "test compares objects member by member",
			ops:  []Operation{{Op: "test", Path: "/spec/disruption/budgets/0", Value: map[string]any{"nodes": "10%"}}},
			want: `{}`,
		},
		{
			name: "test of a missing member passes only against null",
			ops:  []Operation{{Op: "test", Path: "/metadata/nope", Value: nil}},
			want: `{}`,
		},
		{
			name: "test of a missing member fails against a value",
			ops:  []Operation{{Op: "test", Path: "/metadata/nope", Value: "x"}},
		},
		{
			name: "a null member in a compared object is left to v4",
			doc:  `{"a":{"b":null}}`,
			ops: []Operation{
				{Op: "add", Path: "/a/b", Value: nil},
				{Op: "test", Path: "/a", Value: map[string]any{"b": nil}},
			},
			unsupported: true,
		},
		{
			name:        "move is left to v4",
			ops:         []Operation{{Op: "move", Path: "/metadata/x"}},
			unsupported: true,
		},
		{
			name:        "the whole-document path is left to v4",
			ops:         []Operation{{Op: "replace", Path: "", Value: map[string]any{}}},
			unsupported: true,
		},
		{
			name:        "a negative index is left to v4",
			ops:         []Operation{{Op: "remove", Path: "/spec/disruption/budgets/-1"}},
			unsupported: true,
		},
		{
			name:        "a leading zero is left to v4",
			ops:         []Operation{{Op: "remove", Path: "/spec/disruption/budgets/00"}},
			unsupported: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := tt.doc
			if doc == "" {
				doc = nodePool
			}
			tree := decode(t, doc)
			before := decode(t, doc)
			got, err := Apply(tree, tt.ops)
			if !reflect.DeepEqual(tree, before) {
				t.Fatalf("Apply changed the document it was given")
			}
			if tt.unsupported {
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("Apply = %v, want ErrUnsupported", err)
				}
				return
			}
			if errors.Is(err, ErrUnsupported) {
				t.Fatalf("Apply refused the patch: %v", err)
			}
			if tt.want == "" {
				if err == nil {
					t.Fatalf("Apply = %s, want an error", encode(t, got))
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Apply: %v\nwant it to say %q", err, tt.wantErr)
				}
			} else {
				if err != nil {
					t.Fatalf("Apply: %v", err)
				}
				// want names only the members that change; the rest must
				// be as they were.
				wantTree := mergeInto(decode(t, doc), decode(t, tt.want))
				if !reflect.DeepEqual(decode(t, string(encode(t, got))), wantTree) {
					t.Fatalf("Apply = %s\nwant %s", encode(t, got), encode(t, wantTree))
				}
			}
			agreeWithV4(t, []byte(doc), tt.ops)
		})
	}
}

// mergeInto writes patch into doc as a JSON merge patch does: null deletes.
func mergeInto(doc, patch map[string]any) map[string]any {
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(doc, k)
		case map[string]any:
			if dv, ok := doc[k].(map[string]any); ok {
				doc[k] = mergeInto(dv, pv)
				continue
			}
			doc[k] = pv
		default:
			doc[k] = v
		}
	}
	return doc
}

func FuzzApplyAgreesWithJSONPatchV4(f *testing.F) {
	f.Add([]byte(nodePool), []byte{0, 3, 1, 1, 7, 0, 3, 12, 9})
	f.Add([]byte(nodePool), []byte{2, 40, 5, 1, 41, 0, 4, 33, 9, 0, 130, 6})
	f.Add([]byte(`{"a":[1,2,{"b~/c":null}],"d":[[],{}]}`), []byte{1, 2, 0, 4, 5, 9, 0, 67, 2, 2, 3, 3})
	f.Add([]byte(`{"a":{"":[]},"s":"\u00e9<>"}`), []byte{0, 1, 4, 3, 2, 9, 2, 66, 8})
	f.Fuzz(func(t *testing.T, doc, program []byte) {
		// The API server decodes a custom resource keeping integers as
		// int64, as the webhook does, and hands v4 the object as
		// encoding/json writes it; the fuzzer's bytes go the same way.
		// So "-0" becomes 0 on both sides. (The one number this cannot
		// model: a float -0 the API server holds, from "-0.0", reaches
		// the webhook as "-0", which reads as 0; see the package doc.)
		var tree map[string]any
		if json.Unmarshal(doc, &tree) != nil || tree == nil {
			return
		}
		canonical, err := json.Marshal(decode(t, string(doc)))
		if err != nil {
			return
		}
		agreeWithV4(t, canonical, opsFrom(tree, program))
	})
}

// opsFrom reads a patch out of program, three bytes an operation: which
// operation, which path of doc (or a path next to one: past an array's
// end, "-", a missing key), and which value. Bytes decoded into arbitrary
// patches would rarely name a path the document has.
func opsFrom(doc map[string]any, program []byte) []Operation {
	var pointers []string
	var values []any
	var walk func(pointer string, v any)
	walk = func(pointer string, v any) {
		pointers, values = append(pointers, pointer), append(values, v)
		switch n := v.(type) {
		case map[string]any:
			// In key order: the same input must give the same patch.
			for _, k := range slices.Sorted(maps.Keys(n)) {
				walk(pointer+"/"+escape(k), n[k])
			}
		case []any:
			for i, c := range n {
				walk(pointer+"/"+strconv.Itoa(i), c)
			}
		}
	}
	walk("", doc)
	palette := []any{nil, "x", 1.0, 2.5, true, map[string]any{}, map[string]any{"a": "b"}, []any{}, []any{"x", 1.0}}
	kinds := []string{"add", "remove", "replace", "test", "test"}
	var ops []Operation
	for ; len(program) >= 3 && len(ops) < 8; program = program[3:] {
		at := int(program[1]) % len(pointers)
		path := pointers[at]
		switch program[1] / 64 {
		case 1:
			path += "/-"
		case 2:
			if a, ok := values[at].([]any); ok {
				path += "/" + strconv.Itoa(len(a))
			} else {
				path += "/missing"
			}
		}
		op := Operation{Op: kinds[int(program[0])%len(kinds)], Path: path}
		if v := int(program[2]) % (len(palette) + 1); v < len(palette) {
			op.Value = palette[v]
		} else {
			op.Value = values[at] // what is there: a test that passes
		}
		ops = append(ops, op)
	}
	return ops
}

func escape(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// agreeWithV4 applies ops to doc here and with json-patch v4, as the API
// server would apply the webhook's answer, and fails unless both apply with
// the same result or both refuse. A patch Apply leaves to v4 is not
// compared.
func agreeWithV4(t *testing.T, doc []byte, ops []Operation) {
	t.Helper()
	tree := decode(t, string(doc))
	got, err := Apply(tree, ops)
	if errors.Is(err, ErrUnsupported) {
		return
	}
	if !reflect.DeepEqual(tree, decode(t, string(doc))) {
		t.Fatalf("Apply changed the document it was given")
	}
	want, v4err := applyV4(doc, ops)
	switch {
	case err != nil && v4err != nil:
	case err != nil:
		t.Fatalf("Apply refused what v4 applies: %v\ndoc %s\nops %s\nv4 gives %s", err, doc, encode(t, opsJSON(ops)), want)
	case v4err != nil:
		t.Fatalf("Apply applied what v4 refuses: %v\ndoc %s\nops %s\nApply gives %s", v4err, doc, encode(t, opsJSON(ops)), encode(t, got))
	default:
		if !reflect.DeepEqual(decode(t, string(encode(t, got))), decode(t, string(want))) {
			t.Fatalf("Apply and v4 disagree\ndoc %s\nops %s\nApply: %s\nv4:    %s", doc, encode(t, opsJSON(ops)), encode(t, got), want)
		}
	}
}

func applyV4(doc []byte, ops []Operation) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errors.New("v4 panicked")
		}
	}()
	raw, err := json.Marshal(opsJSON(ops))
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, err
	}
	return patch.Apply(doc)
}

// opsJSON writes the operations as the mutating webhook does: the value is
// always written for the operations that carry one.
func opsJSON(ops []Operation) []map[string]any {
	out := make([]map[string]any, len(ops))
	for i, op := range ops {
		out[i] = map[string]any{"op": op.Op, "path": op.Path}
		if op.Op != "remove" {
			out[i]["value"] = op.Value
		}
	}
	return out
}

// decode reads doc with the webhook's own decoder: integers are int64,
// other numbers float64, while a rule's patch values are all float64, so
// comparisons between the two are exercised.
func decode(t testing.TB, doc string) map[string]any {
	t.Helper()
	m, err := conversion.DecodeObject([]byte(doc))
	if err != nil {
		t.Fatalf("decoding %s: %v", doc, err)
	}
	return m
}

func encode(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	return b
}

func BenchmarkApply(b *testing.B) {
	ops := []Operation{
		{Op: "test", Path: "/spec/template/spec/nodeClassRef/name", Value: "default"},
		{Op: "replace", Path: "/spec/template/spec/nodeClassRef/name", Value: "pinned"},
		{Op: "add", Path: "/metadata/labels/karpgate.io~1pinned", Value: "true"},
	}
	b.Run("impl=treepatch", func(b *testing.B) {
		tree := decode(b, nodePool)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Apply(tree, ops); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What the webhook did before: the patch encoded and applied by the
	// library to the object's bytes, as they came in the request.
	b.Run("impl=json-patch-v4", func(b *testing.B) {
		doc := []byte(nodePool)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := applyV4(doc, ops); err != nil {
				b.Fatal(err)
			}
		}
	})
}
