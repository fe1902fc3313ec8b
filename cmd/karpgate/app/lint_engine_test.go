package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLintEngineVAP judges the same inputs by the rules and by their CEL
// twins alone: the twins drop what has no twin (KG201's cron, KG501's
// other objects) and keep what the API server would enforce on its own,
// with the message and fix the rule gives. Each run says which engine
// judged. (One --engine vap run: compiling the policy costs seconds.)
func TestLintEngineVAP(t *testing.T) {
	dir := t.TempDir()
	inputs := []string{"--environment", "production", "testdata/deny.yaml", "testdata/warn.yaml"}
	regoJSON, vapJSON := filepath.Join(dir, "rego.json"), filepath.Join(dir, "vap.json")
	code, rego, stderr := run(t, "", append([]string{"lint", now, "--format", "text", "--format", "json=" + regoJSON}, inputs...)...)
	if code != 1 || !strings.Contains(rego, "KG201") || !strings.Contains(rego, "KG501") {
		t.Fatalf("the rules: exit %d, want 1 with KG201 and KG501\n%s%s", code, rego, stderr)
	}
	code, vap, stderr := run(t, "", append([]string{"lint", now, "--engine", "vap", "--format", "text", "--format", "json=" + vapJSON}, inputs...)...)
	if code != 1 {
		t.Fatalf("the twins: exit %d, want 1\n%s%s", code, vap, stderr)
	}
	golden(t, "lint-vap-text.golden", vap)
	for _, gone := range []string{"KG201", "KG501"} {
		if strings.Contains(vap, gone) {
			t.Errorf("%s has no twin, yet --engine vap reports it", gone)
		}
	}
	// KG101's finding is word for word the rule's.
	_, finding, _ := strings.Cut(rego, "testdata/warn.yaml\n")
	finding, _, _ = strings.Cut(finding, "\n\n")
	if !strings.Contains(finding, "KG101") || !strings.Contains(vap, finding) {
		t.Errorf("the twin's finding differs from the rule's:\n%s\nwant it to contain\n%s", vap, finding)
	}
	for file, want := range map[string]string{regoJSON: "rego", vapJSON: "vap"} {
		var report struct {
			Tool struct{ Engine string } `json:"tool"`
		}
		data, err := os.ReadFile(file)
		if err != nil || json.Unmarshal(data, &report) != nil || report.Tool.Engine != want {
			t.Errorf("%s: tool.engine %q, want %q (%v)\n%s", filepath.Base(file), report.Tool.Engine, want, err, data)
		}
	}
}

func TestLintEngineUnknown(t *testing.T) {
	code, _, stderr := run(t, "", "lint", "--engine", "opa", "testdata/warn.yaml")
	if code != 3 || !strings.Contains(stderr, `--engine "opa": use rego (karpgate's rules) or vap`) {
		t.Fatalf("exit %d, stderr %q; want a usage error naming both engines", code, stderr)
	}
}
