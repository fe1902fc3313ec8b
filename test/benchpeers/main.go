package main

import (
	"context"
	"embed"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/test/corpus"
)

//go:embed conftest/*.rego
var conftestPolicy embed.FS

type flags struct {
	karpgate, baseline, conftest, kubeconform string
	runs                                      int
	documents, files, memoryDocuments         int
	work                                      string
}

func main() {
	var f flags
	flag.StringVar(&f.karpgate, "karpgate", "bin/karpgate", "karpgate binary to measure")
	flag.StringVar(&f.baseline, "karpgate-baseline", "", "another karpgate binary to measure in the same runs (e.g. a build of main)")
	flag.StringVar(&f.conftest, "conftest", "", "conftest binary")
	flag.StringVar(&f.kubeconform, "kubeconform", "", "kubeconform binary")
	flag.IntVar(&f.runs, "runs", 3, "runs per tool and corpus, interleaved; the fastest counts")
	flag.IntVar(&f.documents, "documents", 10000, "documents in the throughput corpus")
	flag.IntVar(&f.files, "files", 100, "files the throughput corpus is spread over")
	flag.IntVar(&f.memoryDocuments, "memory-documents", 40000, "documents in the memory corpus (same documents per file); 0 skips it")
	flag.StringVar(&f.work, "work", "", "folder for the corpora, schemas and outputs (default: a temporary folder, removed afterwards)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, f, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-peers:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, f flags, out io.Writer) error {
	if f.conftest == "" || f.kubeconform == "" {
		return fmt.Errorf("-conftest and -kubeconform are required (make bench-peers builds them)")
	}
	work := f.work
	if work == "" {
		dir, err := os.MkdirTemp("", "karpgate-bench-peers-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		work = dir
	}
	schemaLocation, err := writeSchemas(ctx, crdsource.KarpenterV1_15_1, filepath.Join(work, "schemas"))
	if err != nil {
		return fmt.Errorf("kubeconform schemas: %w", err)
	}
	policyDir := filepath.Join(work, "conftest")
	if err := writeConftestPolicy(policyDir); err != nil {
		return err
	}
	tools := []tool{
		karpgateTool("karpgate", f.karpgate),
		kubeconformTool(f.kubeconform, schemaLocation),
		conftestTool(f.conftest, policyDir),
	}
	if f.baseline != "" {
		tools = append(tools, karpgateTool("karpgate (baseline)", f.baseline))
	}
	for _, t := range tools {
		if _, err := os.Stat(t.binary); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	corpora := []corpus.Options{{Documents: f.documents, Files: f.files, FindingEvery: 20}}
	if f.memoryDocuments > 0 {
		perFile := max(f.documents/f.files, 1)
		corpora = append(corpora, corpus.Options{Documents: f.memoryDocuments, Files: max(f.memoryDocuments/perFile, 1), FindingEvery: 20})
	}
	for i, opts := range corpora {
		dir := filepath.Join(work, fmt.Sprintf("corpus-%d", opts.Documents))
		stats, err := corpus.Write(dir, opts)
		if err != nil {
			return err
		}
		results, err := measure(ctx, tools, dir, filepath.Join(work, "out"), f.runs)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(out)
		}
		report(out, stats, tools, results)
	}
	return nil
}

func writeConftestPolicy(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := conftestPolicy.ReadDir("conftest")
	if err != nil {
		return err
	}
	for _, e := range entries {
		data, err := conftestPolicy.ReadFile("conftest/" + e.Name())
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// report prints one corpus's table: wall time and memory as ratios against
// kubeconform's, with the absolute figures beside them for the record.
func report(out io.Writer, s corpus.Stats, tools []tool, results []result) {
	fmt.Fprintf(out, "corpus: %d documents in %d files, %d with a finding (%.1f%%)\n", s.Documents, s.Files, s.WithFinding, 100*float64(s.WithFinding)/float64(s.Documents))
	base := results[1] // kubeconform
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "tool\tchecks\twall\tx kubeconform\tpeak memory\tx kubeconform\tobjects flagged\t")
	for i, t := range tools {
		r := results[i]
		fmt.Fprintf(w, "%s\t%s\t%.2fs\t%.2f\t%.0f MB\t%.2f\t%d\t\n", t.name, t.checks, r.wall.Seconds(), r.wall.Seconds()/base.wall.Seconds(), float64(r.maxRSS)/1e6, float64(r.maxRSS)/float64(base.maxRSS), r.flagged)
	}
	w.Flush()
	fmt.Fprintf(out, "documents per second: %s\n", strings.Join(throughputs(s, tools, results), ", "))
}

func throughputs(s corpus.Stats, tools []tool, results []result) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = fmt.Sprintf("%s %.0f", t.name, float64(s.Documents)/results[i].wall.Seconds())
	}
	return out
}
