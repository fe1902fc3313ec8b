package twins

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/karpgate/karpgate/crdschema"
)

var (
	cachedOnce      sync.Once
	cachedHarnesses []*harness
	cachedSet       *crdschema.Set
)

// harnesses are one harness per configuration, made once for the fuzz
// target and kept for the life of the test binary.
func harnesses(t testing.TB) []*harness {
	cachedOnce.Do(func() {
		set, err := crdschema.Linked()
		if err != nil {
			t.Fatal(err)
		}
		cachedSet = set
		for _, c := range configurations {
			cachedHarnesses = append(cachedHarnesses, newHarness(t, c.name, c.yaml, c.judged()))
		}
	})
	if len(cachedHarnesses) != len(configurations) {
		t.Fatal("the harnesses did not start")
	}
	return cachedHarnesses
}

// FuzzTwinsAgree builds an EC2NodeClass and a NodePool from the fuzzer's
// strings (an alias, AMI name, SSM parameter and tag value; budget nodes,
// duration and reason; the environment label; a waiver) and judges what
// the API server would admit of them both ways, under one configuration.
func FuzzTwinsAgree(f *testing.F) {
	f.Add(uint8(0), "al2023@latest", "my-ami-*", "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id", "v*", "10%", "8h", "Drifted", "production", "")
	f.Add(uint8(1), "al2023@v20240901", "ami-2024?", "/aws/service/bottlerocket/aws-k8s-1.33/x86_64/latest/image_id", "release-*", "150%", "1h30m", "drifted", "Live", "KG108")
	f.Add(uint8(6), "bottlerocket@LATEST", "exact-name", "/my/own/parameter", "exact", " 5", "9999999h", "Unhealthy", "prod", "KG101")
	f.Add(uint8(1), "windows2022@latest", "a\u00a0b*", "/aws/service/canonical/ubuntu/current/ami", "\tx*\u2028", "100%", "2562047h48m", "Empty", "PRODUCTION", "until 2099-01-01: later")
	f.Add(uint8(4), "al2@v20250101", "\x01*", "/AWS/Service/EKS/Optimized-AMI/Latest", "\u212a*", "0", "90m0s", "Underutilized", "staging", "   ")
	f.Add(uint8(5), "al2023@v1", "*", "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id", "*x*", "5", "24h", "Drifted", "live", "tested")
	f.Fuzz(func(t *testing.T, pick uint8, alias, name, ssm, tagValue, nodes, duration, reason, env, waiver string) {
		hs := harnesses(t)
		h := hs[int(pick)%len(hs)]
		class := map[string]any{
			"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
			"metadata": map[string]any{"name": "fuzzed", "labels": map[string]any{"karpgate.io/environment": env},
				"annotations": map[string]any{"karpgate.io/waive-KG109": waiver}},
			"spec": map[string]any{
				"role": "KarpenterNodeRole", "amiSelectorTerms": amiTerms(pick, alias, name, ssm, tagValue),
				"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "c"}}},
				"securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "c"}}},
				"tags":                       map[string]any{"environment": env},
			},
		}
		budget := map[string]any{"nodes": nodes, "reasons": []any{reason}}
		if duration != "" {
			budget["schedule"], budget["duration"] = "0 9 * * mon-fri", duration
		}
		pool := map[string]any{
			"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
			"metadata": map[string]any{"name": "fuzzed", "labels": map[string]any{"karpgate.io/environment": env}},
			"spec": map[string]any{
				"template": map[string]any{"spec": map[string]any{
					"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "fuzzed"},
					"requirements": []any{},
				}},
				"disruption": map[string]any{"consolidateAfter": "1m", "budgets": []any{budget, map[string]any{"nodes": nodes}}},
			},
		}
		tl := &tally{found: map[string]int{}}
		for _, obj := range []map[string]any{class, pool} {
			stored, why := admitted(context.Background(), cachedSet, obj)
			if why != "" {
				continue
			}
			for _, r := range requests("fuzzed "+kindOf(obj), stored, waivableTwins(h)) {
				if _, why := admitted(context.Background(), cachedSet, r.object); why != "" {
					continue
				}
				h.compare(t, r, tl)
			}
		}
		for _, d := range tl.diffs {
			t.Error(d)
		}
	})
}

// amiTerms are the fuzzed class's terms: an alias alone (the CRD allows
// no other term beside one), or a name, an SSM parameter and tags.
func amiTerms(pick uint8, alias, name, ssm, tagValue string) []any {
	if pick&4 == 0 {
		return []any{map[string]any{"alias": alias}}
	}
	return []any{
		map[string]any{"name": name, "owner": "amazon"},
		map[string]any{"ssmParameter": ssm},
		map[string]any{"tags": map[string]any{"release": tagValue, fmt.Sprintf("k%d", pick): "*"}},
	}
}
