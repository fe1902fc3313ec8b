package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/cmd/karpgate/app/serve"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

// TestKarpgateOutageNeverBlocksKarpenter runs one local cluster with the
// rules' CEL twins installed as `karpgate run` installs them (the
// ValidatingAdmissionPolicy, its bindings and parameters), and drives the
// real kubectl through karpgate up, then down with its fail-closed
// webhooks still registered, then with its webhooks removed:
//
//   - up: a denial names the rule once (the API server's twin refuses it
//     before the webhook is called), and a warning shows once;
//   - a change of karpgate.yaml reaches the twins' parameters;
//   - down: Karpenter's own writes go through; what a twin judges is
//     refused by the API server with the rule and its fix; what no twin
//     judges waits for karpgate and is refused;
//     deleting a NodePool karpgate does not hold goes through, a frozen
//     one waits for karpgate and is refused;
//   - webhooks removed: the twins alone refuse @latest and an alias
//     version karpgate.yaml no longer approves, and admit valid objects.
func TestKarpgateOutageNeverBlocksKarpenter(t *testing.T) {
	env, cluster := testenv.StartKarpgate(t, localcluster.Options{
		AdmissionPolicy: true,
		Serve:           func(o *serve.Options) { o.ReloadInterval = 100 * time.Millisecond },
	})
	env.MustKubectl(nil, "apply", "-f", "../../examples/ec2nodeclass-production-pinned.yaml")
	env.MustKubectl([]byte(outagePool), "apply", "-f", "-")
	env.MustKubectl([]byte(strings.ReplaceAll(outagePool, "name: outage", "name: outage-frozen")), "apply", "-f", "-")
	if code, out := karpgateRun(t, env, "freeze", "outage-frozen", "--reason", "incident 42"); code != 0 {
		t.Fatalf("freeze: exit %d\n%s", code, out)
	}
	latest, err := os.ReadFile("../../examples/ec2nodeclass-production-latest.yaml")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("karpgate up: a denial names the rule once, and a warning shows once", func(t *testing.T) {
		res := env.Kubectl(latest, "apply", "-f", "-")
		if res.ExitCode == 0 || strings.Count(res.Stderr, "KG101") != 1 ||
			!strings.Contains(res.Stderr, "ValidatingAdmissionPolicy 'karpgate' with binding 'karpgate-deny' denied request: KG101 spec.amiSelectorTerms[0].alias") {
			t.Fatalf("exit %d, stderr %s; want the twin's refusal, naming KG101 once", res.ExitCode, res.Stderr)
		}
		staging := strings.ReplaceAll(strings.ReplaceAll(string(latest), "production-latest", "staging-latest"), "production", "staging")
		wait.For(t, "the webhook to leave KG102's warning to its twin", func() bool {
			res := env.Kubectl([]byte(staging), "apply", "-f", "-", "--dry-run=server")
			return res.ExitCode == 0 && strings.Count(res.Stderr, "KG102") == 1 &&
				strings.Contains(res.Stderr, "Warning: Validation failed for ValidatingAdmissionPolicy 'karpgate' with binding 'karpgate-warn': KG102 ")
		})
	})

	t.Run("karpgate up: a change of karpgate.yaml reaches the twins' parameters", func(t *testing.T) {
		config, err := os.ReadFile(cluster.ConfigPath)
		if err != nil {
			t.Fatal(err)
		}
		replaceFile(t, cluster.ConfigPath, append(config, []byte("amis:\n  approvedAliasVersions:\n    al2023: [v20240807]\n")...))
		wait.For(t, "karpgate serve to write the approved versions into the twins' parameters", func() bool {
			got := env.Kubectl(nil, "-n", "karpgate", "get", "configmap", "karpgate-vap-deny", "-o", `jsonpath={.data.amis\.approved\.al2023}`)
			return got.ExitCode == 0 && got.Stdout == "v20240807"
		})
	})

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

	t.Run("karpgate down: @latest in production is refused by its twin, with the approved version to pin", func(t *testing.T) {
		res := env.Kubectl(nil, "patch", "ec2nodeclasses.v1.karpenter.k8s.aws/production", "--type=json",
			"-p", `[{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@latest"}]`)
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, "ValidatingAdmissionPolicy 'karpgate' with binding 'karpgate-deny' denied request: KG101 ") ||
			!strings.Contains(res.Stderr, "(fix: Pin an approved version: al2023@v20240807)") {
			t.Fatalf("exit %d, stderr %s; want KG101's twin's refusal", res.ExitCode, res.Stderr)
		}
		if alias := env.MustKubectl(nil, "get", "ec2nodeclasses.v1.karpenter.k8s.aws/production", "-o", "jsonpath={.spec.amiSelectorTerms[0].alias}"); alias != "al2023@v20240807" {
			t.Fatalf("alias %q after the refused change", alias)
		}
	})

	t.Run("karpgate down: taking the class out of production is refused by KG604's twin", func(t *testing.T) {
		res := env.Kubectl(nil, "label", "ec2nodeclasses.v1.karpenter.k8s.aws/production", "karpgate.io/environment=staging", "--overwrite")
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, "denied request: KG604 metadata.labels[karpgate.io/environment]") {
			t.Fatalf("exit %d, stderr %s; want KG604's twin's refusal", res.ExitCode, res.Stderr)
		}
	})

	t.Run("karpgate down: what no twin refuses waits for the fail-closed webhook, on an object being deleted too", func(t *testing.T) {
		role := []string{"patch", "ec2nodeclasses.v1.karpenter.k8s.aws/production", "--type=merge", "-p", `{"spec":{"role":"AnotherRole"}}`}
		for _, args := range [][]string{
			{"annotate", "ec2nodeclasses.v1.karpenter.k8s.aws/production", "karpgate.io/waive-KG101=tested elsewhere"},
			role,
			nil, // delete, held by Karpenter's finalizer
			role,
		} {
			if args == nil {
				env.MustKubectl(nil, "delete", "ec2nodeclasses.v1.karpenter.k8s.aws/production", "--wait=false")
				continue
			}
			if res := env.Kubectl(nil, args...); res.ExitCode == 0 || !strings.Contains(res.Stderr, `failed calling webhook "validate.karpgate.io"`) {
				t.Errorf("kubectl %s: exit %d, stderr %s; want the fail-closed webhook's refusal", strings.Join(args, " "), res.ExitCode, res.Stderr)
			}
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

	env.MustKubectl(nil, "delete", "validatingwebhookconfiguration", "karpgate")
	env.MustKubectl(nil, "delete", "mutatingwebhookconfiguration", "karpgate")

	t.Run("webhooks removed: @latest in production is refused with the rule and its fix", func(t *testing.T) {
		res := env.Kubectl(latest, "apply", "-f", "-")
		if res.ExitCode == 0 {
			t.Fatalf("admitted: %s", res.Stdout)
		}
		golden(t, []byte(res.Stderr), "admission", "policy-denial.golden")
	})

	t.Run("webhooks removed: an alias version karpgate.yaml does not approve is refused", func(t *testing.T) {
		unapproved := strings.ReplaceAll(string(latest), "al2023@latest", "al2023@v20991231")
		res := env.Kubectl([]byte(unapproved), "apply", "-f", "-")
		if res.ExitCode == 0 || !strings.Contains(res.Stderr,
			`KG108 spec.amiSelectorTerms[0].alias: alias "al2023@v20991231" pins a version that is not approved for production; approved: v20240807`) {
			t.Fatalf("exit %d, stderr %s; want KG108's twin's refusal", res.ExitCode, res.Stderr)
		}
	})

	t.Run("webhooks removed: valid objects and Karpenter's writes are admitted", func(t *testing.T) {
		approved := strings.ReplaceAll(string(latest), "al2023@latest", "al2023@v20240807")
		if res := env.Kubectl([]byte(approved), "apply", "-f", "-"); res.ExitCode != 0 {
			t.Fatalf("a production class on the approved version: exit %d, %s", res.ExitCode, res.Stderr)
		}
		if res := env.Kubectl([]byte(strings.ReplaceAll(outagePool, "name: outage", "name: outage-2")), "apply", "-f", "-"); res.ExitCode != 0 {
			t.Fatalf("a NodePool: exit %d, %s", res.ExitCode, res.Stderr)
		}
		if res := env.Kubectl(nil, "patch", "ec2nodeclasses.v1.karpenter.k8s.aws/production-latest", "--type=merge", "-p",
			`{"metadata":{"annotations":{"karpenter.k8s.aws/ec2nodeclass-hash":"1","karpenter.k8s.aws/ec2nodeclass-hash-version":"v3"}}}`); res.ExitCode != 0 {
			t.Fatalf("Karpenter's hash annotation: exit %d, %s", res.ExitCode, res.Stderr)
		}
	})

	t.Run("webhooks removed: the object being deleted loses its finalizer and goes", func(t *testing.T) {
		env.MustKubectl(nil, "patch", "ec2nodeclasses.v1.karpenter.k8s.aws/production", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
		if res := env.Kubectl(nil, "get", "ec2nodeclasses.v1.karpenter.k8s.aws/production"); res.ExitCode == 0 {
			t.Fatalf("the EC2NodeClass is still there: %s", res.Stdout)
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
