package conversion

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// roundTripObjects is how many random objects per kind and original version
// go through a round trip in every `go test` run.
const roundTripObjects = 10000

var kindNames = []string{karpenter.KindNodePool, karpenter.KindNodeClaim, karpenter.KindEC2NodeClass}

// TestRoundTripIsLossless: for random objects of every kind, v1 -> v1beta1
// -> v1 and v1beta1 -> v1 -> v1beta1 give back the identical object, and
// every intermediate object has the shape of its version.
func TestRoundTripIsLossless(t *testing.T) {
	for _, kind := range kindNames {
		for _, version := range []string{karpenter.V1, karpenter.V1Beta1} {
			t.Run(kind+"/"+version, func(t *testing.T) {
				t.Parallel()
				g := newGen(uint64(len(kind)*7 + len(version)))
				restored := 0
				for i := range roundTripObjects {
					obj := g.object(kind, version)
					if roundTrip(t, obj) {
						restored++
					}
					if t.Failed() {
						t.Fatalf("object %d:\n%s", i, mustJSON(obj))
					}
				}
				// The generator must exercise both the plain and the restore path.
				if restored == 0 || restored == roundTripObjects {
					t.Errorf("%d of %d objects needed a restore annotation; the generator is too narrow", restored, roundTripObjects)
				}
			})
		}
	}
}

// roundTrip converts obj to the other version and back, checking each step;
// it reports whether the intermediate object needed a restore annotation.
func roundTrip(t *testing.T, obj map[string]any) bool {
	t.Helper()
	ctx := context.Background()
	opts := Options{NodePools: nodeClaimPools}
	kind, version, err := identify(obj)
	if err != nil {
		t.Fatal(err)
	}
	other := otherVersion(version)
	mid, err := Convert(ctx, obj, other, opts)
	if err != nil {
		t.Errorf("to %s: %v", other, err)
		return false
	}
	checkShape(t, kind.Kind, other, mid)
	back, err := Convert(ctx, mid, version, opts)
	if err != nil {
		t.Errorf("back to %s: %v\nvia %s", version, err, mustJSON(mid))
		return false
	}
	if !equalValues(back, obj) {
		t.Errorf("round trip through %s changed the object:\ngot  %s\nvia  %s", other, mustJSON(back), mustJSON(mid))
	}
	_, found, _ := getAnnotation(mid, karpenter.RestoreAnnotation(version))
	return found
}

// checkShape asserts that obj holds no field its version lacks, and the
// fields it requires where the conversion is responsible for them.
func checkShape(t *testing.T, kind, version string, obj map[string]any) {
	t.Helper()
	absent := func(path string) {
		if v, ok := lookupPath(obj, path); ok {
			t.Errorf("%s %s has %s: %v", version, kind, path, v)
		}
	}
	present := func(path string) {
		if _, ok := lookupPath(obj, path); !ok {
			t.Errorf("%s %s lacks %s", version, kind, path)
		}
	}
	absent("metadata.annotations[" + karpenter.RestoreAnnotation(version) + "]")
	refPath := "spec.nodeClassRef"
	if kind == karpenter.KindNodePool {
		refPath = "spec.template.spec.nodeClassRef"
	}
	if version == karpenter.V1Beta1 {
		absent("metadata.annotations[" + karpenter.KubeletCompatibilityAnnotation + "]")
		absent("metadata.annotations[" + karpenter.NodeClassReferenceCompatibilityAnnotation + "]")
		absent("metadata.annotations[" + karpenter.UbuntuCompatibilityAnnotation + "]")
	} else {
		absent("metadata.annotations[" + karpenter.AliasVersionCompatibilityAnnotation + "]")
	}
	switch {
	case kind == karpenter.KindNodePool && version == karpenter.V1Beta1:
		absent("spec.template.spec.expireAfter")
		absent("spec.template.spec.terminationGracePeriod")
		absent(refPath + ".group")
		if budgets, ok := lookupPath(obj, "spec.disruption.budgets"); ok {
			for i := range budgets.([]any) {
				absent(fmt.Sprintf("spec.disruption.budgets[%d].reasons", i))
			}
		}
		if p, _ := lookupPath(obj, "spec.disruption.consolidationPolicy"); p == karpenter.ConsolidationWhenEmptyOrUnderutilized {
			t.Errorf("v1beta1 NodePool has policy %v", p)
		}
	case kind == karpenter.KindNodePool:
		absent("spec.disruption.expireAfter")
		absent("spec.template.spec.kubelet")
		absent("spec.template.spec.resources")
		if _, ok := lookupPath(obj, "spec.disruption"); ok {
			present("spec.disruption.consolidateAfter")
		}
		if p, _ := lookupPath(obj, "spec.disruption.consolidationPolicy"); p == karpenter.ConsolidationWhenUnderutilized {
			t.Errorf("v1 NodePool has policy %v", p)
		}
	case kind == karpenter.KindNodeClaim && version == karpenter.V1Beta1:
		absent("spec.expireAfter")
		absent("spec.terminationGracePeriod")
		absent("status.lastPodEventTime")
		absent(refPath + ".group")
	case kind == karpenter.KindNodeClaim:
		present("spec.expireAfter")
		absent("spec.kubelet")
	case version == karpenter.V1Beta1:
		present("spec.amiFamily")
		absent("spec.kubelet")
		if terms, ok := lookupPath(obj, "spec.amiSelectorTerms"); ok {
			for i := range terms.([]any) {
				absent(fmt.Sprintf("spec.amiSelectorTerms[%d].alias", i))
			}
		}
	default:
		present("spec.amiSelectorTerms[0]")
		if f, _ := lookupPath(obj, "spec.amiFamily"); f == karpenter.AMIFamilyUbuntu {
			t.Errorf("v1 EC2NodeClass has amiFamily Ubuntu")
		}
	}
	if _, ok := lookupPath(obj, refPath); ok && version == karpenter.V1 {
		present(refPath + ".group")
		present(refPath + ".kind")
		absent(refPath + ".apiVersion")
	}
}

// lookupPath reads a field path written as in error messages.
func lookupPath(obj map[string]any, path string) (any, bool) {
	var cur any = obj
	for path != "" {
		var step string
		switch {
		case strings.HasPrefix(path, "["):
			end := strings.IndexByte(path, ']')
			step, path = path[1:end], path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			step, path = path[:end], path[end:]
		}
		path = strings.TrimPrefix(path, ".")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[step]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			var i int
			if _, err := fmt.Sscan(step, &i); err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// TestConversionIsDeterministic: the same input gives byte-identical JSON,
// restore annotation included, so repeated reads do not look like changes.
func TestConversionIsDeterministic(t *testing.T) {
	g := newGen(42)
	for range 500 {
		for _, kind := range kindNames {
			obj := g.object(kind, g.pick(karpenter.V1, karpenter.V1Beta1))
			_, version, _ := identify(obj)
			a, errA := Convert(context.Background(), obj, otherVersion(version), Options{NodePools: nodeClaimPools})
			b, errB := Convert(context.Background(), obj, otherVersion(version), Options{NodePools: nodeClaimPools})
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if errA != nil || errB != nil || string(ja) != string(jb) {
				t.Fatalf("two conversions differ: %v %v\n%s\n%s", errA, errB, ja, jb)
			}
		}
	}
}
