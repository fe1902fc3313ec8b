package conversion

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// Fuzz targets. Their seed corpus runs in every `go test`; explore with
// `go test ./conversion -fuzz FuzzConvertMalformed` (one target at a time).

func fuzzRoundTrip(f *testing.F, kind string) {
	for seed := range uint64(8) {
		f.Add(seed, seed%2 == 0)
	}
	f.Fuzz(func(t *testing.T, seed uint64, v1 bool) {
		version := karpenter.V1Beta1
		if v1 {
			version = karpenter.V1
		}
		roundTrip(t, newGen(seed).object(kind, version))
	})
}

func FuzzRoundTripNodePool(f *testing.F)     { fuzzRoundTrip(f, karpenter.KindNodePool) }
func FuzzRoundTripNodeClaim(f *testing.F)    { fuzzRoundTrip(f, karpenter.KindNodeClaim) }
func FuzzRoundTripEC2NodeClass(f *testing.F) { fuzzRoundTrip(f, karpenter.KindEC2NodeClass) }

// FuzzConvertMalformed feeds arbitrary JSON. Convert must never panic, and
// whatever it converts must come back identical and change nothing in
// metadata but labels and annotations.
func FuzzConvertMalformed(f *testing.F) {
	g := newGen(7)
	for _, kind := range kindNames {
		for _, version := range []string{karpenter.V1, karpenter.V1Beta1} {
			b, _ := json.Marshal(g.object(kind, version))
			f.Add(b, version == karpenter.V1Beta1)
		}
	}
	for _, seed := range []string{
		`{}`, `null`, `[]`, `{"apiVersion":"karpenter.sh/v1beta1","kind":"NodePool"}`,
		`{"apiVersion":"karpenter.sh/v1beta1","kind":"NodePool","spec":{"disruption":"x","template":{"spec":{"kubelet":{"maxPods":1.5}}}}}`,
		`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"annotations":{"karpgate.io/restore-v1beta1":"{\"records\":[{\"path\":[\"spec\",\"x\",3],\"original\":1}]}"}},"spec":{}}`,
		`{"apiVersion":"karpenter.sh/v1","kind":"NodeClaim","metadata":{"annotations":{"compatibility.karpenter.sh/v1beta1-nodeclass-reference":"{\"name\":5}"}},"spec":{"nodeClassRef":{}}}`,
		`{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"annotations":{"compatibility.karpenter.k8s.aws/v1beta1-ubuntu":""}},"spec":{"amiSelectorTerms":[{"alias":"@"}]}}`,
		`{"apiVersion":"karpenter.k8s.aws/v1beta1","kind":"EC2NodeClass","metadata":null,"spec":{"amiFamily":"Ubuntu","blockDeviceMappings":null}}`,
		`{"apiVersion":"karpenter.sh/v1beta1","kind":"NodeClaim","metadata":{"labels":{"karpenter.sh/nodepool":"default"},"annotations":{}},"spec":{"kubelet":null,"nodeClassRef":{"apiVersion":"/"}}}`,
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, toV1 bool) {
		obj, err := DecodeObject(data)
		if err != nil {
			return
		}
		to := karpenter.V1Beta1
		if toV1 {
			to = karpenter.V1
		}
		opts := Options{NodePools: nodeClaimPools}
		out, err := Convert(context.Background(), obj, to, opts)
		if err != nil {
			if !strings.Contains(err.Error(), objectName(obj)) {
				t.Fatalf("error does not name the object %s: %v", objectName(obj), err)
			}
			return
		}
		if err := CheckMetadata(obj, out); err != nil {
			t.Fatal(err)
		}
		_, from, _ := identify(obj)
		if from == to || hasRestoreAnnotation(obj) {
			return // nothing converted, or a restore annotation was consumed
		}
		back, err := Convert(context.Background(), out, from, opts)
		if err != nil {
			t.Fatalf("converted to %s but not back: %v", to, err)
		}
		if !equalValues(back, obj) {
			t.Fatalf("round trip changed the object:\nin   %s\nmid  %s\nback %s", mustJSON(obj), mustJSON(out), mustJSON(back))
		}
	})
}

func hasRestoreAnnotation(obj map[string]any) bool {
	for _, key := range []string{karpenter.RestoreV1Annotation, karpenter.RestoreV1Beta1Annotation} {
		if _, found, _ := getAnnotation(obj, key); found {
			return true
		}
	}
	return false
}

func TestDecodeObject(t *testing.T) {
	tests := []struct {
		in, wantErr string
		check       func(map[string]any) bool
	}{
		{in: `{"a":1,"b":1.5,"c":[2]}`, check: func(m map[string]any) bool {
			return m["a"] == int64(1) && m["b"] == 1.5 && m["c"].([]any)[0] == int64(2)
		}},
		{in: `{"big":9007199254740993}`, check: func(m map[string]any) bool { return m["big"] == int64(9007199254740993) }},
		{in: `{"a":1e400}`, wantErr: "out of range"},
		{in: `[1]`, wantErr: "want a JSON object, got a list"},
		{in: `{"a":1} {}`, wantErr: "unexpected data"},
		{in: `{"a":`, wantErr: "unexpected EOF"},
	}
	for _, tt := range tests {
		m, err := DecodeObject([]byte(tt.in))
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: got %v, want error %q", tt.in, err, tt.wantErr)
			}
		case err != nil || !tt.check(m):
			t.Errorf("%s: got %#v, %v", tt.in, m, err)
		}
	}
}
