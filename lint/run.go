package lint

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/policies"
)

// Options configure a run.
type Options struct {
	// Inputs are files, folders (read recursively) and "-" for Stdin.
	Inputs []string
	Stdin  io.Reader
	// Documents are inputs held in memory, read after Inputs, each named
	// as findings should name its source (`karpgate audit` names each
	// object read from a cluster as kubectl would: nodepool.karpenter.sh/default).
	Documents []Document
	Engine    *policies.Engine
	// CRDs, when set, puts a SchemaStage for them first: every object is
	// judged as the API server would (schema, CEL rules, defaults) before
	// the other stages and the rules see it, with the CRD's defaults.
	CRDs *crdschema.Set
	// Stages run on every Karpenter object before the policy rules, in
	// order; see Stage.
	Stages []Stage
	// KeepStored renders each object as the API server would store it into
	// ObjectResult.Stored (`karpgate lint --show-defaults`); it needs CRDs.
	KeepStored bool
	// Workers bounds concurrent checks; 0 means GOMAXPROCS.
	Workers int
	// AdmissionPolicy, when set, judges the objects instead of the Rego
	// rules (`--engine vap`): by the rules' CEL twins alone, as the API
	// server enforces them with karpgate down. Stages still run first, as
	// the API server's schema does; an object it refuses meets no policy.
	AdmissionPolicy *AdmissionPolicy
}

// Run reads the inputs as a stream and checks every Karpenter object as it
// comes: documents are parsed and checked on Workers goroutines, and only a
// few of them are in memory at once, whatever the size of the input. What
// the cross-object rules need (a small index of every object and a few
// fields of each object they apply to) is kept until the input is read;
// then they run. Reports list objects and findings in input order however
// the work was spread. A parse error stops the run with the first one in
// input order: a manifest that cannot be read cannot be checked.
func Run(ctx context.Context, opts Options) (*Report, error) {
	var sources []string
	if len(opts.Inputs) > 0 {
		var err error
		if sources, err = manifest.ExpandInputs(opts.Inputs); err != nil {
			return nil, err
		}
	}
	memory := map[string][]byte{}
	for _, d := range opts.Documents {
		if _, dup := memory[d.Name]; dup || slices.Contains(sources, d.Name) {
			return nil, fmt.Errorf("two inputs are named %s", d.Name)
		}
		memory[d.Name] = d.Data
		sources = append(sources, d.Name)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	stages := opts.Stages
	report := &Report{Rules: opts.Engine.Catalog(), Sources: sources, Engine: EngineRego}
	if opts.AdmissionPolicy != nil {
		report.Engine = EngineAdmissionPolicy
	}
	if opts.CRDs != nil {
		stages = append([]Stage{NewSchemaStage(opts.CRDs, opts.Engine)}, stages...)
		report.CRDs = opts.CRDs.Name()
	}
	judged := opts.Engine.Karpenter()
	report.Karpenter = judged.Release.Version.String()
	if !judged.Exact || judged.Chosen {
		report.KarpenterChoice = strings.TrimPrefix(judged.String(), "Karpenter ")
	}
	l := &linter{
		engine:      opts.Engine,
		stages:      stages,
		keepStored:  opts.KeepStored,
		schemaRules: schemaRuleIDs(opts.Engine.Catalog()),
		workers:     workers,
		now:         opts.Engine.Now(), // one instant for every object of the run
		paths:       opts.Engine.CrossObjectPaths(),
		crossKind:   map[string]bool{},
		inventory:   policies.NewInventoryBuilder(),
		report:      report,
		policy:      opts.AdmissionPolicy,
	}
	for _, k := range karpenter.Kinds {
		// The policy has no cross-object rules: an admission request
		// carries one object.
		l.crossKind[k.Kind] = opts.AdmissionPolicy == nil && opts.Engine.HasCrossObjectRules(k.Kind, config.CI)
		l.indexing = l.indexing || l.crossKind[k.Kind]
	}
	if err := l.stream(ctx, sources, inputs{stdin: opts.Stdin, memory: memory}); err != nil {
		return nil, err
	}
	if err := l.crossObject(ctx); err != nil {
		return nil, err
	}
	return l.report, nil
}

// linter is one run's state.
type linter struct {
	engine  *policies.Engine
	stages  []Stage
	workers int
	// keepStored: ask a stage that can render the object as stored.
	keepStored  bool
	schemaRules map[string]bool
	now         time.Time
	// paths are the engine's CrossObjectPaths: nil means keep whole nodes.
	paths     []string
	crossKind map[string]bool // kinds the cross-object rules apply to
	// indexing: some cross-object rule is enabled, so objects are indexed.
	indexing bool
	// policy judges instead of the rules when set (--engine vap).
	policy *AdmissionPolicy

	// Owned by the goroutine that collects results, in input order.
	report    *Report
	inventory *policies.InventoryBuilder
	deferred  []deferred
}

// check runs the stages and the rules that need no other object on one
// object, and keeps what the cross-object rules will need of it.
func (l *linter) check(ctx context.Context, o *manifest.Object) (checked, error) {
	c := checked{result: ObjectResult{
		Source:     o.Source,
		APIVersion: o.APIVersion(),
		Kind:       o.Kind(),
		Name:       o.Name(),
		Position:   o.Position(""),
	}}
	var findings []policies.Finding
	if l.policy == nil {
		// conftest's input is the document as written: evaluated before a
		// stage replaces the object with its stored form.
		document, err := l.engine.EvaluateDocument(ctx, o.Content)
		if err != nil {
			return c, err
		}
		findings = append(document.Findings, document.Waived...)
	}
	for _, s := range l.stages {
		var fs []policies.Finding
		var err error
		if st, ok := s.(storingStage); ok && l.keepStored {
			fs, c.result.Stored, err = st.checkStored(ctx, o)
		} else {
			fs, err = s.Check(ctx, o)
		}
		if err != nil {
			return c, err
		}
		findings = append(findings, fs...)
	}
	if l.policy != nil {
		fs, err := l.judgeByPolicy(ctx, o, findings)
		if err != nil {
			return c, err
		}
		findings = append(findings, fs...)
	} else {
		res, err := l.engine.Evaluate(ctx, policies.Request{Object: o.Content, Point: config.CI, SkipCrossObject: true, Now: l.now})
		if err != nil {
			return c, err
		}
		findings = append(findings, res.Findings...)
		findings = append(findings, res.Waived...)
	}
	findings = foldSchemaFindings(l.schemaRules, findings)
	policies.SortFindings(findings)
	for _, f := range findings {
		located := Finding{Finding: f, File: o.Source, Position: o.Position(f.Path)}
		if f.Waived {
			c.result.Waived = append(c.result.Waived, located)
		} else {
			c.result.Findings = append(c.result.Findings, located)
		}
	}
	if !l.indexing {
		return c, nil
	}
	var err error
	if c.entry, err = l.engine.NewInventoryEntry(o.Content); err != nil {
		return c, err
	}
	if l.crossKind[c.result.Kind] {
		if c.deferred, err = l.keep(o); err != nil {
			return c, err
		}
	}
	return c, nil
}

// judgeByPolicy is the admission policy's verdict on o, unless the stages
// found what the API server refuses before any policy runs.
func (l *linter) judgeByPolicy(ctx context.Context, o *manifest.Object, stageFindings []policies.Finding) ([]policies.Finding, error) {
	for _, f := range stageFindings {
		if l.schemaRules[f.RuleID] && f.Action == config.Deny && !f.Waived {
			return nil, nil
		}
	}
	fs, err := l.policy.Judge(ctx, o.Content)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Ref(), err)
	}
	return fs, nil
}

// checkDocument runs the policies in conftest's layout, and only them, on
// an object of another kind than Karpenter's.
func (l *linter) checkDocument(ctx context.Context, o *manifest.Object) (checked, error) {
	c := checked{result: ObjectResult{
		Source:            o.Source,
		APIVersion:        o.APIVersion(),
		Kind:              o.Kind(),
		Name:              o.Name(),
		Position:          o.Position(""),
		OnlyDocumentRules: true,
	}}
	res, err := l.engine.EvaluateDocument(ctx, o.Content)
	if err != nil {
		return c, err
	}
	c.result.Findings = l.locate(o, res.Findings)
	c.result.Waived = l.locate(o, res.Waived)
	return c, nil
}

func (l *linter) locate(o *manifest.Object, fs []policies.Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		out = append(out, Finding{Finding: f, File: o.Source, Position: o.Position(f.Path)})
	}
	return out
}

// forEach calls fn for 0..n-1 on up to workers goroutines and returns the
// first error.
func forEach(ctx context.Context, n, workers int, fn func(int) error) error {
	workers = min(workers, n)
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return first
}

// Document is one input held in memory.
type Document struct {
	Name string
	Data []byte
}

// inputs are where sources that are not files are read from.
type inputs struct {
	stdin  io.Reader
	memory map[string][]byte
}
