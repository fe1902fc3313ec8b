package lint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/policies"
	testcorpus "github.com/karpgate/karpgate/test/corpus"
)

// readsInventoryPolicy is a --policy rule that reads input.inventory and
// never fires: with it, the engine keeps whole objects for cross-object
// rules, as the engine before streaming lint did for every rule.
const readsInventoryPolicy = `# METADATA
# title: Reads the inventory
# custom:
#   id: TEST001
#   severity: warn
#   kinds: [NodePool]
package karpgate.rules.test_reads_inventory

violation contains {"msg": "never"} if {
	input.inventory.not_a_field
}
`

func wholeObjectEngine(t *testing.T) *policies.Engine {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "inventory.rego"), []byte(readsInventoryPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := policies.New(context.Background(), policies.Options{PolicyDirs: []string{dir}, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	if e.CrossObjectPaths() != nil {
		t.Fatal("a --policy rule reads input.inventory, yet the engine reduces objects")
	}
	return e
}

// wholeInputReport lints the way karpgate did before it streamed: read
// every object, index them whole, then run every rule on each with that
// index. It is the reference streaming must match.
func wholeInputReport(t *testing.T, e *policies.Engine, inputs []string) *Report {
	t.Helper()
	sources, err := manifest.ExpandInputs(inputs)
	if err != nil {
		t.Fatal(err)
	}
	report := &Report{Rules: e.Catalog(), Sources: sources, Karpenter: e.Karpenter().Release.Version.String(), Engine: EngineRego}
	var objects []*manifest.Object
	err = manifest.Walk(inputs, nil, func(d *manifest.Document) error {
		report.Documents++
		for _, o := range d.Objects {
			if policies.Handles(o.APIVersion(), o.Kind()) {
				objects = append(objects, o)
			} else {
				report.Skipped++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	builder := policies.NewInventoryBuilder()
	for _, o := range objects {
		entry, err := e.NewInventoryEntry(o.Content)
		if err != nil {
			t.Fatal(err)
		}
		builder.Add(entry)
	}
	inventory := builder.Build()
	for _, o := range objects {
		res, err := e.Evaluate(context.Background(), policies.Request{Object: o.Content, Point: config.CI, Inventory: inventory})
		if err != nil {
			t.Fatal(err)
		}
		r := ObjectResult{Source: o.Source, APIVersion: o.APIVersion(), Kind: o.Kind(), Name: o.Name(), Position: o.Position("")}
		for _, f := range res.Findings {
			r.Findings = append(r.Findings, Finding{Finding: f, File: o.Source, Position: o.Position(f.Path)})
		}
		for _, f := range res.Waived {
			r.Waived = append(r.Waived, Finding{Finding: f, File: o.Source, Position: o.Position(f.Path)})
		}
		report.Objects = append(report.Objects, r)
	}
	return report
}

// TestStreamingMatchesWholeInput: streaming with a reduced index, on one
// worker or several, reports exactly what evaluating every rule on whole
// objects with a whole index reports, object by object and in order.
func TestStreamingMatchesWholeInput(t *testing.T) {
	generated := filepath.Join(t.TempDir(), "corpus")
	if _, err := testcorpus.Write(generated, testcorpus.Options{Documents: 400, Files: 4, FindingEvery: 7}); err != nil {
		t.Fatal(err)
	}
	inputs := map[string][]string{
		"rule fixtures": {"../policies/testdata/rules"},
		"docs examples": {"testdata/docs"},
		"generated":     {generated},
	}
	whole := wholeObjectEngine(t)
	reduced := engineFor(t, nil)
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			want := wholeInputReport(t, whole, in)
			if s := want.Summary(); s.Deny+s.Warn == 0 {
				t.Fatalf("%s has no findings to compare", name)
			}
			for _, c := range []struct {
				engine  *policies.Engine
				workers int
			}{{reduced, 1}, {reduced, 4}, {whole, 3}} {
				got, err := Run(context.Background(), Options{Inputs: in, Engine: c.engine, Workers: c.workers})
				if err != nil {
					t.Fatal(err)
				}
				got.Rules, want.Rules = nil, nil
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%d workers, reduced index %v: streaming reports\n%s\nwhole input reports\n%s", c.workers, c.engine.CrossObjectPaths() != nil, describe(got), describe(want))
				}
			}
		})
	}
}

// countingReader generates documents of equal length on demand and counts
// the bytes lint has taken from it.
type countingReader struct {
	doc      []byte
	docs     int
	produced int
	read     atomic.Int64
	pending  []byte
}

func (r *countingReader) Read(p []byte) (int, error) {
	if len(r.pending) == 0 {
		if r.produced == r.docs {
			return 0, io.EOF
		}
		r.pending = r.doc
		r.produced++
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	r.read.Add(int64(n))
	return n, nil
}

// TestStreamingBoundsWhatIsRead: lint reads only a bounded number of
// documents ahead of the one it is checking, so its memory does not grow
// with the input. Without streaming, the whole input would be read before
// the first object is checked.
func TestStreamingBoundsWhatIsRead(t *testing.T) {
	const docs, workers = 3000, 2
	doc := []byte("---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: x\nspec:\n  amiSelectorTerms:\n    - alias: al2023@v20240807\n")
	in := &countingReader{doc: doc, docs: docs}
	var worst atomic.Int64
	stage := StageFunc(func(_ context.Context, o *manifest.Object) ([]policies.Finding, error) {
		ahead := in.read.Load() - int64(o.Document*len(doc))
		for {
			w := worst.Load()
			if ahead <= w || worst.CompareAndSwap(w, ahead) {
				break
			}
		}
		return nil, nil
	})
	report, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: in, Engine: engineFor(t, nil), Stages: []Stage{stage}, Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Objects) != docs {
		t.Fatalf("checked %d objects, want %d", len(report.Objects), docs)
	}
	// The window of documents in flight, plus what the scanner buffers.
	limit := int64((documentsInFlight*workers+1)*len(doc) + 2*64*1024)
	if worst.Load() > limit {
		t.Fatalf("lint read %d bytes ahead of an object it was checking; the bound is %d (input %d bytes)", worst.Load(), limit, docs*len(doc))
	}
}

// TestStagesRunBeforeTheRules: a stage's findings are reported like the
// rules', located and in order, and the rules see the object as the stage
// left it.
func TestStagesRunBeforeTheRules(t *testing.T) {
	input := "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: c\nspec:\n  role: r\n  amiSelectorTerms:\n    - alias: al2023@v20240807\n"
	pinToLatest := StageFunc(func(_ context.Context, o *manifest.Object) ([]policies.Finding, error) {
		o.Content["spec"].(map[string]any)["amiSelectorTerms"] = []any{map[string]any{"alias": "al2023@latest"}}
		return []policies.Finding{
			{RuleID: "ZZ1", Action: config.Deny, Message: "stage", Path: "spec.role"},
			{RuleID: "AA1", Action: config.Warn, Message: "waived by the stage", Path: "spec", Waived: true},
		}, nil
	})
	report, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: strings.NewReader(input), Engine: engineFor(t, nil), Stages: []Stage{pinToLatest}})
	if err != nil {
		t.Fatal(err)
	}
	got := describe(report)
	want := "-:6:3 deny ZZ1 EC2NodeClass/c spec.role: stage\n" +
		"-:8:7 warn KG102 EC2NodeClass/c spec.amiSelectorTerms[0].alias: alias \"al2023@latest\" follows every AMI release: each release drifts and replaces every node of this EC2NodeClass\n" +
		"-:5:1 waived AA1 EC2NodeClass/c spec: waived by the stage (reason: )\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if ids := []string{report.Objects[0].Findings[0].RuleID, report.Objects[0].Findings[1].RuleID}; !reflect.DeepEqual(ids, []string{"KG102", "ZZ1"}) {
		t.Fatalf("an object's findings must be ordered by rule, got %v", ids)
	}
}

// TestStreamingStopsAtTheFirstErrorInInputOrder: with documents checked
// concurrently, the error reported is the one a sequential reader meets
// first, and the stages' errors stop the run too.
func TestStreamingStopsAtTheFirstErrorInInputOrder(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: c%d}\n", i)
		if i == 120 || i == 150 {
			b.WriteString("spec: [\n")
		}
	}
	_, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: strings.NewReader(b.String()), Engine: engineFor(t, nil), Workers: 4})
	var parseErr *manifest.ParseError
	if !errors.As(err, &parseErr) || !strings.Contains(err.Error(), "document 121") {
		t.Fatalf("got %v, want the parse error of document 121", err)
	}
	failing := errors.New("stage failed")
	stage := StageFunc(func(_ context.Context, o *manifest.Object) ([]policies.Finding, error) {
		if o.Name() == "c7" {
			return nil, failing
		}
		return nil, nil
	})
	clean := strings.ReplaceAll(b.String(), "spec: [\n", "")
	if _, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: strings.NewReader(clean), Engine: engineFor(t, nil), Stages: []Stage{stage}, Workers: 4}); !errors.Is(err, failing) {
		t.Fatalf("got %v, want the stage's error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Options{Inputs: []string{"-"}, Stdin: strings.NewReader(clean), Engine: engineFor(t, nil)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}
