package twin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/admission"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/admissionpolicy"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/twin"
)

func builtinObjects(t *testing.T, cfg *config.Config) twin.Objects {
	t.Helper()
	catalog, err := policies.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	objs, _, err := twin.Build(catalog, cfg, release.ForRelease(release.Newest(), true, "newest"), deploy.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestPolicyLoadsOnTheOldestKubernetes compiles every expression as an API
// server of the oldest version with ValidatingAdmissionPolicy v1 compiles
// a new policy: a CEL function added later would be refused there.
func TestPolicyLoadsOnTheOldestKubernetes(t *testing.T) {
	objs := builtinObjects(t, config.Default())
	if err := admissionpolicy.Check(objs.Policy, admissionpolicy.OldestKubernetes); err != nil {
		t.Fatal(err)
	}
}

func TestLatestInProductionIsDenied(t *testing.T) {
	objs := builtinObjects(t, config.Default())
	ev, err := admissionpolicy.New([]*admissionregistrationv1.ValidatingAdmissionPolicy{objs.Policy}, objs.Bindings, admissionpolicy.ConfigMapParams(objs.Params))
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{
		"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
		"metadata": map[string]any{"name": "prod", "labels": map[string]any{"karpgate.io/environment": "production"}},
		"spec":     map[string]any{"amiSelectorTerms": []any{map[string]any{"alias": "al2023@latest"}}},
	}
	v, err := ev.Validate(context.Background(), admissionpolicy.Request{Object: obj, Resource: "ec2nodeclasses", Operation: admission.Create})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Denied || !strings.Contains(v.Message, "KG101 spec.amiSelectorTerms[0].alias: alias \"al2023@latest\" follows every AMI release") {
		t.Fatalf("verdict %+v", v)
	}
	t.Log(v.Message)
}

// TestExpressionsFitTheAPIServer keeps every expression under the API
// server's limit of 100,000 code points, with room to grow.
func TestExpressionsFitTheAPIServer(t *testing.T) {
	objs := builtinObjects(t, config.Default())
	largest, name := 0, ""
	check := func(what, expr string) {
		if n := len([]rune(expr)); n > largest {
			largest, name = n, what
		}
	}
	for _, v := range objs.Policy.Spec.Variables {
		check("variable "+v.Name, v.Expression)
	}
	for i, v := range objs.Policy.Spec.Validations {
		check(fmt.Sprintf("validation %d message", i), v.MessageExpression)
	}
	t.Logf("largest expression: %s, %d code points", name, largest)
	if largest > 50_000 {
		t.Fatalf("%s is %d code points; the API server refuses more than 100,000, so keep well under it", name, largest)
	}
}
