package e2e

import (
	"strings"
	"testing"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/test/testenv"
)

// TestKarpgateOutageNeverBlocksKarpenter stops karpgate serve while its
// fail-closed validating webhook stays registered, as in a cluster where
// every karpgate pod is down, and drives the real kubectl through the
// writes Karpenter itself makes: they go through, because the webhooks'
// match conditions keep them from karpgate. A spec change karpgate exists
// to judge is still refused, and so is deleting a frozen NodePool, while
// deleting any other goes through.
func TestKarpgateOutageNeverBlocksKarpenter(t *testing.T) {
	env, cluster := testenv.StartKarpgate(t, localcluster.Options{})
	env.MustKubectl(nil, "apply", "-f", "../../examples/ec2nodeclass-production-pinned.yaml")
	env.MustKubectl([]byte(outagePool), "apply", "-f", "-")
	env.MustKubectl([]byte(strings.ReplaceAll(outagePool, "name: outage", "name: outage-frozen")), "apply", "-f", "-")
	if code, out := karpgateRun(t, env, "freeze", "outage-frozen", "--reason", "incident 42"); code != 0 {
		t.Fatalf("freeze: exit %d\n%s", code, out)
	}
	if err := cluster.StopServe(); err != nil {
		t.Fatal(err)
	}

	// Karpenter's writes, as Karpenter makes them (merge patches of
	// metadata only).
	for _, tt := range []struct{ what, resource, patch string }{
		{"the NodePool hash annotation", "nodepools.v1.karpenter.sh/outage",
			`{"metadata":{"annotations":{"karpenter.sh/nodepool-hash":"12345","karpenter.sh/nodepool-hash-version":"v3"}}}`},
		{"the EC2NodeClass hash annotation", "ec2nodeclasses.v1.karpenter.k8s.aws/production",
			`{"metadata":{"annotations":{"karpenter.k8s.aws/ec2nodeclass-hash":"67890","karpenter.k8s.aws/ec2nodeclass-hash-version":"v3"}}}`},
		{"the EC2NodeClass termination finalizer", "ec2nodeclasses.v1.karpenter.k8s.aws/production",
			`{"metadata":{"finalizers":["karpenter.k8s.aws/termination"]}}`},
	} {
		t.Run("karpgate down: "+tt.what+" is written", func(t *testing.T) {
			if res := env.Kubectl(nil, "patch", tt.resource, "--type=merge", "-p", tt.patch); res.ExitCode != 0 {
				t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr)
			}
		})
	}

	t.Run("karpgate down: @latest in production is refused", func(t *testing.T) {
		res := env.Kubectl(nil, "patch", "ec2nodeclasses.v1.karpenter.k8s.aws/production", "--type=json",
			"-p", `[{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@latest"}]`)
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, `failed calling webhook "validate.karpgate.io"`) {
			t.Fatalf("exit %d, stderr %s; want the fail-closed webhook's refusal", res.ExitCode, res.Stderr)
		}
		if alias := env.MustKubectl(nil, "get", "ec2nodeclasses.v1.karpenter.k8s.aws/production", "-o", "jsonpath={.spec.amiSelectorTerms[0].alias}"); alias != "al2023@v20240807" {
			t.Fatalf("alias %q after the refused change", alias)
		}
	})

	t.Run("karpgate down: a label change is refused, a waiver too", func(t *testing.T) {
		for _, args := range [][]string{
			{"label", "ec2nodeclasses.v1.karpenter.k8s.aws/production", "karpgate.io/environment=staging", "--overwrite"},
			{"annotate", "ec2nodeclasses.v1.karpenter.k8s.aws/production", "karpgate.io/waive-KG101=tested elsewhere"},
		} {
			if res := env.Kubectl(nil, args...); res.ExitCode == 0 {
				t.Errorf("kubectl %s went through with karpgate down: it changes what karpgate judges", strings.Join(args, " "))
			}
		}
	})

	t.Run("karpgate down: an object being deleted is judged, and loses its finalizer and goes", func(t *testing.T) {
		env.MustKubectl(nil, "delete", "ec2nodeclasses.v1.karpenter.k8s.aws/production", "--wait=false")
		// Held by Karpenter's finalizer, it is not free to edit: a spec
		// change still waits for karpgate.
		res := env.Kubectl(nil, "patch", "ec2nodeclasses.v1.karpenter.k8s.aws/production", "--type=json",
			"-p", `[{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@latest"}]`)
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, `failed calling webhook "validate.karpgate.io"`) {
			t.Fatalf("a spec change to an object being deleted: exit %d, stderr %s; want the fail-closed webhook's refusal", res.ExitCode, res.Stderr)
		}
		env.MustKubectl(nil, "patch", "ec2nodeclasses.v1.karpenter.k8s.aws/production", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
		if res := env.Kubectl(nil, "get", "ec2nodeclasses.v1.karpenter.k8s.aws/production"); res.ExitCode == 0 {
			t.Fatalf("the EC2NodeClass is still there: %s", res.Stdout)
		}
	})

	// DELETE is judged only for a NodePool with a hold record (the
	// held-delete match condition): others go, a frozen one waits.
	t.Run("karpgate down: deleting a NodePool it does not hold goes through, a frozen one is refused", func(t *testing.T) {
		env.MustKubectl(nil, "delete", "nodepools.v1.karpenter.sh/outage")
		res := env.Kubectl(nil, "delete", "nodepools.v1.karpenter.sh/outage-frozen", "--wait=false")
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, `failed calling webhook "validate.karpgate.io"`) {
			t.Fatalf("deleting the frozen NodePool: exit %d, stderr %s; want the fail-closed webhook's refusal", res.ExitCode, res.Stderr)
		}
	})
}

const outagePool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: outage
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: production
      requirements: []
`
