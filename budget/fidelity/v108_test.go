package fidelity

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/test/toolbin"
)

// The oracle's Karpenter: the release of v1.0 clusters, the one
// hack/budget-oracle-v1.0.8/go.mod requires.
const oracleKarpenter = "v1.0.8"

// oracleAnswer is one answer of hack/budget-oracle-v1.0.8.
type oracleAnswer struct {
	Allowed map[string]int `json:"allowed"`
	Error   string         `json:"error"`
}

// TestAllowedMatchesKarpenterV1_0_8 asks the same kind of random NodePools
// of Karpenter v1.0.8's code, with the three reasons v1.0 knows: a budget
// without reasons there covers Underutilized, Empty and Drifted only.
func TestAllowedMatchesKarpenterV1_0_8(t *testing.T) {
	oracle := toolbin.Find(t, "KARPGATE_BUDGET_ORACLE", "budget-oracle")
	requireLinks(t, oracle, oracleKarpenter)
	reasons, err := budget.ReasonsOf(oracleKarpenter)
	if err != nil {
		t.Fatal(err)
	}
	cases := generate(seed, reasons, pools, instantsPerPool)
	answers := askOracle(t, oracle, cases)
	tl := newTally(reasons)
	for i, c := range cases {
		tl.add(c, karpgateAllows(t, reasons, c), karpenterV1_0_8(answers[i], reasons))
	}
	tl.check(t, "Karpenter "+oracleKarpenter)
}

// requireLinks fails unless the oracle binary links sigs.k8s.io/karpenter
// at version: a stale or foreign binary would compare with another release.
func requireLinks(t *testing.T, binary, version string) {
	t.Helper()
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		t.Fatalf("reading the build information of %s: %v (make budget-oracle builds it)", binary, err)
	}
	for _, dep := range info.Deps {
		if dep.Path == linkedKarpenter {
			if dep.Version != version {
				t.Fatalf("%s links %s %s, want %s (rebuild it: make budget-oracle)", binary, linkedKarpenter, dep.Version, version)
			}
			return
		}
	}
	t.Fatalf("%s does not link %s (rebuild it: make budget-oracle)", binary, linkedKarpenter)
}

// askOracle runs the oracle once on every case, JSON in, JSON out.
func askOracle(t *testing.T, oracle string, cases []fcase) []oracleAnswer {
	t.Helper()
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), oracle)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", oracle, err, stderr.String())
	}
	var answers []oracleAnswer
	if err := json.Unmarshal(stdout.Bytes(), &answers); err != nil {
		t.Fatalf("reading %s's answers: %v", oracle, err)
	}
	if len(answers) != len(cases) {
		t.Fatalf("%s answered %d of %d cases", oracle, len(answers), len(cases))
	}
	return answers
}

// karpenterV1_0_8 reads an answer as v1.0.8's disruption controller does
// (MustGetAllowedDisruptions): an error allows zero for every reason.
func karpenterV1_0_8(a oracleAnswer, reasons []budget.Reason) map[budget.Reason]int {
	out := make(map[budget.Reason]int, len(reasons))
	for _, r := range reasons {
		if a.Error == "" {
			out[r] = a.Allowed[string(r)]
		}
	}
	return out
}
