package policies

import (
	"bytes"
	"os"
	"testing"

	goldenfile "github.com/karpgate/karpgate/test/golden"
)

func TestReadmeIsUpToDate(t *testing.T) {
	catalog, err := BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	want := catalog.Markdown()
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
