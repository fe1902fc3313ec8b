package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// TestTableIsUpToDate regenerates the table from the pinned modules and
// compares: a pin added or moved, or a change to this generator, must come
// with `make release-facts`.
func TestTableIsUpToDate(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := Generate(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	current, err := os.ReadFile(filepath.Join(root, tablePath))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(current, fresh) {
		t.Fatalf("%s is stale: run make release-facts and review the diff", tablePath)
	}
}

// The reader follows a Hash method through struct types to the ignore tags,
// on a small package written like Karpenter's.
func TestHashFactsFollowsTheHashMethod(t *testing.T) {
	src := []byte(`package v1

const WidgetHashVersion = "v7"

type Widget struct {
	Spec WidgetSpec ` + "`json:\"spec\"`" + `
}

type WidgetSpec struct {
	Selector []Term ` + "`json:\"selector\" hash:\"ignore\"`" + `
	Family *string ` + "`json:\"family,omitempty\" hash:\"ignore\"`" + `
	Nested Nested ` + "`json:\"nested\"`" + `
	Config Config ` + "`json:\"config\" hash:\"ignore\"`" + `
}

type Nested struct {
	Count *int32 ` + "`json:\"count\" hash:\"ignore\"`" + `
	Name string ` + "`json:\"name\"`" + `
	Raw []byte ` + "`hash:\"ignore\"`" + `
}

type Term struct{}
type Config struct{}

func (in *Widget) Family() string { return "" }

func (in *Widget) Hash(extra *string) string {
	return fmt.Sprint(lo.Must(hashstructure.Hash([]any{
		in.Spec,
		in.Family(),
		lo.FromPtr(extra),
		in.Spec.Config.String(),
	}, hashstructure.FormatV2, &hashstructure.HashOptions{SlicesAsSets: true, ZeroNil: true})))
}
`)
	h, err := hashFacts(map[string][]byte{"pkg/apis/v1/widget.go": src}, "pkg/apis/v1", "Widget")
	if err != nil {
		t.Fatal(err)
	}
	wantIgnored := []string{"spec.selector", "spec.family", "spec.nested.count", "spec.config"}
	if h.Version != "v7" || !slices.Equal(h.Roots, []string{"spec"}) || !slices.Equal(h.Ignored, wantIgnored) || !h.SlicesAsSets || h.IgnoreZeroValue || !h.ZeroNil {
		t.Errorf("hash facts: %+v; want version v7, root spec, ignored %v, SlicesAsSets and ZeroNil", h, wantIgnored)
	}
	wantInputs := []release.HashInput{
		{Expr: "in.Family()", Path: "spec.family", How: "resolved"},
		{Expr: "lo.FromPtr(extra)"},
		{Expr: "in.Spec.Config.String()", Path: "spec.config", How: "as String()"},
	}
	if !slices.Equal(h.Inputs, wantInputs) {
		t.Errorf("inputs: %+v, want %+v", h.Inputs, wantInputs)
	}
	if _, err := hashFacts(map[string][]byte{"pkg/apis/v1/widget.go": []byte("package v1\nconst WidgetHashVersion = \"v1\"\n")}, "pkg/apis/v1", "Widget"); err == nil {
		t.Error("a package without a Hash method must be an error, not an empty fact")
	}
}
