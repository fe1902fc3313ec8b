package lint

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/policies"
)

// documentsInFlight bounds the documents read but not yet collected, per
// worker. It is what bounds lint's memory: a slow document holds back the
// collection of those after it, and the reader waits rather than piling
// them up.
const documentsInFlight = 8

// job is one raw document to parse and check, numbered in input order; a
// read error travels as a job too, so that it is reported in order.
type job struct {
	seq    int
	source string
	index  int
	raw    manifest.RawDocument
	err    error
}

// outcome is what checking one document gave.
type outcome struct {
	seq      int
	document bool // false for a read error
	skipped  int
	objects  []checked
	err      error
}

// checked is one Karpenter object's result and what the cross-object
// rules need of it.
type checked struct {
	result   ObjectResult
	entry    policies.InventoryEntry
	deferred *deferred // nil when no cross-object rule applies
}

// stream reads every source in order, checks documents on l.workers
// goroutines, and collects their outcomes in input order.
func (l *linter) stream(ctx context.Context, sources []string, in inputs) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	window := documentsInFlight * l.workers
	slots := make(chan struct{}, window)
	jobs := make(chan job, window)
	outcomes := make(chan outcome, window)

	go func() {
		defer close(jobs)
		readSources(ctx, sources, in, slots, jobs)
	}()
	var wg sync.WaitGroup
	for range l.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				outcomes <- l.process(ctx, j)
			}
		}()
	}
	go func() {
		wg.Wait()
		close(outcomes)
	}()

	// Collect in input order. After an error, keep draining so that every
	// goroutine ends before Run returns.
	pending := map[int]outcome{}
	next := 0
	var first error
	for out := range outcomes {
		pending[out.seq] = out
		for {
			o, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-slots
			if first != nil {
				continue
			}
			if o.err != nil {
				first = o.err
				cancel()
				continue
			}
			l.collect(o)
		}
	}
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// readSources splits every source into raw documents and queues them,
// taking a slot for each, until the sources end or ctx is done.
func readSources(ctx context.Context, sources []string, in inputs, slots chan struct{}, jobs chan<- job) {
	seq := 0
	send := func(j job) bool {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		j.seq = seq
		seq++
		jobs <- j // never blocks: jobs holds as many as there are slots
		return true
	}
	for _, source := range sources {
		r, closeSource, err := openSource(source, in)
		if err != nil {
			send(job{source: source, err: err})
			return
		}
		scanner := manifest.NewDocumentScanner(r)
		index := 0
		for ; scanner.Scan(); index++ {
			if !send(job{source: source, index: index, raw: scanner.Document()}) {
				closeSource()
				return
			}
		}
		closeSource()
		if err := scanner.Err(); err != nil {
			send(job{source: source, err: &manifest.ParseError{Source: source, Err: err}})
			return
		}
	}
}

func openSource(source string, in inputs) (io.Reader, func(), error) {
	if data, ok := in.memory[source]; ok {
		return bytes.NewReader(data), func() {}, nil
	}
	if source == manifest.StdinName {
		if in.stdin == nil {
			return nil, nil, &manifest.ParseError{Source: source, Err: fmt.Errorf("no standard input")}
		}
		return in.stdin, func() {}, nil
	}
	f, err := os.Open(source)
	if err != nil {
		return nil, nil, &manifest.ParseError{Source: source, Err: err}
	}
	return f, func() { f.Close() }, nil
}

// process parses one document and checks its Karpenter objects.
func (l *linter) process(ctx context.Context, j job) outcome {
	out := outcome{seq: j.seq}
	if j.err != nil {
		out.err = j.err
		return out
	}
	if err := ctx.Err(); err != nil {
		out.err = err
		return out
	}
	doc, err := manifest.ParseDocument(j.source, j.index, j.raw)
	if err != nil {
		out.err = err
		return out
	}
	out.document = true
	for _, o := range doc.Objects {
		var c checked
		var err error
		switch {
		case policies.Handles(o.APIVersion(), o.Kind()) || l.schemaJudges(o):
			c, err = l.check(ctx, o)
		case l.policy == nil && l.engine.HasDocumentRules():
			c, err = l.checkDocument(ctx, o)
		default:
			out.skipped++
			continue
		}
		if err != nil {
			out.err = err
			return out
		}
		out.objects = append(out.objects, c)
	}
	return out
}

// schemaJudges: a schema stage has a CRD of the object's group, although
// no policy rule may be about its kind.
func (l *linter) schemaJudges(o *manifest.Object) bool {
	for _, s := range l.stages {
		if st, ok := s.(*SchemaStage); ok && st.Judges(o.APIVersion(), o.Kind()) {
			return true
		}
	}
	return false
}

// collect adds one document's outcome to the report, in input order.
func (l *linter) collect(o outcome) {
	if o.document {
		l.report.Documents++
	}
	l.report.Skipped += o.skipped
	for _, c := range o.objects {
		if c.result.OnlyDocumentRules {
			l.report.Objects = append(l.report.Objects, c.result)
			continue
		}
		l.inventory.Add(c.entry)
		if c.deferred != nil {
			c.deferred.object = len(l.report.Objects)
			l.deferred = append(l.deferred, *c.deferred)
		}
		l.report.Objects = append(l.report.Objects, c.result)
	}
}
