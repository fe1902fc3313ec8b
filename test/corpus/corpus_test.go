package corpus

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/karpgate/karpgate/lint"
	"github.com/karpgate/karpgate/policies"
)

// TestProblemsAreExactlyWhatLintFlags: the corpus's promise, that the
// documents generated with a problem are the ones karpgate flags and the
// others are clean, holds for every problem in the cycle. bench-peers
// counts flagged objects against it.
func TestProblemsAreExactlyWhatLintFlags(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "corpus")
	stats, err := Write(dir, Options{Documents: 2 * 20 * len(problems), Files: 4, FindingEvery: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(stats.Problems) != len(problems) {
		t.Fatalf("the corpus holds %d of the %d problems: %v", len(stats.Problems), len(problems), stats.Problems)
	}
	engine, err := policies.New(context.Background(), policies.Options{Now: func() time.Time { return time.Date(2024, 6, 5, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	report, err := lint.Run(context.Background(), lint.Options{Inputs: []string{dir}, Engine: engine})
	if err != nil {
		t.Fatal(err)
	}
	flagged := 0
	for _, o := range report.Objects {
		if len(o.Findings) > 0 {
			flagged++
		}
	}
	if report.Documents != stats.Documents || flagged != stats.WithFinding {
		t.Fatalf("lint read %d documents and flagged %d objects; the corpus has %d documents, %d with a problem (%v)", report.Documents, flagged, stats.Documents, stats.WithFinding, stats.Problems)
	}
}
