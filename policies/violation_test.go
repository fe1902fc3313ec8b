package policies

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func TestDecodeViolation(t *testing.T) {
	tests := []struct {
		name string
		v    string
		// direct: read without the JSON round trip.
		direct bool
		want   violation
		// wantErr: encoding/json refuses it, so the rule's author is told.
		wantErr bool
	}{
		{
			name:   "message, path and fix",
			v:      `{"msg":"m","path":"spec.x","fix":"f"}`,
			direct: true,
			want:   violation{Msg: "m", Path: "spec.x", Fix: "f"},
		},
		{
			name:   "a patch with a number, an object and null",
			v:      `{"msg":"m","patch":[{"op":"add","path":"/a","value":{"n":1.5,"l":[2,null,true]}},{"op":"remove","path":"/b"}]}`,
			direct: true,
			want: violation{Msg: "m", Patch: []PatchOperation{
				{Op: "add", Path: "/a", Value: map[string]any{"n": 1.5, "l": []any{2.0, nil, true}}},
				{Op: "remove", Path: "/b"},
			}},
		},
		{
			name:   "other members are ignored",
			v:      `{"msg":"m","severity":"high"}`,
			direct: true,
			want:   violation{Msg: "m"},
		},
		{
			name:   "null reads as empty",
			v:      `{"msg":"m","path":null,"patch":null}`,
			direct: true,
			want:   violation{Msg: "m"},
		},
		{
			// encoding/json matches member names whatever their case.
			name: "another spelling takes the round trip",
			v:    `{"Msg":"m","PATH":"p"}`,
			want: violation{Msg: "m", Path: "p"},
		},
		{
			name:    "a number as the message is refused",
			v:       `{"msg":5}`,
			wantErr: true,
		},
		{
			name:    "a patch that is not a list is refused",
			v:       `{"msg":"m","patch":{"op":"add"}}`,
			wantErr: true,
		},
		{
			name: "a null operation reads as an empty one",
			v:    `{"msg":"m","patch":[null]}`,
			want: violation{Msg: "m", Patch: []PatchOperation{{}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := regoValue(t, []byte(tt.v))
			if _, direct := readViolation(v); direct != tt.direct {
				t.Errorf("read directly: %v, want %v", direct, tt.direct)
			}
			got, err := decodeViolation(v)
			if (err != nil) != tt.wantErr {
				t.Fatalf("decodeViolation: %v, want an error: %v", err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("decodeViolation = %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

// FuzzReadViolationAgreesWithJSON checks the direct reading against the
// JSON round trip, which defines it, on whatever a rule could return.
func FuzzReadViolationAgreesWithJSON(f *testing.F) {
	f.Add([]byte(`{"msg":"m","path":"spec.x","fix":"f"}`))
	f.Add([]byte(`{"msg":"m","patch":[{"op":"add","path":"/a","value":{"n":1e3,"l":[2,null,true]}}]}`))
	f.Add([]byte(`{"msg":"m","Patch":[{"OP":"test","value":-0}],"x":[]}`))
	f.Add([]byte(`{"msg":"m","patch":[{"op":"add","value":1e400}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		v := regoValue(t, data)
		got, ok := readViolation(v)
		if !ok {
			return
		}
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("read directly, but does not encode: %v", err)
		}
		var want violation
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("read directly as %#v, but encoding/json refuses %s: %v", got, raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("read directly: %#v\nencoding/json: %#v\nof %s", got, want, raw)
		}
	})
}

// regoValue is data as a Rego result binding holds it: numbers are
// json.Number.
func regoValue(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
