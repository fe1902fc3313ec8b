package webhook

import (
	"os"
	"strings"
	"testing"
)

// TestPackageDocListsTheSteps: doc.go walks through the limits a request
// passes; it must name every step of limitSteps, in their order, so that
// the doc cannot drift from what wrap does.
func TestPackageDocListsTheSteps(t *testing.T) {
	raw, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	// The doc's bullets, joined across their wrapped lines.
	doc := strings.Join(strings.Fields(strings.ReplaceAll(string(raw), "//", "")), " ")
	at := 0
	for _, step := range limitSteps {
		i := strings.Index(doc[at:], "- "+step.name+":")
		if i < 0 {
			t.Fatalf("doc.go does not list the step %q after the ones before it", step.name)
		}
		at += i
	}
}
