package lint

import (
	"context"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/policies"
)

// deferred is what lint keeps of an object for the cross-object rules
// until the whole input is read: the fields they read and where in the
// file their findings can point.
type deferred struct {
	object  int // index in Report.Objects
	subject *policies.Subject
	source  string
	// positions are those of the engine's CrossObjectPaths, in order.
	positions []manifest.Position
	// node is the whole object's node, kept only when the engine cannot
	// say which paths a finding can point at.
	node *yaml.Node
	// at is the object's own position, for findings about all of it.
	at manifest.Position
}

// keep takes what the cross-object rules need of o.
func (l *linter) keep(o *manifest.Object) (*deferred, error) {
	subject, err := l.engine.NewSubject(o.Content)
	if err != nil {
		return nil, err
	}
	d := &deferred{subject: subject, source: o.Source, at: o.Position("")}
	if l.paths == nil {
		d.node = o.Node
		return d, nil
	}
	d.positions = make([]manifest.Position, len(l.paths))
	for i, p := range l.paths {
		d.positions[i] = o.Position(p)
	}
	return d, nil
}

// locate is Object.Position for what was kept.
func (d *deferred) locate(paths []string, path string) manifest.Position {
	if d.node != nil {
		return manifest.Locate(d.node, manifest.ParseFieldPath(path))
	}
	if i := slices.Index(paths, path); i >= 0 {
		return d.positions[i]
	}
	return d.at
}

// crossObject runs the cross-object rules on every object kept for them,
// with the inventory of the whole input, and merges their findings into
// the report in the order Evaluate would have given them.
func (l *linter) crossObject(ctx context.Context) error {
	if len(l.deferred) == 0 {
		return nil
	}
	inventory := l.inventory.Build()
	return forEach(ctx, len(l.deferred), l.workers, func(i int) error {
		d := &l.deferred[i]
		res, err := l.engine.EvaluateCrossObject(ctx, d.subject, inventory, l.now, config.CI)
		if err != nil {
			return err
		}
		r := &l.report.Objects[d.object] // each goroutine writes its own objects
		for _, f := range res.Findings {
			r.Findings = append(r.Findings, Finding{Finding: f, File: d.source, Position: d.locate(l.paths, f.Path)})
		}
		for _, f := range res.Waived {
			r.Waived = append(r.Waived, Finding{Finding: f, File: d.source, Position: d.locate(l.paths, f.Path)})
		}
		sortLocated(r.Findings)
		sortLocated(r.Waived)
		return nil
	})
}

func sortLocated(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int { return policies.CompareFindings(a.Finding, b.Finding) })
}
