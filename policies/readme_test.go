package policies_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/readme"
	goldenfile "github.com/karpgate/karpgate/test/golden"
)

// The test sits beside README.md, not with policies/readme, so that the
// command the README names, go test ./policies -run TestReadmeIsUpToDate
// -update, regenerates it.
func TestReadmeIsUpToDate(t *testing.T) {
	catalog, err := policies.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	want := readme.Markdown(catalog)
	if goldenfile.Update() {
		if err := os.WriteFile("README.md", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("policies/README.md is stale; run: go test ./policies -run TestReadmeIsUpToDate -update")
	}
	for _, r := range catalog {
		if !bytes.Contains(got, []byte("### "+r.ID+"\n")) {
			t.Errorf("README has no section for %s", r.ID)
		}
	}
}
