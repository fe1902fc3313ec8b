package conversion

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/manifest"
)

// yamlObject reads one object written as YAML, the way the CLI reads files.
func yamlObject(t testing.TB, doc string) map[string]any {
	t.Helper()
	objects, err := manifest.ReadAll([]string{"-"}, strings.NewReader(doc))
	if err != nil {
		t.Fatalf("test object: %v", err)
	}
	if len(objects) != 1 {
		t.Fatalf("test object: want 1 object, got %d", len(objects))
	}
	return objects[0].Content
}

// nodePools is a NodePoolLookup over a fixed map of NodePool -> expireAfter.
type nodePools map[string]string

func (n nodePools) ExpireAfter(_ context.Context, name string) (string, bool, error) {
	v, ok := n[name]
	return v, ok, nil
}

type failingLookup struct{}

func (failingLookup) ExpireAfter(context.Context, string) (string, bool, error) {
	return "", false, errors.New("connection refused")
}

func mustJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// restoredPaths lists the field paths an object's restore annotation for
// version holds, and removes the annotation so the rest can be compared.
func restoredPaths(t testing.TB, obj map[string]any, version string) []string {
	t.Helper()
	paths, err := RestoredFields(obj, version)
	if err != nil {
		t.Fatal(err)
	}
	deleteAnnotation(obj, karpenter.RestoreAnnotation(version))
	return paths
}

func otherVersion(v string) string {
	if v == karpenter.V1 {
		return karpenter.V1Beta1
	}
	return karpenter.V1
}

// conversionCase is one row of a facts table: in converts to want (without
// any restore annotation), whose restore annotation names exactly restored,
// and converting want back gives in again.
type conversionCase struct {
	name     string
	in       string
	to       string
	want     string
	restored []string
	lookup   NodePoolLookup
}

func runConversionCases(t *testing.T, cases []conversionCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := yamlObject(t, tc.in)
			opts := Options{NodePools: tc.lookup}
			got, err := Convert(context.Background(), in, tc.to, opts)
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if !equalValues(in, yamlObject(t, tc.in)) {
				t.Fatalf("Convert modified its input")
			}
			withRestore := copyMap(got)
			paths := restoredPaths(t, got, otherVersion(tc.to))
			if want := yamlObject(t, tc.want); !equalValues(got, want) {
				t.Errorf("converted to %s:\n%s\nwant:\n%s", tc.to, mustJSON(got), mustJSON(want))
			}
			if strings.Join(paths, " ") != strings.Join(tc.restored, " ") {
				t.Errorf("restore annotation holds %q, want %q", paths, tc.restored)
			}
			back, err := Convert(context.Background(), withRestore, otherVersion(tc.to), opts)
			if err != nil {
				t.Fatalf("converting back: %v", err)
			}
			if !equalValues(back, in) {
				t.Errorf("round trip lost data:\n%s\nwant:\n%s", mustJSON(back), mustJSON(in))
			}
		})
	}
}
