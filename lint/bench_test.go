package lint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/test/benchratio"
)

// corpusDocuments is the size of the generated lint corpus.
const corpusDocuments = 10000

// corpus generates a mix like a GitOps repository's: EC2NodeClasses
// (pinned and @latest), NodePools with and without budgets (valid,
// invalid and scheduled), v1beta1 leftovers and non-Karpenter objects.
func corpus(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString("---\n")
		}
		class := fmt.Sprintf("class-%d", i/10)
		switch i % 10 {
		case 0:
			fmt.Fprintf(&b, "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: %s\n  labels: {karpgate.io/environment: %s}\nspec:\n  role: KarpenterNodeRole\n  amiSelectorTerms:\n    - alias: al2023@%s\n", class, []string{"production", "dev"}[i/10%2], []string{"v20240807", "latest"}[i/20%2])
		case 1, 2, 3:
			fmt.Fprintf(&b, "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: pool-%d\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: %s}\n  disruption:\n    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 1m\n    budgets:\n      - nodes: \"0\"\n        schedule: \"0 9 * * %s\"\n        duration: 8h\n        reasons: [Drifted]\n      - nodes: \"10%%\"\n", i, class, []string{"mon-fri", "sat-sun", "sat,sun"}[i%3])
		case 4:
			fmt.Fprintf(&b, "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: legacy-%d\nspec:\n  template:\n    spec:\n      nodeClassRef: {name: %s}\n  disruption:\n    consolidationPolicy: WhenUnderutilized\n    expireAfter: 720h\n", i, class)
		case 5:
			fmt.Fprintf(&b, "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: plain-%d\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: %s}\n", i, class)
		default:
			fmt.Fprintf(&b, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-%d\n  labels: {app: web}\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n        - name: web\n          image: nginx:1.27\n", i)
		}
	}
	return b.Bytes()
}

// decodePlainYAML is the baseline: decoding every document of the corpus
// with yaml.v3 and nothing else.
func decodePlainYAML(data []byte) (int, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	n := 0
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

// BenchmarkLintThroughput lints a generated corpus of 10,000 documents per
// op and reports documents per second for lint and for the baseline of
// plain YAML decoding of the same corpus, measured in the same run, and
// their ratio (x-baseline: how many times longer lint takes).
func BenchmarkLintThroughput(b *testing.B) {
	data := corpus(corpusDocuments)
	engine := engineFor(b, nil)
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if n, err := decodePlainYAML(data); err != nil || n != corpusDocuments {
			b.Fatalf("baseline decoded %d documents: %v", n, err)
		}
	}
	baseline := time.Since(start)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: bytes.NewReader(data), Engine: engine})
		if err != nil {
			b.Fatal(err)
		}
		if r.Documents != corpusDocuments {
			b.Fatalf("linted %d documents", r.Documents)
		}
	}
	b.StopTimer()
	docs := float64(corpusDocuments * b.N)
	b.ReportMetric(docs/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(docs/baseline.Seconds(), "baseline-docs/s")
	b.ReportMetric(float64(b.Elapsed())/float64(baseline), "x-baseline")
}

// BenchmarkLintSchemaStage lints the 10,000-document corpus with the CRD
// schema stage on against the same lint with it off, alternating in the same
// process (x-schema-off: how many times longer; the acceptance bound is
// 1.3). Each schema run builds its CRD set afresh, as `karpgate lint` does
// once per run, so compiling the schemas and CEL rules is counted; the
// compilations/run metric shows it happens once per CRD version used, not
// per object. The peak live heap of one run is reported for both.
func BenchmarkLintSchemaStage(b *testing.B) {
	data := corpus(corpusDocuments)
	engine := engineFor(b, nil)
	compilations := 0
	lintOnce := func(withSchema bool) func() {
		return func() {
			opts := Options{Inputs: []string{"-"}, Stdin: bytes.NewReader(data), Engine: engine}
			if withSchema {
				set, err := crdschema.Linked()
				if err != nil {
					b.Fatal(err)
				}
				opts.CRDs = set
				defer func() { compilations = set.Compilations() }()
			}
			r, err := Run(context.Background(), opts)
			if err != nil {
				b.Fatal(err)
			}
			if r.Documents != corpusDocuments {
				b.Fatalf("linted %d documents", r.Documents)
			}
		}
	}
	on, off := lintOnce(true), lintOnce(false)
	benchratio.Benchmark(b, on, map[string]func(){"x-schema-off": off})
	b.ReportMetric(float64(compilations), "compilations/run")
	b.ReportMetric(float64(benchratio.PeakHeap(on))/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(benchratio.PeakHeap(off))/(1<<20), "peak-heap-schema-off-MiB")
	b.ReportMetric(float64(corpusDocuments)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

// The schema stage compiles each CRD version the input uses once per run,
// however many objects and goroutines.
func TestSchemaStageCompilesOncePerRun(t *testing.T) {
	set, err := crdschema.Linked()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: bytes.NewReader(corpus(1000)), Engine: engineFor(t, nil), CRDs: set, Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	// NodePool v1 (v1beta1 NodePools are judged as their v1 conversion) and
	// EC2NodeClass v1.
	if n := set.Compilations(); n != 2 {
		t.Fatalf("%d compilations for %d objects; want 2, one per CRD version used", n, len(r.Objects))
	}
}

func TestCorpusIsLintable(t *testing.T) {
	data := corpus(100)
	r, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: bytes.NewReader(data), Engine: engineFor(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summary()
	if s.Documents != 100 || s.Objects != 60 || s.Skipped != 40 || s.Deny == 0 || s.Warn == 0 {
		t.Fatalf("corpus does not exercise the rules: %+v", s)
	}
}

// BenchmarkLintConftestPolicies lints the 10,000-document corpus with a
// conftest policy loaded (policies/testdata/conftest/karpenter-v0, which
// then judges every document, Deployments included) against the same lint
// without it, alternating in the same process (x-without-conftest: how many
// times longer), with the peak live heap of both.
func BenchmarkLintConftestPolicies(b *testing.B) {
	data := corpus(corpusDocuments)
	plain := engineFor(b, nil)
	withConftest, err := policies.New(context.Background(), policies.Options{PolicyDirs: []string{"../policies/testdata/conftest/karpenter-v0"}, Now: func() time.Time { return fixedNow }})
	if err != nil {
		b.Fatal(err)
	}
	lintOnce := func(engine *policies.Engine, wantOthers int) func() {
		return func() {
			r, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: bytes.NewReader(data), Engine: engine})
			if err != nil {
				b.Fatal(err)
			}
			if s := r.Summary(); s.Documents != corpusDocuments || s.Others != wantOthers {
				b.Fatalf("linted %+v", s)
			}
		}
	}
	on, off := lintOnce(withConftest, corpusDocuments*4/10), lintOnce(plain, 0)
	benchratio.Benchmark(b, on, map[string]func(){"x-without-conftest": off})
	b.ReportMetric(float64(benchratio.PeakHeap(on))/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(benchratio.PeakHeap(off))/(1<<20), "peak-heap-without-conftest-MiB")
}
