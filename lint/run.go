package lint

import (
	"context"
	"io"
	"runtime"
	"sync"

	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/policies"
)

// Options configure a run.
type Options struct {
	// Inputs are files, folders (read recursively) and "-" for Stdin.
	Inputs []string
	Stdin  io.Reader
	Engine *policies.Engine
	// CRDs judges every object as the API server would (schema, CEL rules,
	// defaults) before the rules see it; nil skips that stage.
	CRDs *crdschema.Set
	// Workers bounds concurrent evaluations; 0 means GOMAXPROCS.
	Workers int
	// KeepStored renders each object as the API server would store it into
	// ObjectResult.Stored (`karpgate lint --show-defaults`).
	KeepStored bool
}

// stages lists what every object goes through, in order.
func (opts Options) stages() []Stage {
	var stages []Stage
	if opts.CRDs != nil {
		stages = append(stages, schemaStage{set: opts.CRDs})
	}
	return append(stages, newPolicyStage(opts.Engine))
}

// Run reads every input, then evaluates every Karpenter object. The whole
// input is read first because cross-object rules need all of it. A parse
// error stops the run: a manifest that cannot be read cannot be checked.
func Run(ctx context.Context, opts Options) (*Report, error) {
	sources, err := manifest.ExpandInputs(opts.Inputs)
	if err != nil {
		return nil, err
	}
	report := &Report{Rules: opts.Engine.Catalog(), Sources: sources}
	if opts.CRDs != nil {
		report.CRDs = opts.CRDs.Name()
	}
	var objects []*manifest.Object
	err = manifest.Walk(sources, opts.Stdin, func(d *manifest.Document) error {
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
		return nil, err
	}
	contents := make([]map[string]any, len(objects))
	for i, o := range objects {
		contents[i] = o.Content
	}
	inventory, err := policies.NewInventory(contents)
	if err != nil {
		return nil, err
	}
	report.Objects = make([]ObjectResult, len(objects))
	stages := opts.stages()
	err = forEach(ctx, len(objects), opts.Workers, func(i int) error {
		s := &Subject{Object: objects[i], Content: objects[i].Content, Inventory: inventory}
		for _, st := range stages {
			if err := st.Check(ctx, s); err != nil {
				return err
			}
		}
		report.Objects[i] = locate(s)
		if opts.KeepStored && s.Stored != nil {
			written := s.Object.Node
			if s.Object.APIVersion() != s.Stored["apiVersion"] {
				written = nil // another version: its order means nothing here
			}
			report.Objects[i].Stored = storedNode(written, s.Stored, s.Defaults)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return report, nil
}

// locate attaches file positions to an object's findings.
func locate(s *Subject) ObjectResult {
	o, res := s.Object, s.Result
	r := ObjectResult{
		Source:     o.Source,
		APIVersion: o.APIVersion(),
		Kind:       o.Kind(),
		Name:       o.Name(),
		Position:   o.Position(""),
	}
	at := func(fs []policies.Finding) []Finding {
		out := make([]Finding, 0, len(fs))
		for _, f := range fs {
			out = append(out, Finding{Finding: f, File: o.Source, Position: o.Position(f.Path)})
		}
		return out
	}
	r.Findings, r.Waived = at(res.Findings), at(res.Waived)
	return r
}

// forEach calls fn for 0..n-1 on up to workers goroutines and returns the
// first error.
func forEach(ctx context.Context, n, workers int, fn func(int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
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
