package policies_test

import (
	"context"
	"fmt"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
)

// An admission webhook builds the engine once (and again when its config
// or policies change), then evaluates each request: deny findings reject
// it, warnings become admission warnings.
func ExampleEngine_Evaluate() {
	cfg := config.Default().WithEnvironment("production")
	engine, err := policies.New(context.Background(), policies.Options{Config: cfg})
	if err != nil {
		panic(err)
	}
	nodeClass := map[string]any{
		"apiVersion": "karpenter.k8s.aws/v1",
		"kind":       "EC2NodeClass",
		"metadata":   map[string]any{"name": "default"},
		"spec": map[string]any{
			"amiSelectorTerms": []any{map[string]any{"alias": "al2023@latest"}},
		},
	}
	result, err := engine.Evaluate(context.Background(), policies.Request{
		Object:    nodeClass,
		Operation: policies.Create,
		Point:     config.Admission,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("denied:", result.Denied())
	for _, f := range result.Denials() {
		fmt.Println(f)
	}
	// Output:
	// denied: true
	// KG101 spec.amiSelectorTerms[0].alias: alias "al2023@latest" follows every AMI release, so each release drifts and replaces every node of this production EC2NodeClass (fix: Pin a version you have tested, such as al2023@v20240807)
}
