package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/cmd/karpgate/app"
	"github.com/karpgate/karpgate/cmd/karpgate/app/serve"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

// reportColumns lists karpgate's ClusterReports as kubectl shows them,
// with the columns that do not change when rules are added.
var reportColumns = []string{"get", "clusterreports", "-l", "app.kubernetes.io/managed-by=karpgate", "--sort-by=.metadata.name",
	"-o", "custom-columns=NAME:.metadata.name,KIND:.scope.kind,OBJECT:.scope.name,FAIL:.summary.fail,WARN:.summary.warn,SKIP:.summary.skip"}

// TestAuditOfStoredObjects is the acceptance of the audit in the cluster:
// the stored objects get one ClusterReport each, which kubectl lists; a
// rule switched to deny in karpgate.yaml fails the report of each object
// that breaks it, is counted in karpgate_audit_findings and sends an Event,
// without a write to any audited object; fixing the object clears the
// entry; deleting one deletes its report. The disruption loop is off: the
// audit runs without it (karpgate serve --controller=false keeps --audit),
// and the installs' tests run both together.
func TestAuditOfStoredObjects(t *testing.T) {
	env, cluster := testenv.StartKarpgate(t, localcluster.Options{
		Config: "apiVersion: karpgate.io/v1alpha1\nkind: Config\n",
		Serve: func(o *serve.Options) {
			o.Controller, o.Audit = false, true
			o.ReloadInterval = 100 * time.Millisecond
			o.AuditOptions.ReportWritesPerSecond = 100
		},
	})
	env.MustKubectl(nil, "apply", "-f", "../testdata/audit/cluster.yaml")

	const before = `NAME                                  KIND           OBJECT           FAIL   WARN   SKIP
karpgate-ec2nodeclass-pinned          EC2NodeClass   pinned           0      0      0
karpgate-ec2nodeclass-staging-latest  EC2NodeClass   staging-latest   0      1      0
karpgate-nodeclaim-web-abcde          NodeClaim      web-abcde        0      0      0
karpgate-nodepool-orphan              NodePool       orphan           0      1      0
karpgate-nodepool-web                 NodePool       web              0      0      0
`
	waitForReports(t, env, before)
	// The default columns, as Policy Reporter's users see them in kubectl.
	if out := env.MustKubectl(nil, "get", "clusterreports"); !strings.HasPrefix(out, "NAME") || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "PASS   FAIL   WARN   ERROR   SKIP   AGE") {
		t.Errorf("kubectl get clusterreports:\n%s", out)
	}
	result := env.MustKubectl(nil, "get", "clusterreport", "karpgate-nodepool-orphan", "-o",
		`jsonpath={range .results[?(@.result=="warn")]}{.policy} {.source} {.properties.action} {.properties.path}: {.message}{"\n"}{end}`)
	if want := "KG501 karpgate warn spec.template.spec.nodeClassRef.name: EC2NodeClass \"gone\" is not in the input; it has pinned, staging-latest\n"; result != want {
		t.Errorf("the orphan's warn result:\n%s\nwant\n%s", result, want)
	}
	if owner := env.MustKubectl(nil, "get", "clusterreport", "karpgate-nodepool-web", "-o", "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}"); owner != "NodePool/web" {
		t.Errorf("the report's owner is %q, want NodePool/web", owner)
	}

	if code, out := karpgateRun(t, env, "status"); code != 0 || !strings.Contains(out, "AUDIT") ||
		!strings.Contains(columns(out), "fail=0 warn=1") || !strings.Contains(columns(out), "pass") {
		t.Errorf("karpgate status: exit %d\n%s", code, out)
	}

	versions := resourceVersions(t, env)
	if err := os.WriteFile(cluster.ConfigPath, []byte("apiVersion: karpgate.io/v1alpha1\nkind: Config\nrules:\n  KG102: {severity: deny}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitForReports(t, env, strings.Replace(before, "staging-latest   0      1", "staging-latest   1      0", 1))
	wait.ForNoError(t, "the deny finding counted and an Event sent", func() error {
		if v := metricValue(t, cluster.MetricsURL, `karpgate_audit_findings{action="deny",rule="KG102"}`); v != 1 {
			return fmt.Errorf("karpgate_audit_findings{action=deny,rule=KG102} = %v", v)
		}
		events := env.MustKubectl(nil, "get", "events.events.k8s.io", "-A", "--field-selector", "reason=PolicyViolation",
			"-o", `jsonpath={range .items[*]}{.regarding.kind}/{.regarding.name}: {.note}{"\n"}{end}`)
		if !strings.Contains(events, `EC2NodeClass/staging-latest: KG102 spec.amiSelectorTerms[0].alias: alias "al2023@latest" follows every AMI release`) {
			return fmt.Errorf("events:\n%s", events)
		}
		return nil
	})
	if after := resourceVersions(t, env); after != versions {
		t.Errorf("the audit wrote audited objects:\nbefore %s\nafter  %s", versions, after)
	}
	auditMatchesLint(t, env, cluster.ConfigPath)

	env.MustKubectl(nil, "patch", "ec2nodeclass", "staging-latest", "--type", "json", "-p", `[{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@v20240807"}]`)
	waitForReports(t, env, strings.Replace(before, "staging-latest   0      1", "staging-latest   0      0", 1))
	wait.ForNoError(t, "the fixed object's deny finding no longer counted", func() error {
		if v := metricValue(t, cluster.MetricsURL, `karpgate_audit_findings{action="deny",rule="KG102"}`); v != 0 {
			return fmt.Errorf("karpgate_audit_findings{action=deny,rule=KG102} = %v", v)
		}
		return nil
	})

	env.MustKubectl(nil, "delete", "nodepool", "orphan")
	var gone []string
	for _, line := range strings.Split(strings.Replace(before, "staging-latest   0      1", "staging-latest   0      0", 1), "\n") {
		if !strings.Contains(line, "orphan") {
			gone = append(gone, line)
		}
	}
	waitForReports(t, env, strings.Join(gone, "\n"))
	if v := metricValue(t, cluster.MetricsURL, "karpgate_audit_last_full_audit_timestamp_seconds"); v == 0 {
		t.Error("no full audit recorded")
	}
}

func waitForReports(t *testing.T, env *testenv.Env, want string) {
	t.Helper()
	wait.ForNoError(t, "the audit's reports", func() error {
		if got := env.MustKubectl(nil, reportColumns...); columns(got) != columns(want) {
			return fmt.Errorf("kubectl %s:\n%s\nwant\n%s", strings.Join(reportColumns, " "), got, want)
		}
		return nil
	})
}

// columns is a table with each run of spaces made one: kubectl pads
// columns to their longest cell.
func columns(table string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(table), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}

// resourceVersions are those of every audited object, in one line.
func resourceVersions(t *testing.T, env *testenv.Env) string {
	t.Helper()
	return env.MustKubectl(nil, "get", "nodepools.karpenter.sh,nodeclaims.karpenter.sh,ec2nodeclasses.karpenter.k8s.aws", "-o",
		`jsonpath={range .items[*]}{.kind}/{.metadata.name}@{.metadata.resourceVersion} {end}`)
}

// auditMatchesLint: `karpgate audit` prints the findings `karpgate lint`
// prints for the same objects dumped with kubectl, and exits 1 as lint does.
func auditMatchesLint(t *testing.T, env *testenv.Env, configPath string) {
	t.Helper()
	code, auditOut := karpgateRun(t, env, "audit", "--config", configPath, "--format", "json")
	dump := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(dump, []byte(env.MustKubectl(nil, "get", "nodepools.karpenter.sh,nodeclaims.karpenter.sh,ec2nodeclasses.karpenter.k8s.aws", "-o", "yaml")), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	lintCode := app.Execute([]string{"lint", "--config", configPath, "--crds-from-cluster", "--kubeconfig", env.KubeconfigPath, "--format", "json", dump}, nil, &out, &errOut)
	if code != 1 || lintCode != 1 {
		t.Fatalf("karpgate audit exited %d, karpgate lint %d; want 1 for both\n%s\n%s", code, lintCode, auditOut, errOut.String())
	}
	audited, linted := jsonFindings(t, auditOut[strings.Index(auditOut, "{"):]), jsonFindings(t, out.String())
	if len(audited) == 0 || !slices.Equal(audited, linted) {
		t.Errorf("karpgate audit found\n  %s\nkarpgate lint found\n  %s", strings.Join(audited, "\n  "), strings.Join(linted, "\n  "))
	}
}

// jsonFindings reads lint's json format into "action rule Kind/name path:
// message" lines, sorted: what is found, wherever it is.
func jsonFindings(t *testing.T, s string) []string {
	t.Helper()
	var r struct {
		Findings []struct{ Action, Rule, Kind, Name, Path, Message string }
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	var out []string
	for _, f := range r.Findings {
		out = append(out, fmt.Sprintf("%s %s %s/%s %s: %s", f.Action, f.Rule, f.Kind, f.Name, f.Path, f.Message))
	}
	slices.Sort(out)
	return out
}
