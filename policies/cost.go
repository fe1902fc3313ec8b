package policies

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies/sandbox"
)

// sampleObjects are what a policy set is tried on when it loads: a v1
// NodePool and EC2NodeClass of ordinary size, production and not, as
// karpgate sees them at admission (CREATE, and an UPDATE that changes the
// template) and in CI. A policy that runs past its limits on these would
// run past them on real requests; it is refused at load, so a reload keeps
// the engine that works and `karpgate serve` does not start with it.
func sampleObjects() []Request {
	pool := func(env string, budgets []any) map[string]any {
		return map[string]any{
			"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
			"metadata": map[string]any{"name": "sample", "labels": map[string]any{"karpgate.io/environment": env, "team": "platform"}},
			"spec": map[string]any{
				"weight": int64(10),
				"limits": map[string]any{"cpu": "1000", "memory": "1000Gi"},
				"disruption": map[string]any{
					"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "1m", "budgets": budgets,
				},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"team": "platform", "tier": "web"}},
					"spec": map[string]any{
						"nodeClassRef":           map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "sample"},
						"expireAfter":            "720h",
						"terminationGracePeriod": "48h",
						"taints":                 []any{map[string]any{"key": "dedicated", "value": "web", "effect": "NoSchedule"}},
						"requirements": []any{
							map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"spot", "on-demand"}},
							map[string]any{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": []any{"c", "m", "r"}},
							map[string]any{"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": []any{"4"}},
							map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64", "arm64"}},
						},
					},
				},
			},
		}
	}
	class := func(env, alias string) map[string]any {
		return map[string]any{
			"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
			"metadata": map[string]any{"name": "sample", "labels": map[string]any{"karpgate.io/environment": env}},
			"spec": map[string]any{
				"role":                       "KarpenterNodeRole-sample",
				"amiSelectorTerms":           []any{map[string]any{"alias": alias}},
				"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "sample"}}},
				"securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "sample"}}},
				"tags":                       map[string]any{"team": "platform", "environment": env},
				"metadataOptions":            map[string]any{"httpEndpoint": "enabled", "httpTokens": "required", "httpPutResponseHopLimit": int64(1)},
				"blockDeviceMappings": []any{map[string]any{"deviceName": "/dev/xvda", "ebs": map[string]any{
					"volumeSize": "100Gi", "volumeType": "gp3", "encrypted": true,
				}}},
				"kubelet":  map[string]any{"maxPods": int64(110), "systemReserved": map[string]any{"cpu": "100m", "memory": "100Mi"}},
				"userData": "#!/bin/bash\necho sample\n",
			},
		}
	}
	budgets := []any{
		map[string]any{"nodes": "10%"},
		map[string]any{"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h", "reasons": []any{"Drifted"}},
	}
	var out []Request
	for _, env := range []string{"production", "staging"} {
		p, c := pool(env, budgets), class(env, "al2023@v20240807")
		changed := pool(env, budgets)
		changed["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)["tier"] = "api"
		out = append(out,
			Request{Object: p, Operation: Create, Point: config.Admission},
			Request{Object: changed, OldObject: p, Operation: Update, Point: config.Admission},
			Request{Object: changed, OldObject: p, Operation: Update, Point: config.Admission, MutationsOnly: true},
			Request{Object: c, Operation: Create, Point: config.Admission},
			Request{Object: class(env, "al2023@latest"), OldObject: c, Operation: Update, Point: config.Admission},
			Request{Object: p, Point: config.CI},
			Request{Object: c, Point: config.CI},
		)
	}
	return out
}

// checkCost evaluates the samples within the engine's limits and refuses
// the policy set, naming the rule, when one of them runs out.
func (e *Engine) checkCost(ctx context.Context) error {
	for _, req := range sampleObjects() {
		_, err := e.Evaluate(ctx, req)
		if err == nil || !errors.Is(err, sandbox.ErrTooExpensive) {
			continue // evaluation errors of other kinds are the request's to report
		}
		culprit := e.costliestRule(ctx, req)
		return fmt.Errorf("refusing the policies: on a sample %s (%s at %s)%s, %w; a policy must stay within %d evaluation steps and %d bytes per builtin call on ordinary objects",
			req.Object["kind"], strings.ToLower(string(orCI(req.Operation))), req.Point, culprit, err, e.limits.MaxSteps, e.limits.MaxBuiltinBytes)
	}
	return nil
}

func orCI(op Operation) Operation {
	if op == "" {
		return "lint"
	}
	return op
}

// costliestRule runs the request again with a tracer and names the rule
// whose file the evaluation was in when it ran out.
func (e *Engine) costliestRule(ctx context.Context, req Request) string {
	input, _, err := e.input(req, req.Point)
	if err != nil {
		return ""
	}
	// The rule groups are queries of their own (see groups.go): trace each
	// until one runs out, and name where that one was.
	queries := []rego.PreparedEvalQuery{e.queries.selections[selectionFor(req)]}
	for i, g := range e.groups {
		if g.Mutates == req.MutationsOnly {
			queries = append(queries, e.queries.groups[i])
		}
	}
	loc := sandbox.RanOutAt(ctx, queries, input, e.now(), e.limits)
	if loc == nil {
		return ""
	}
	for _, r := range e.catalog {
		if r.File == loc.File {
			return fmt.Sprintf(" rule %s (%s:%d)", r.ID, r.File, loc.Row)
		}
	}
	return fmt.Sprintf(" %s:%d", loc.File, loc.Row)
}
