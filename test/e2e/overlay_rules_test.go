package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/cmd/karpgate/app"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

// overlayWeightRule is the user rule about NodeOverlays that the policies
// and webhook/admission tests judge too, written as docs/own-rules.md says:
// for every kind, testing the kind.
const overlayWeightRule = "../testdata/rules/acme_overlay_weight.rego"

const overlayRuleMessage = "ACME010 spec.weight: the overlay sets no weight, so it ties with the others"

// checkOverlayRule: a user rule about NodeOverlays, in karpgate serve's
// policy folder, denies a NodeOverlay write through the API server with
// its message, and `karpgate lint` with the same folder denies the same
// object: the webhook and lint are one rule set. A waiver of the rule holds
// at admission, which takes the mutating webhook's record. env's API
// server serves Karpenter v1.15.1's CRDs, NodeOverlay's among them.
func checkOverlayRule(t *testing.T, env *testenv.Env, policyDir string) {
	rule, err := os.ReadFile(overlayWeightRule)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(policyDir, "overlay.rego"), rule, 0o600); err != nil {
		t.Fatal(err)
	}
	unweighted := `apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata:
  name: e2e-overlay-unweighted
spec:
  requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]
  priceAdjustment: "-10%"
`
	var denied string
	wait.For(t, "karpgate serve to load the rule about NodeOverlays", func() bool {
		res := env.Kubectl([]byte(unweighted), "create", "--dry-run=server", "-f", "-")
		denied = res.Stderr
		return res.ExitCode != 0
	})
	if !strings.Contains(denied, karpgateDenial) || !strings.Contains(denied, overlayRuleMessage) {
		t.Fatalf("the API server refused the NodeOverlay, but not by the rule's denial:\n%s", denied)
	}
	weighted := strings.Replace(unweighted, "e2e-overlay-unweighted", "e2e-overlay-weighted", 1) + "  weight: 10\n"
	if res := env.Kubectl([]byte(weighted), "create", "--dry-run=server", "-f", "-"); res.ExitCode != 0 {
		t.Fatalf("a NodeOverlay with a weight was refused:\n%s", res.Stderr)
	}
	// A waiver holds only with the record of who set it, which the
	// mutating webhook writes: it must match NodeOverlays too.
	waived := strings.Replace(unweighted, "  name: e2e-overlay-unweighted\n", "  name: e2e-overlay-waived\n  annotations: {karpgate.io/waive-ACME010: ties are fine here}\n", 1)
	if res := env.Kubectl([]byte(waived), "create", "--dry-run=server", "-f", "-"); res.ExitCode != 0 || !strings.Contains(res.Stderr, "ACME010 waived by annotation karpgate.io/waive-ACME010") {
		t.Fatalf("the waived NodeOverlay should be admitted with the waiver shown (exit %d):\n%s", res.ExitCode, res.Stderr)
	}

	file := filepath.Join(t.TempDir(), "overlay.yaml")
	if err := os.WriteFile(file, []byte(unweighted), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := app.Execute([]string{"lint", "--policy", policyDir, "--color", "never", file}, nil, &out, &errOut)
	if code != 1 || !strings.Contains(out.String(), "deny  ACME010  NodeOverlay/e2e-overlay-unweighted  spec.weight") ||
		!strings.Contains(out.String(), "the overlay sets no weight, so it ties with the others") {
		t.Fatalf("karpgate lint should deny what the webhook denied (exit %d):\n%s%s", code, out.String(), errOut.String())
	}
}
