package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/lint"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/test/testenv"
)

// verdictCorpus holds our own valid and invalid objects, one document each.
const verdictCorpus = "testdata/verdicts"

type corpusObject struct {
	name, kind, apiVersion string
	doc                    []byte
	content                map[string]any
}

// TestSchemaVerdictsMatchTheAPIServer sends every object of the corpus to a
// real API server with `kubectl create --dry-run=server` and lints the
// corpus offline with the same CRDs, for the CRD set karpgate links and for
// Karpenter v1.0.8's. Every object the API server refuses must be denied
// offline, and every object it accepts must get no schema finding; wherever
// the CRDs serve the object's version, the schema stage alone must reach the
// API server's verdict, with the API server's own messages. The same
// verdicts must come out of the shipped binary reading the CRDs from the
// cluster (--crds-from-cluster).
func TestSchemaVerdictsMatchTheAPIServer(t *testing.T) {
	// Its own API server, processes and files, nothing in process that
	// another test starts: it runs beside the other long tests once the
	// sequential ones are done, when the unit tests have freed the cores.
	t.Parallel()
	corpus := readVerdictCorpus(t)
	linked, err := crdschema.Linked()
	if err != nil {
		t.Fatal(err)
	}
	karpgate := buildKarpgate(t)
	sets := []struct {
		name string
		crds []*apiextensionsv1.CustomResourceDefinition
		// release, when set, is the --karpenter-version of these CRDs,
		// for checkJudgedAsRelease.
		release string
	}{
		{linked.Name(), linked.CRDs(), ""},
		{"Karpenter v1.0.8", withoutConversionWebhook(testenv.CRDs(t, crdsource.KarpenterV1_0_8)), "v1.0.8"},
	}
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) {
			env := testenv.Start(t, s.crds)
			set, err := crdschema.New(s.name, s.crds)
			if err != nil {
				t.Fatal(err)
			}
			// The release the CRDs are, as the binary judges with
			// --crds-from-cluster: a rule about a field the release lacks
			// (Unhealthy before v1.15) then folds the schema finding in both.
			judged, err := set.Judged()
			if err != nil {
				t.Fatal(err)
			}
			engine, err := policies.New(context.Background(), policies.Options{Karpenter: &judged})
			if err != nil {
				t.Fatal(err)
			}
			report, err := lint.Run(context.Background(), lint.Options{Inputs: []string{verdictCorpus}, Engine: engine, CRDs: set})
			if err != nil {
				t.Fatal(err)
			}
			offline := map[string]*lint.ObjectResult{}
			for i := range report.Objects {
				offline[report.Objects[i].Name] = &report.Objects[i]
			}
			server := dryRunEach(t, env, corpus)
			var disagreements []string
			refused, accepted := 0, 0
			for _, o := range corpus {
				srv, res := server[o.name], offline[o.name]
				if res == nil && !set.HasGroup(groupOf(o.apiVersion)) {
					// By design: CRDs without the object's group say nothing
					// of it (a CapacityBuffer before v1.14), as of any group.
					continue
				}
				if res == nil {
					t.Fatalf("%s was not linted", o.name)
				}
				verdict, served := schemaVerdict(t, set, o)
				if srv.accepted {
					accepted++
				} else {
					refused++
				}
				disagreements = append(disagreements, compareVerdicts(o, srv, res, verdict, served)...)
			}
			t.Logf("%s: the API server accepted %d and refused %d of %d objects", s.name, accepted, refused, len(corpus))
			if accepted < 10 || refused < 30 {
				t.Fatalf("the corpus no longer exercises both verdicts: %d accepted, %d refused", accepted, refused)
			}
			for _, d := range disagreements {
				t.Error(d)
			}
			if len(disagreements) > 0 {
				t.Fatalf("%d disagreements with the API server", len(disagreements))
			}
			checkFromCluster(t, karpgate, env, report)
			if s.release != "" {
				checkJudgedAsRelease(t, linked, s.release, corpus, server)
			}
		})
	}
}

// groupOf is the group of an apiVersion ("" for the core group).
func groupOf(apiVersion string) string {
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		return ""
	}
	return group
}

// withoutConversionWebhook points v1.0.8's CRDs at no conversion webhook: a
// server-side dry run still encodes the object for storage, which would call
// Karpenter's webhook. Validation happens before, in the version sent, so
// the verdict does not change.
func withoutConversionWebhook(crds []*apiextensionsv1.CustomResourceDefinition) []*apiextensionsv1.CustomResourceDefinition {
	for _, crd := range crds {
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	}
	return crds
}

func readVerdictCorpus(t *testing.T) []corpusObject {
	t.Helper()
	var out []corpusObject
	names := map[string]bool{}
	err := manifest.Walk([]string{verdictCorpus}, nil, func(d *manifest.Document) error {
		for _, o := range d.Objects {
			if names[o.Name()] {
				return fmt.Errorf("%s: the name %s is taken; names must be unique across the corpus", o.Ref(), o.Name())
			}
			names[o.Name()] = true
			out = append(out, corpusObject{name: o.Name(), kind: o.Kind(), apiVersion: o.APIVersion(), doc: d.Raw.Bytes, content: o.Content})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type serverVerdict struct {
	accepted bool
	output   string
}

// dryRunEach creates every object with a server-side dry run, a few at a
// time, and records whether the API server accepted it and what it said.
func dryRunEach(t *testing.T, env *testenv.Env, corpus []corpusObject) map[string]serverVerdict {
	t.Helper()
	ctx := t.Context() // go test's -timeout bounds a hung kubectl
	out := make(map[string]serverVerdict, len(corpus))
	var mu sync.Mutex
	var wg sync.WaitGroup
	var failures []string
	slots := make(chan struct{}, 4)
	for _, o := range corpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			res, err := env.ControlPlane.Kubectl(ctx, o.doc, "create", "--dry-run=server", "-o", "name", "-f", "-")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures = append(failures, err.Error())
				return
			}
			out[o.name] = serverVerdict{accepted: res.ExitCode == 0, output: res.Stdout + res.Stderr}
			if res.ExitCode == 0 && !strings.Contains(res.Stdout, "/"+o.name) {
				failures = append(failures, fmt.Sprintf("%s: kubectl exited 0 without creating it: %s", o.name, res.Stdout))
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatal(strings.Join(failures, "\n"))
	}
	return out
}

// schemaVerdict is the schema stage's verdict alone, before any policy rule
// folds a schema finding into its own; served is false when the CRDs do not
// serve the object's version.
func schemaVerdict(t *testing.T, set *crdschema.Set, o corpusObject) ([]crdschema.Violation, bool) {
	t.Helper()
	v, ok := set.Lookup(o.apiVersion, o.kind)
	if !ok {
		return nil, false
	}
	verdict, err := v.Create(context.Background(), o.content)
	if err != nil {
		t.Fatalf("%s: %v", o.name, err)
	}
	return verdict.Violations, true
}

func compareVerdicts(o corpusObject, srv serverVerdict, res *lint.ObjectResult, violations []crdschema.Violation, served bool) []string {
	var schemaFindings, denials []string
	for _, f := range res.Findings {
		// KG811 is about how YAML 1.1 and 1.2 read a scalar, not a verdict:
		// it warns where the API server takes kubectl's reading.
		if strings.HasPrefix(f.RuleID, "KG8") && f.RuleID != "KG811" {
			schemaFindings = append(schemaFindings, f.RuleID+" "+f.Path+": "+f.Message)
		}
		if f.Action == "deny" {
			denials = append(denials, f.RuleID)
		}
	}
	var out []string
	disagree := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("%s (%s %s): ", o.name, o.apiVersion, o.kind)+fmt.Sprintf(format, args...))
	}
	if srv.accepted {
		if len(violations) > 0 {
			disagree("the API server accepts it, the schema stage refuses it: %+v", violations)
		}
		if len(schemaFindings) > 0 {
			disagree("the API server accepts it, lint reports %v", schemaFindings)
		}
		return out
	}
	if len(denials) == 0 {
		disagree("the API server refuses it, lint does not deny it:\n%s", srv.output)
	}
	if !served {
		return out
	}
	if len(violations) == 0 {
		disagree("the API server refuses it, the schema stage finds nothing:\n%s", srv.output)
	}
	// A strict decoding error stops the API server before validation, so
	// only the unknown fields are in its answer.
	strict := strings.Contains(srv.output, "strict decoding error")
	for _, v := range violations {
		var want string
		switch {
		case v.Class == crdschema.UnknownField:
			want = v.Message
		case strict || v.Path == "" || v.Class == crdschema.Metadata && strings.HasPrefix(v.Message, "malformed metadata"):
			continue // not in the API server's answer, or worded by its decoder
		default:
			want = v.Path + ": " + v.Message
		}
		if !strings.Contains(srv.output, want) {
			disagree("the API server does not say %q:\n%s", want, srv.output)
		}
	}
	return out
}

// checkFromCluster lints the corpus with the shipped binary reading the
// CRDs from the cluster and expects the schema findings of the in-process
// run with the same CRDs.
func checkFromCluster(t *testing.T, karpgate string, env *testenv.Env, want *lint.Report) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(karpgate, "lint", "--crds-from-cluster", "--kubeconfig", env.KubeconfigPath, "--format", "json="+out, verdictCorpus)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("karpgate lint --crds-from-cluster: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Tool     struct{ CRDs string }
		Findings []struct{ Name, Rule, Path string }
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.Tool.CRDs, "cluster https://127.0.0.1:") {
		t.Errorf("the report names the CRD set %q", got.Tool.CRDs)
	}
	schemaFindings := func(rule, name, path string) string { return name + " " + rule + " " + path }
	wantSet, gotSet := map[string]bool{}, map[string]bool{}
	for _, f := range want.Findings() {
		if strings.HasPrefix(f.RuleID, "KG8") {
			wantSet[schemaFindings(f.RuleID, f.Object.Name, f.Path)] = true
		}
	}
	for _, f := range got.Findings {
		if strings.HasPrefix(f.Rule, "KG8") {
			gotSet[schemaFindings(f.Rule, f.Name, f.Path)] = true
		}
	}
	for k := range wantSet {
		if !gotSet[k] {
			t.Errorf("--crds-from-cluster misses %s", k)
		}
	}
	for k := range gotSet {
		if !wantSet[k] {
			t.Errorf("--crds-from-cluster adds %s", k)
		}
	}
	if len(wantSet) == 0 {
		t.Error("no schema findings to compare")
	}
}

// checkJudgedAsRelease lints the corpus with the linked CRDs judged as
// release (`karpgate lint --karpenter-version`) and holds what the
// release's facts add to the verdict of that release's API server: every
// object they add a schema finding to is one it refuses, and the objects
// of what came after the release (Balanced, spec.replicas, Gte,
// enclaveOptions, ssmParameter, windows2025, NodeOverlay, CapacityBuffer)
// get one.
func checkJudgedAsRelease(t *testing.T, linked *crdschema.Set, version string, corpus []corpusObject, server map[string]serverVerdict) {
	t.Helper()
	r, exact, err := release.Lookup(version)
	if err != nil || !exact {
		t.Fatalf("release %s: %v (exact %t)", version, err, exact)
	}
	judged := release.ForRelease(r, true, "--karpenter-version "+version)
	judged.Chosen = true
	schemaFindings := func(karpenter *release.Judged) map[string]map[string]bool {
		engine, err := policies.New(context.Background(), policies.Options{Karpenter: karpenter})
		if err != nil {
			t.Fatal(err)
		}
		report, err := lint.Run(context.Background(), lint.Options{Inputs: []string{verdictCorpus}, Engine: engine, CRDs: linked})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]bool{}
		for _, f := range report.Findings() {
			if strings.HasPrefix(f.RuleID, "KG8") && f.RuleID != "KG811" {
				if out[f.Object.Name] == nil {
					out[f.Object.Name] = map[string]bool{}
				}
				out[f.Object.Name][f.RuleID+" "+f.Path] = true
			}
		}
		return out
	}
	before, after := schemaFindings(nil), schemaFindings(&judged)
	added := map[string][]string{}
	for _, o := range corpus {
		for k := range after[o.name] {
			if !before[o.name][k] {
				added[o.name] = append(added[o.name], k)
			}
		}
		if len(added[o.name]) > 0 && server[o.name].accepted {
			t.Errorf("%s: the API server of Karpenter %s accepts it, lint judging by that release adds %v", o.name, version, added[o.name])
		}
	}
	for _, name := range []string{"v115-valid-np-balanced", "v115-valid-np-static", "v115-valid-np-gte-lte", "v115-valid-nc-enclave", "v115-valid-nc-ssm", "v115-valid-nc-windows2025", "cb-valid-template"} {
		if server[name].accepted {
			t.Errorf("%s: the API server of Karpenter %s accepts it; the corpus no longer shows what came after", name, version)
		}
		if len(added[name]) == 0 {
			t.Errorf("%s: the API server of Karpenter %s refuses it, lint judging by that release adds nothing:\n%s", name, version, server[name].output)
		}
	}
	t.Logf("judged as Karpenter %s, lint added schema findings to %d objects, all refused by its API server", version, len(added))
}
