package conversion

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// gen builds random Karpenter objects covering every field of both
// versions, including Karpenter's compatibility annotations, duration
// spellings, null-free unknown fields and optional fields left out.
type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

func (g *gen) maybe(p float64) bool { return g.r.Float64() < p }

func (g *gen) pick(options ...string) string { return options[g.r.IntN(len(options))] }

func (g *gen) word() string {
	return g.pick("a", "default", "gpu", "team-b", "x1", "spot", "arm64", "prod")
}

func (g *gen) duration() string {
	return g.pick("0s", "30s", "5m", "1h", "8h", "720h", "1h30m", "90m", "2h0m0s", "336h", "15m0s")
}

func (g *gen) nillableDuration() string {
	if g.maybe(0.2) {
		return karpenter.Never
	}
	return g.duration()
}

func (g *gen) stringMap(keys ...string) map[string]any {
	m := map[string]any{}
	for _, k := range keys {
		if g.maybe(0.5) {
			m[k] = g.word()
		}
	}
	return m
}

// unknown adds a field neither version knows, now and then.
func (g *gen) unknown(m map[string]any) map[string]any {
	if g.maybe(0.1) {
		values := []any{"x", int64(g.r.IntN(100)), 2.5, true, []any{"a", int64(1)}, map[string]any{"nested": "y"}}
		m["x-karpgate-test-"+g.word()] = values[g.r.IntN(len(values))]
	}
	return m
}

func (g *gen) metadata(name string) map[string]any {
	meta := map[string]any{"name": name}
	if g.maybe(0.3) {
		meta["labels"] = g.stringMap("team", "env", "app.kubernetes.io/name")
	}
	annotations := map[string]any{}
	if g.maybe(0.3) {
		annotations[karpenter.StoredVersionMigratedAnnotation] = "true"
	}
	if g.maybe(0.3) {
		annotations["example.com/owner"] = g.word()
	}
	if len(annotations) > 0 || g.maybe(0.05) {
		meta["annotations"] = annotations
	}
	if g.maybe(0.3) {
		meta["uid"] = fmt.Sprintf("%08x-0000-4000-8000-000000000000", g.r.Uint32())
		meta["resourceVersion"] = fmt.Sprint(g.r.IntN(100000))
		meta["generation"] = int64(g.r.IntN(10) + 1)
		meta["creationTimestamp"] = "2024-08-01T10:00:00Z"
	}
	return meta
}

func (g *gen) setAnnotation(obj map[string]any, key, value string) {
	meta := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	annotations[key] = value
}

func (g *gen) taints() []any {
	var out []any
	for range g.r.IntN(3) {
		t := map[string]any{"key": "example.com/" + g.word(), "effect": g.pick("NoSchedule", "PreferNoSchedule", "NoExecute")}
		if g.maybe(0.5) {
			t["value"] = g.word()
		}
		out = append(out, t)
	}
	return out
}

func (g *gen) requirements() []any {
	out := []any{}
	for range g.r.IntN(4) {
		req := map[string]any{"key": g.pick("karpenter.sh/capacity-type", "kubernetes.io/arch", "karpenter.k8s.aws/instance-category", "node.kubernetes.io/instance-type")}
		switch op := g.pick("In", "NotIn", "Exists", "DoesNotExist", "Gt"); op {
		case "In", "NotIn":
			req["operator"] = op
			req["values"] = []any{g.word(), g.word()}
			if op == "In" && g.maybe(0.3) {
				req["minValues"] = int64(1 + g.r.IntN(2))
			}
		case "Gt":
			req["operator"] = op
			req["values"] = []any{fmt.Sprint(g.r.IntN(8))}
		default:
			req["operator"] = op
		}
		out = append(out, req)
	}
	return out
}

// kubelet is a v1beta1/v1 kubelet block with a random subset of fields.
func (g *gen) kubelet() map[string]any {
	k := map[string]any{}
	if g.maybe(0.3) {
		k["clusterDNS"] = []any{"10.100.0.10"}
	}
	for _, f := range []string{"maxPods", "podsPerCore", "evictionMaxPodGracePeriod"} {
		if g.maybe(0.4) {
			k[f] = int64(g.r.IntN(250))
		}
	}
	if g.maybe(0.3) {
		k["imageGCHighThresholdPercent"] = int64(85)
		k["imageGCLowThresholdPercent"] = int64(80)
	}
	for _, f := range []string{"systemReserved", "kubeReserved"} {
		if g.maybe(0.3) {
			k[f] = map[string]any{"cpu": "100m", "memory": g.pick("100Mi", "1Gi")}
		}
	}
	if g.maybe(0.3) {
		k["evictionHard"] = map[string]any{"memory.available": "5%"}
	}
	if g.maybe(0.3) {
		k["evictionSoft"] = map[string]any{"memory.available": "10%"}
		k["evictionSoftGracePeriod"] = map[string]any{"memory.available": g.pick("1m", "1m0s", "30s")}
	}
	if g.maybe(0.3) {
		k["cpuCFSQuota"] = g.maybe(0.5)
	}
	return g.unknown(k)
}

// v1beta1NodeClassRef is {name, kind?, apiVersion?}.
func (g *gen) v1beta1NodeClassRef() map[string]any {
	ref := map[string]any{"name": g.word()}
	if g.maybe(0.5) {
		ref["kind"] = g.pick("EC2NodeClass", "EC2NodeClass", "MyNodeClass", "")
	}
	if g.maybe(0.4) {
		ref["apiVersion"] = g.pick("karpenter.k8s.aws/v1beta1", "karpenter.k8s.aws/v1", "example.com/v1", "karpenter.k8s.aws", "")
	}
	return g.unknown(ref)
}

func (g *gen) v1NodeClassRef() map[string]any {
	return map[string]any{
		"group": g.pick("karpenter.k8s.aws", "karpenter.k8s.aws", "example.com", ""),
		"kind":  g.pick("EC2NodeClass", "EC2NodeClass", "MyNodeClass"),
		"name":  g.word(),
	}
}

// compatAnnotations adds Karpenter's NodePool/NodeClaim annotations to a v1
// object, as Karpenter's own conversion left them, consistent or stale.
func (g *gen) compatAnnotations(obj, spec map[string]any) {
	if g.maybe(0.3) {
		order := kubeletOrder
		if g.maybe(0.3) {
			order = nil // keys sorted, as a hand-written annotation might be
		}
		payload, _ := orderedJSON(g.kubelet(), order)
		g.setAnnotation(obj, karpenter.KubeletCompatibilityAnnotation, payload)
	}
	if g.maybe(0.3) {
		ref := g.v1beta1NodeClassRef()
		if current, ok := spec["nodeClassRef"].(map[string]any); ok && g.maybe(0.7) {
			// Consistent with the v1 reference, as Karpenter wrote it.
			ref = map[string]any{"name": current["name"], "kind": current["kind"]}
			if current["group"] != karpenter.DefaultNodeClassGroup || g.maybe(0.5) {
				ref["apiVersion"] = fmt.Sprint(current["group"], "/v1beta1")
			}
		}
		payload, _ := orderedJSON(ref, nodeClassRefOrder)
		if g.maybe(0.1) {
			payload = "null"
		}
		g.setAnnotation(obj, karpenter.NodeClassReferenceCompatibilityAnnotation, payload)
	}
}

func (g *gen) resources(key string) map[string]any {
	return map[string]any{key: map[string]any{"cpu": fmt.Sprint(g.r.IntN(64) + 1), "memory": fmt.Sprintf("%dGi", g.r.IntN(256)+1)}}
}

func (g *gen) conditions() []any {
	return []any{map[string]any{"type": "Ready", "status": g.pick("True", "False", "Unknown"), "reason": "Ready", "lastTransitionTime": "2024-08-01T10:00:00Z", "message": ""}}
}

func lowerFamily(family string) string { return strings.ToLower(family) }
