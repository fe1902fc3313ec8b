package installed

import (
	"context"
	"errors"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// crdsOf reads a pinned release's CRDs as the API server returns them.
func crdsOf(t *testing.T, set crdsource.Set) []map[string]any {
	t.Helper()
	files, err := crdsource.Files(context.Background(), set)
	if err != nil {
		t.Fatal(err)
	}
	var crds []map[string]any
	for _, f := range files {
		var crd map[string]any
		if err := yaml.Unmarshal(f.Data, &crd); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		crds = append(crds, crd)
	}
	return crds
}

func TestJudgeReadsTheReleaseOfTheKarpenterCRDs(t *testing.T) {
	v1_0 := crdsOf(t, crdsource.KarpenterV1_0_8)
	v1_15 := crdsOf(t, crdsource.KarpenterV1_15_1)
	v1_15NoOverlay := slices.DeleteFunc(slices.Clone(v1_15), func(crd map[string]any) bool { return nameOf(crd) == "nodeoverlays.karpenter.sh" })
	other := map[string]any{"metadata": map[string]any{"name": "certificates.cert-manager.io"}}
	broken := map[string]any{"metadata": map[string]any{"name": "nodepools.karpenter.sh"}, "spec": "not a CRD spec"}
	tests := []struct {
		name        string
		crds        []map[string]any
		wantVersion string
		inexact     bool
		wantErr     error
		wantAnyErr  bool
	}{
		{name: "v1.0.8", crds: v1_0, wantVersion: "v1.0.8"},
		{name: "v1.15.1", crds: v1_15, wantVersion: "v1.15.1"},
		{name: "v1.15.1 without its NodeOverlay CRD", crds: v1_15NoOverlay, wantVersion: "v1.15.1", inexact: true},
		{name: "v1.15.1 among other CRDs", crds: append([]map[string]any{other}, v1_15...), wantVersion: "v1.15.1"},
		{name: "no CRDs", crds: nil, wantErr: ErrNoCRDs},
		{name: "only other CRDs", crds: []map[string]any{other}, wantErr: ErrNoCRDs},
		{name: "a CRD without a schema karpgate can read", crds: []map[string]any{broken}, wantAnyErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := Judge(tt.crds, "CRDs in cluster test")
			switch {
			case tt.wantErr != nil || tt.wantAnyErr:
				if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
					t.Fatalf("got %v, %v; want error %v", j, err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case j.Release.Version.String() != tt.wantVersion || j.Exact == tt.inexact || j.Source != "CRDs in cluster test":
				t.Errorf("got %s exact=%v note %q, want %s exact=%v", j, j.Exact, j.Note, tt.wantVersion, !tt.inexact)
			}
		})
	}
}

// A watch lists its CRDs in no particular order; the judgement must not
// depend on it, or every event would look like a change and recompile.
func TestJudgeIgnoresTheOrderOfTheCRDs(t *testing.T) {
	crds := crdsOf(t, crdsource.KarpenterV1_15_1)
	first, err := Judge(crds, "x")
	if err != nil {
		t.Fatal(err)
	}
	reversed := slices.Clone(crds)
	slices.Reverse(reversed)
	second, err := Judge(reversed, "x")
	if err != nil {
		t.Fatal(err)
	}
	w := &Watcher{}
	if !w.set(crds) || w.set(reversed) {
		t.Errorf("the same CRDs in another order changed the judgement:\n%+v\n%+v", first.Facts.Schema.Kinds, second.Facts.Schema.Kinds)
	}
}

func TestCRDNamesAreKarpentersOnly(t *testing.T) {
	want := []string{"ec2nodeclasses.karpenter.k8s.aws", "nodeclaims.karpenter.sh", "nodeoverlays.karpenter.sh", "nodepools.karpenter.sh"}
	if got := CRDNames(); !slices.Equal(got, want) {
		t.Errorf("CRDNames() = %v, want %v", got, want)
	}
}

// FuzzJudge: whatever a cluster serves as a Karpenter CRD, Judge answers
// with a judgement or an error, never a panic.
func FuzzJudge(f *testing.F) {
	f.Add(`{"metadata":{"name":"nodepools.karpenter.sh"},"spec":{"group":"karpenter.sh","names":{"kind":"NodePool","plural":"nodepools"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"properties":{"spec":{}}}}}]}}`)
	f.Add(`{"metadata":{"name":"ec2nodeclasses.karpenter.k8s.aws"},"spec":[]}`)
	f.Add(`{"metadata":{"name":7}}`)
	f.Fuzz(func(_ *testing.T, doc string) {
		var crd map[string]any
		if yaml.Unmarshal([]byte(doc), &crd) != nil {
			return
		}
		_, _ = Judge([]map[string]any{crd}, "fuzz")
	})
}
