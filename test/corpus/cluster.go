package corpus

import (
	"encoding/json"
	"fmt"
)

// StoredCluster generates the objects of a cluster as the API server
// stores them (defaults filled, uid, status, Karpenter's labels and
// annotations), as JSON: classes EC2NodeClasses (every fifth production,
// every seventh on @latest), then pools NodePools spread over them, then
// claims NodeClaims spread over the pools. It is the audit's test,
// benchmark and scale input.
func StoredCluster(classes, pools, claims int) [][]byte {
	var out [][]byte
	add := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		out = append(out, b)
	}
	for c := range classes {
		env := "dev"
		if c%5 == 0 {
			env = "production"
		}
		alias := "al2023@v20240807"
		if c%7 == 6 {
			alias = "al2023@latest"
		}
		add(map[string]any{
			"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
			"metadata": map[string]any{"name": fmt.Sprintf("class-%d", c), "uid": fmt.Sprintf("00000000-0000-0000-0001-%012d", c), "resourceVersion": "1", "generation": 1,
				"labels": map[string]any{"karpgate.io/environment": env}, "annotations": map[string]any{"karpenter.k8s.aws/ec2nodeclass-hash": "1234", "karpenter.k8s.aws/ec2nodeclass-hash-version": "v4"}},
			"spec": map[string]any{
				"role": "KarpenterNodeRole", "amiSelectorTerms": []any{map[string]any{"alias": alias}},
				"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "c"}}},
				"securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "c"}}},
				"metadataOptions":            map[string]any{"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled", "httpPutResponseHopLimit": 1, "httpTokens": "required"},
			},
			"status": map[string]any{"amis": []any{map[string]any{"id": "ami-0123456789", "name": "al2023-ami", "requirements": []any{}}}, "instanceProfile": "p"},
		})
	}
	for p := range pools {
		add(map[string]any{
			"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
			"metadata": map[string]any{"name": fmt.Sprintf("pool-%d", p), "uid": fmt.Sprintf("00000000-0000-0000-0002-%012d", p), "resourceVersion": "1", "generation": 1,
				"annotations": map[string]any{"karpenter.sh/nodepool-hash": "5678", "karpenter.sh/nodepool-hash-version": "v3"}},
			"spec": map[string]any{
				"template": map[string]any{"spec": map[string]any{
					"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": fmt.Sprintf("class-%d", p%classes)},
					"requirements": []any{map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"on-demand"}}},
					"expireAfter":  "720h",
				}},
				"disruption": map[string]any{"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "1m", "budgets": []any{
					map[string]any{"nodes": "10%"},
					map[string]any{"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h", "reasons": []any{"Drifted"}},
				}},
			},
			"status": map[string]any{"resources": map[string]any{"cpu": "8", "nodes": "2"}},
		})
	}
	for n := range claims {
		pool := n % pools
		add(map[string]any{
			"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
			"metadata": map[string]any{"name": fmt.Sprintf("pool-%d-%05d", pool, n), "uid": fmt.Sprintf("00000000-0000-0000-0003-%012d", n), "resourceVersion": "1", "generation": 1,
				"labels":      map[string]any{"karpenter.sh/nodepool": fmt.Sprintf("pool-%d", pool), "node.kubernetes.io/instance-type": "c-1x-amd64-linux", "karpenter.sh/capacity-type": "on-demand"},
				"annotations": map[string]any{"karpenter.sh/nodepool-hash": "5678", "karpenter.sh/nodepool-hash-version": "v3", "karpenter.k8s.aws/ec2nodeclass-hash": "1234"}},
			"spec": map[string]any{
				"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": fmt.Sprintf("class-%d", pool%classes)},
				"requirements": []any{map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"on-demand"}}},
				"expireAfter":  "720h",
			},
			"status": map[string]any{"providerID": fmt.Sprintf("kwok://node-%d", n), "nodeName": fmt.Sprintf("node-%d", n), "capacity": map[string]any{"cpu": "1", "memory": "4Gi"},
				"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Ready", "lastTransitionTime": "2026-01-05T08:00:00Z"}}},
		})
	}
	return out
}
