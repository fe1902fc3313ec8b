package conversion

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// karpenterRef is Karpenter v1.0's v1beta1 NodeClassReference as its typed
// JSON reads it: unknown fields dropped, empty kind and apiVersion omitted.
type karpenterRef struct {
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion,omitempty"`
}

// karpenterReadsRef is Karpenter v1.0's v1 -> v1beta1 nodeClassRef rule
// (pkg/apis/v1/nodepool_conversion.go at v1.0.8): the nodeclass-reference
// annotation when it is set, else the v1 reference's name and kind.
func karpenterReadsRef(t *testing.T, v1 map[string]any, ref map[string]any) karpenterRef {
	t.Helper()
	var out karpenterRef
	raw, found, err := getAnnotation(v1, karpenter.NodeClassReferenceCompatibilityAnnotation)
	if err != nil {
		t.Fatal(err)
	}
	if found && raw != "" {
		if err := json.Unmarshal([]byte(raw), &out); err != nil {
			t.Fatalf("Karpenter cannot read the annotation %q: %v", raw, err)
		}
		return out
	}
	out.Name, _ = ref["name"].(string)
	out.Kind, _ = ref["kind"].(string)
	return out
}

func asKarpenterRef(t *testing.T, ref map[string]any) karpenterRef {
	t.Helper()
	b, err := json.Marshal(ref)
	if err != nil {
		t.Fatal(err)
	}
	var out karpenterRef
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("generated reference %s: %v", b, err)
	}
	return out
}

// TestKarpenterReadsKarpgatesV1: every v1beta1 NodePool and NodeClaim karpgate
// converts to v1 carries the nodeclass-reference annotation, as Karpenter
// v1.0's conversion wrote it on every object ("null" without a reference),
// and Karpenter's own way back from that v1 object gives the v1beta1
// reference Karpenter would have given for its own output. So switching the
// CRDs' conversion back to Karpenter v1.0, or uninstalling karpgate, changes
// no v1beta1 reader's view of the reference.
func TestKarpenterReadsKarpgatesV1(t *testing.T) {
	for _, kind := range []string{karpenter.KindNodePool, karpenter.KindNodeClaim} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			g := newGen(uint64(len(kind) * 131))
			withoutRef := 0
			for i := range roundTripObjects {
				obj := g.object(kind, karpenter.V1Beta1)
				v1, err := Convert(context.Background(), obj, karpenter.V1, Options{NodePools: nodeClaimPools})
				if err != nil {
					t.Fatalf("object %d: %v", i, err)
				}
				raw, found, _ := getAnnotation(v1, karpenter.NodeClassReferenceCompatibilityAnnotation)
				if !found {
					t.Fatalf("object %d: v1 lacks %s, which Karpenter v1.0 always writes:\n%s", i, karpenter.NodeClassReferenceCompatibilityAnnotation, mustJSON(v1))
				}
				specPath := []string{"spec"}
				if kind == karpenter.KindNodePool {
					specPath = []string{"spec", "template", "spec"}
				}
				original := refAt(obj, specPath)
				if original == nil {
					withoutRef++
					if raw != "null" {
						t.Fatalf("object %d has no nodeClassRef; annotation %q, want \"null\" as Karpenter writes", i, raw)
					}
					continue
				}
				got := karpenterReadsRef(t, v1, refAt(v1, specPath))
				if want := asKarpenterRef(t, original); got != want {
					t.Fatalf("object %d: Karpenter reads the v1beta1 reference back as %+v, want %+v\nv1: %s", i, got, want, mustJSON(v1))
				}
			}
			if withoutRef == 0 || withoutRef == roundTripObjects {
				t.Errorf("%d of %d objects had no nodeClassRef; the generator is too narrow", withoutRef, roundTripObjects)
			}
		})
	}
}

func refAt(obj map[string]any, specPath []string) map[string]any {
	var cur any = obj
	for _, step := range specPath {
		m, _ := cur.(map[string]any)
		cur = m[step]
	}
	spec, _ := cur.(map[string]any)
	ref, _ := spec["nodeClassRef"].(map[string]any)
	return ref
}
