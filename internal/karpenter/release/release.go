package release

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// Release is one Karpenter release karpgate knows, with the facts read from
// its modules.
type Release struct {
	// Version is the release users install: the AWS provider's version,
	// or Karpenter core's where the Go module proxy serves no provider
	// module of that line (see Notes).
	Version Version `json:"version"`
	// Modules are the module zips the facts were read from, with their
	// go.sum hashes (the pins under hack/releases/<version>).
	Modules []Module `json:"modules"`
	// Notes say what the facts could not cover, and why.
	Notes []string `json:"notes,omitempty"`
	Facts Facts    `json:"facts"`
}

// Module is one module zip a release's facts come from.
type Module struct {
	Path    string `json:"path"`
	Version string `json:"version"`
	Sum     string `json:"sum"`
	// Reads says which facts come from this module.
	Reads string `json:"reads"`
}

// Facts are what a release accepts and does.
type Facts struct {
	// Schema holds the facts its CRDs state.
	Schema SchemaFacts `json:"schema"`
	// Code holds the facts only its Go code holds.
	Code CodeFacts `json:"code"`
}

// CodeFacts are the facts only a release's Go code holds.
type CodeFacts struct {
	// NodePoolHash is how Karpenter hashes a NodePool (nil when unknown).
	NodePoolHash *Hash `json:"nodePoolHash,omitempty"`
	// EC2NodeClassHash is how the AWS provider hashes an EC2NodeClass
	// (nil for a release whose provider module is not served).
	EC2NodeClassHash *Hash `json:"ec2NodeClassHash,omitempty"`
	// DriftReasons are the AWS provider's NodeClaim drift reasons
	// (AMIDrift, SubnetDrift, ...): the per-node checks besides the hash.
	DriftReasons []string `json:"driftReasons,omitempty"`
	// DoNotDisruptDurations: karpenter.sh/do-not-disrupt on a pod may be a
	// duration ("30m") after the pod's start, not only "true".
	DoNotDisruptDurations bool `json:"doNotDisruptDurations"`
}

//go:embed releases.json
var table []byte

var (
	loadOnce sync.Once
	known    []Release
	loadErr  error
)

// Known returns the releases karpgate knows, oldest first. The slice is
// shared: callers must not modify it.
func Known() []Release {
	loadOnce.Do(func() { known, loadErr = parseTable(table) })
	if loadErr != nil {
		// The table is generated and checked by tests; a broken one is a
		// build defect, not an input error.
		panic(loadErr)
	}
	return known
}

// parseTable reads a releases.json and checks it is ordered.
func parseTable(data []byte) ([]Release, error) {
	var doc struct {
		Releases []Release `json:"releases"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("releases.json: %w", err)
	}
	if len(doc.Releases) == 0 {
		return nil, fmt.Errorf("releases.json: no release")
	}
	for i := 1; i < len(doc.Releases); i++ {
		if doc.Releases[i-1].Version.Compare(doc.Releases[i].Version) >= 0 {
			return nil, fmt.Errorf("releases.json: %s listed after %s: oldest first", doc.Releases[i].Version, doc.Releases[i-1].Version)
		}
	}
	return doc.Releases, nil
}

// Newest is the newest known release.
func Newest() Release {
	k := Known()
	return k[len(k)-1]
}

// Oldest is the oldest known release.
func Oldest() Release { return Known()[0] }

// Lookup finds the release s names ("v1.15", "1.15.1"). A minor names its
// newest known patch. A version karpgate has no facts for resolves to the
// newest known release before it, with exact false: its facts are the best
// karpgate has, and callers say so. A version older than every known
// release is an error.
func Lookup(s string) (r Release, exact bool, err error) {
	v, err := ParseVersion(s)
	if err != nil {
		return Release{}, false, err
	}
	return LookupVersion(v)
}

// LookupVersion is Lookup for a parsed version.
func LookupVersion(v Version) (r Release, exact bool, err error) {
	k := Known()
	for i := len(k) - 1; i >= 0; i-- {
		if v.Patch >= 0 && k[i].Version.Compare(v) == 0 {
			return k[i], true, nil
		}
	}
	for i := len(k) - 1; i >= 0; i-- {
		kv := k[i].Version
		if kv.Major == v.Major && kv.Minor == v.Minor {
			// The line's known patch: its facts are the line's.
			return k[i], v.Patch < 0, nil
		}
		if kv.Compare(v) < 0 {
			return k[i], false, nil
		}
	}
	return Release{}, false, fmt.Errorf("Karpenter %s predates every release karpgate knows (%s is the oldest); karpgate judges %s", v, Oldest().Version, Lines())
}

// Lines lists the known release lines for messages: "v1.0, v1.1, ... v1.15".
func Lines() string {
	var lines []string
	for _, r := range Known() {
		if l := r.Version.MinorString(); !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += ", "
		}
		out += l
	}
	return out
}

// AcceptsReason reports whether a budget may name reason.
func (f Facts) AcceptsReason(reason string) bool {
	return slices.Contains(f.Schema.BudgetReasons, reason)
}

// AcceptsConsolidationPolicy reports whether consolidationPolicy may be p.
func (f Facts) AcceptsConsolidationPolicy(p string) bool {
	return slices.Contains(f.Schema.ConsolidationPolicies, p)
}

// AcceptsOperator reports whether a requirement may use operator op.
func (f Facts) AcceptsOperator(op string) bool {
	return slices.Contains(f.Schema.RequirementOperators, op)
}

// AliasFamily finds an amiSelectorTerms alias family by its lower-case
// name ("al2023"); ok is false when the release has no such family.
func (f Facts) AliasFamily(family string) (AliasFamily, bool) {
	for _, a := range f.Schema.AliasFamilies {
		if a.Family == family {
			return a, true
		}
	}
	return AliasFamily{}, false
}

// AliasFamilyNames lists the alias families in the CRD's order.
func (f Facts) AliasFamilyNames() []string {
	names := make([]string, len(f.Schema.AliasFamilies))
	for i, a := range f.Schema.AliasFamilies {
		names[i] = a.Family
	}
	return names
}

// Kind finds a kind the release's CRDs define.
func (f Facts) Kind(group, kind string) (Kind, bool) {
	for _, k := range f.Schema.Kinds {
		if k.Group == group && k.Kind == kind {
			return k, true
		}
	}
	return Kind{}, false
}

// HasKind reports whether the release defines group and kind at all.
func (f Facts) HasKind(group, kind string) bool {
	_, ok := f.Kind(group, kind)
	return ok
}

// Serves reports whether the release's API server serves kind at version.
func (f Facts) Serves(group, kind, version string) bool {
	k, ok := f.Kind(group, kind)
	return ok && slices.Contains(k.Served, version)
}

// NeedsConversion reports whether any of the release's CRDs serves more
// than one version, which takes a conversion webhook (Karpenter v1.0:
// v1beta1 and v1).
func (f Facts) NeedsConversion() bool {
	for _, k := range f.Schema.Kinds {
		if len(k.Served) > 1 {
			return true
		}
	}
	return false
}

// WithSchema returns the facts with the schema facts of the CRDs in use:
// what the CRDs state wins over the table, the code facts stay.
func (f Facts) WithSchema(s SchemaFacts) Facts {
	f.Schema = s
	return f
}
