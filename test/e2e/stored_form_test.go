package e2e

import (
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/test/testenv"
)

// judgedAsStored is TestAdmissionWebhooks' part on v1beta1 writes. On
// Karpenter v1.0.8's CRDs, which store v1 through karpgate's conversion,
// the API server applies a karpgate.io/restore-v1 record after admission:
// the validating webhook judges the v1 object the conversion will store,
// refuses a record the client forged, and lets an honest read-modify-write
// through.
func judgedAsStored(t *testing.T, env *testenv.Env) {
	const denied = `admission webhook "validate.karpgate.io" denied the request: `

	forgedLatest := string(readTestdata(t, "admission", "ec2nodeclass-v1beta1-forged-latest.yaml"))
	// The same v1beta1 body without the record: pinned, as it says.
	honest := strings.Replace(forgedLatest, "    karpgate.io/restore-v1:", "    removed-record:", 1)

	t.Run("a forged restore record cannot store @latest in a production EC2NodeClass", func(t *testing.T) {
		res := env.Kubectl([]byte(forgedLatest), "apply", "-f", "-")
		if res.ExitCode != 1 || !strings.Contains(res.Stderr, denied+"EC2NodeClass/forged-latest cannot be stored as written:\n"+
			"karpgate.io/restore-v1 records[0] at spec.amiSelectorTerms: it would store a value this write does not show, and the rules judge the stored object differently with it: adds KG101 (deny) at spec.amiSelectorTerms[0].alias") {
			t.Fatalf("exit %d\n%s", res.ExitCode, res.Stderr)
		}
		if res := env.Kubectl(nil, "get", "ec2nodeclasses.v1.karpenter.k8s.aws", "forged-latest", "-o", "jsonpath={.spec.amiSelectorTerms}"); res.ExitCode == 0 {
			t.Fatalf("the EC2NodeClass was stored, with amiSelectorTerms %s", res.Stdout)
		}
		env.MustKubectl([]byte(honest), "apply", "-f", "-")
		if alias := env.MustKubectl(nil, "get", "ec2nodeclasses.v1.karpenter.k8s.aws", "forged-latest", "-o", "jsonpath={.spec.amiSelectorTerms[0].alias}"); alias != "al2023@v20240807" {
			t.Fatalf("stored alias %q", alias)
		}
	})

	t.Run("a forged restore record cannot store a waiver", func(t *testing.T) {
		const obj = "ec2nodeclasses.v1beta1.karpenter.k8s.aws/forged-waiver"
		env.MustKubectl([]byte(strings.Replace(honest, "name: forged-latest", "name: forged-waiver", 1)), "apply", "-f", "-")
		const record = `{"records":[{"path":["metadata","annotations","karpgate.io/waive-KG101"],"original":"tested elsewhere"}]}`
		res := env.Kubectl(nil, "annotate", obj, "--overwrite", karpenter.RestoreV1Annotation+"="+record)
		if res.ExitCode != 1 || !strings.Contains(res.Stderr, denied+"EC2NodeClass/forged-waiver cannot be stored as written:\n"+
			`karpgate.io/restore-v1 records[0] at metadata.annotations[karpgate.io/waive-KG101]: it would store annotation karpgate.io/waive-KG101 "tested elsewhere", where this write has none`) {
			t.Fatalf("exit %d\n%s", res.ExitCode, res.Stderr)
		}
		stored := getJSON(t, env, "ec2nodeclasses.v1.karpenter.k8s.aws", "forged-waiver")
		if v, ok := field(stored, "metadata", "annotations").(map[string]any)["karpgate.io/waive-KG101"]; ok {
			t.Fatalf("the stored EC2NodeClass carries karpgate.io/waive-KG101 %q", v)
		}
	})

	t.Run("a v1 object read as v1beta1 and written back keeps its v1-only fields", func(t *testing.T) {
		env.MustKubectl([]byte(productionClass("round-trip")), "apply", "-f", "-")
		beta := getJSON(t, env, "ec2nodeclasses.v1beta1.karpenter.k8s.aws", "round-trip")
		if _, ok := field(beta, "metadata", "annotations").(map[string]any)[karpenter.RestoreV1Annotation]; !ok {
			t.Fatalf("the v1beta1 view carries no %s for spec.kubelet", karpenter.RestoreV1Annotation)
		}
		setLabel(beta, "team", "web")
		if res := env.Kubectl(mustMarshal(t, beta), "replace", "-f", "-"); res.ExitCode != 0 {
			t.Fatalf("the honest round trip was refused: %s", res.Stderr)
		}
		stored := getJSON(t, env, "ec2nodeclasses.v1.karpenter.k8s.aws", "round-trip")
		wantJSON(t, "spec.kubelet after the v1beta1 write", field(stored, "spec", "kubelet"), `{"maxPods": 110}`)
		if got := field(stored, "metadata", "labels", "team"); got != "web" {
			t.Errorf("the write's own change is missing: label team = %v", got)
		}
	})

	t.Run("a write to an object being deleted is judged", func(t *testing.T) {
		const obj = "ec2nodeclasses.v1.karpenter.k8s.aws/being-deleted"
		env.MustKubectl([]byte(productionClass("being-deleted")), "apply", "-f", "-")
		env.MustKubectl(nil, "patch", obj, "--type=merge", "-p", `{"metadata":{"finalizers":["example.com/hold"]}}`)
		env.MustKubectl(nil, "delete", obj, "--wait=false")
		res := env.Kubectl(nil, "patch", obj, "--type=json", "-p", `[{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@latest"}]`)
		if res.ExitCode != 1 || !strings.Contains(res.Stderr, denied+"EC2NodeClass/being-deleted breaks 1 karpgate rule:\nKG101 spec.amiSelectorTerms[0].alias") {
			t.Fatalf("a spec change to an object being deleted: exit %d\n%s", res.ExitCode, res.Stderr)
		}
		// Removing the finalizer is never judged, and the object goes.
		env.MustKubectl(nil, "patch", obj, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
		if res := env.Kubectl(nil, "get", obj); res.ExitCode == 0 {
			t.Fatalf("the EC2NodeClass is still there: %s", res.Stdout)
		}
	})
}

// productionClass is a pinned production EC2NodeClass with spec.kubelet,
// which v1beta1 has no field for.
func productionClass(name string) string {
	return `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: ` + name + `
  labels:
    karpgate.io/environment: production
spec:
  role: KarpenterNodeRole-e2e
  amiSelectorTerms:
    - alias: al2023@v20240807
  kubelet:
    maxPods: 110
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: e2e
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: e2e
`
}
