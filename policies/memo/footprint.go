package memo

import (
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/karpgate/karpgate/policies/budgetfuncs"
)

// A rule's footprint is what it reads of input: field paths with constant
// keys, and whether it hands input.object to the budget builtins (which
// read budgetfuncs.FieldPaths, and the clock through
// karpgate.budgets.analyze). A rule whose footprint is known and leaves
// out what tells objects apart (the name and the rest of the metadata but
// labels and annotations) finds the same violations in every object that
// agrees on those paths; such rules are memoized by them (see Group). Most
// of a repository's NodePools share their budgets and most EC2NodeClasses
// their AMI selection and their annotations (most have none, or only
// karpgate's waivers), and an admission webhook sees the same objects
// again and again.
//
// Footprints are found by reading the compiled rules, and every rule or
// function they use: a rule whose reads cannot be pinned down (a dynamic
// key into input, input passed whole to a function, the clock used for
// anything but karpgate.budgets.analyze, a non-deterministic builtin, a
// `with`) has none and is evaluated with each object.
type footprint struct {
	// paths are read whole; exists are only tested for being defined
	// (bound to a local whose uses are counted in paths) or for their
	// type (is_object and the other type tests).
	paths, exists [][]string
	budgets       bool
}

// all is every path the projection of the input must keep: with budgets,
// budgetfuncs.FieldPaths under input.object.
func (f footprint) all() [][]string {
	out := slices.Clone(f.paths)
	if f.budgets {
		for _, p := range budgetfuncs.FieldPaths {
			out = append(out, append([]string{"object"}, p...))
		}
	}
	return out
}

// memoizable: nothing an object's identity or the other objects of an
// input live in. Of the metadata, only the labels and annotations count as
// content: the name, namespace, UID, generation, resourceVersion and
// managedFields tell one object or one write from another, so a group keyed
// by them would never be hit. An exists path keys by whether a field is
// defined and, when it is not an object, by its value (see
// valuekey.Projection), so one into the metadata counts too.
func (f footprint) memoizable() bool {
	identity := func(p []string, whole bool) bool {
		if p[0] == "inventory" {
			return true
		}
		if p[0] != "object" && p[0] != "oldObject" {
			return false
		}
		if len(p) == 1 {
			return whole
		}
		return p[1] == "metadata" && (whole || len(p) > 2) && !metadataContent(p[2:])
	}
	for _, p := range f.all() {
		if identity(p, true) {
			return false
		}
	}
	for _, p := range f.exists {
		if identity(p, false) {
			return false
		}
	}
	return true
}

// metadataContent: a path under metadata that reads labels or annotations.
func metadataContent(p []string) bool {
	return len(p) > 0 && (p[0] == "labels" || p[0] == "annotations")
}

// covers reports whether everything g reads, f keeps.
func (f footprint) covers(g footprint) bool {
	if g.budgets && !f.budgets {
		return false
	}
	within := func(p []string, paths [][]string) bool {
		return slices.ContainsFunc(paths, func(q []string) bool { return hasPrefix(p, q) })
	}
	for _, p := range g.all() {
		if !within(p, f.all()) {
			return false
		}
	}
	// An exists path keeps an object as {}, so it covers only itself, not
	// the fields under it.
	for _, p := range g.exists {
		if !within(p, f.all()) && !slices.ContainsFunc(f.exists, func(q []string) bool { return slices.Equal(p, q) }) {
			return false
		}
	}
	return true
}

func hasPrefix(p, prefix []string) bool {
	return len(p) >= len(prefix) && slices.Equal(p[:len(prefix)], prefix)
}

// footprintOf is the footprint of rules and everything they use; ok is
// false when it cannot be pinned down.
func footprintOf(c *ast.Compiler, rules []*ast.Rule) (footprint, bool) {
	var f footprint
	if !everyRuleUsed(c, rules, f.addRule) {
		return footprint{}, false
	}
	f.paths, f.exists = dedupe(f.paths), dedupe(f.exists)
	return f, true
}

func dedupe(paths [][]string) [][]string {
	slices.SortFunc(paths, func(a, b []string) int { return strings.Compare(strings.Join(a, "\x00"), strings.Join(b, "\x00")) })
	return slices.CompactFunc(paths, slices.Equal)
}
