package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/test/testenv"
)

func readTestdata(t *testing.T, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "testdata"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSmokeCRDDefaultsAndValidation proves the whole chain a later feature
// stands on: binaries built from source, real CRDs from the module cache,
// kubectl talking to the API server, and the CRDs' own defaulting and CEL.
func TestSmokeCRDDefaultsAndValidation(t *testing.T) {
	env := testenv.Start(t, testenv.CRDs(t, crdsource.KarpenterV1_15_1))

	out := env.MustKubectl(nil, "apply", "-f", "../testdata/smoke/ec2nodeclass.yaml", "-f", "../testdata/smoke/nodepool.yaml")
	for _, want := range []string{"ec2nodeclass.karpenter.k8s.aws/smoke created", "nodepool.karpenter.sh/smoke created"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply output %q lacks %q", out, want)
		}
	}

	var pool struct {
		Spec struct {
			Disruption struct {
				Budgets []struct {
					Nodes string `json:"nodes"`
				} `json:"budgets"`
				ConsolidateAfter string `json:"consolidateAfter"`
			} `json:"disruption"`
			Template struct {
				Spec struct {
					ExpireAfter string `json:"expireAfter"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	decodeJSON(t, env.MustKubectl(nil, "get", "nodepools.karpenter.sh", "smoke", "-o", "json"), &pool)
	if b := pool.Spec.Disruption.Budgets; len(b) != 1 || b[0].Nodes != "10%" {
		t.Errorf("default budgets = %+v, want [{nodes: 10%%}]", b)
	}
	if got := pool.Spec.Template.Spec.ExpireAfter; got != "720h" {
		t.Errorf("default expireAfter = %q, want 720h", got)
	}
	if got := pool.Spec.Disruption.ConsolidateAfter; got != "0s" {
		t.Errorf("default consolidateAfter = %q, want 0s", got)
	}

	var class struct {
		Spec struct {
			MetadataOptions struct {
				HTTPPutResponseHopLimit int    `json:"httpPutResponseHopLimit"`
				HTTPTokens              string `json:"httpTokens"`
			} `json:"metadataOptions"`
		} `json:"spec"`
	}
	decodeJSON(t, env.MustKubectl(nil, "get", "ec2nodeclasses", "smoke", "-o", "json"), &class)
	if got := class.Spec.MetadataOptions; got.HTTPPutResponseHopLimit != 1 || got.HTTPTokens != "required" {
		t.Errorf("default metadataOptions = %+v, want hop limit 1 and tokens required", got)
	}

	res := env.Kubectl(nil, "apply", "-f", "../testdata/smoke/nodepool-schedule-without-duration.yaml")
	if res.ExitCode == 0 {
		t.Fatalf("a schedule without duration was accepted:\n%s", res.Stdout)
	}
	if !strings.Contains(res.Stderr, "'schedule' must be set with 'duration'") {
		t.Errorf("kubectl stderr lacks the CRD's own message:\n%s", res.Stderr)
	}
	if res := env.Kubectl(nil, "get", "nodepool", "half-a-window"); res.ExitCode == 0 {
		t.Errorf("rejected NodePool exists anyway")
	}
}

func decodeJSON(t *testing.T, s string, into any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), into); err != nil {
		t.Fatalf("kubectl output is not JSON: %v\n%s", err, s)
	}
}
