package release

import (
	"encoding/json"
	"fmt"
)

// Judged is the Karpenter version karpgate judges objects by, and where
// that choice came from.
type Judged struct {
	// Release is the known release whose facts apply.
	Release Release
	// Facts are Release's facts, with the schema facts of the CRDs in use
	// when they came from files or a cluster.
	Facts Facts
	// Exact is false when the version asked for, or the CRDs in use, match
	// no known release exactly: Release is then the closest karpgate knows.
	Exact bool
	// Source says what chose the version: "linked CRDs", "--karpenter-version
	// v1.12", "CRDs in cluster https://...", "karpgate.yaml karpenterVersion".
	Source string
	// Note says why the match is not exact, for people; "" when it is.
	Note string
	// Chosen is true when a flag or karpgate.yaml chose the version, not
	// the CRDs in use: reports then say so next to the CRDs.
	Chosen bool
}

// ForRelease judges by a known release's own facts.
func ForRelease(r Release, exact bool, source string) Judged {
	j := Judged{Release: r, Facts: r.Facts, Exact: exact, Source: source}
	if !exact {
		j.Note = fmt.Sprintf("karpgate has no facts of that exact release; it judges by %s, the closest it knows", r.Version)
	}
	return j
}

// ForCRDs judges by the CRDs in use: their own schema facts, and the code
// facts of the known release they match (or the closest).
func ForCRDs(s SchemaFacts, source string) Judged {
	d := Detect(s)
	j := Judged{Release: d.Release, Facts: d.Release.Facts.WithSchema(s), Exact: d.Exact, Source: source}
	if !d.Exact {
		j.Note = fmt.Sprintf("these CRDs match no release karpgate knows exactly (they differ from %s in %v); the CRDs decide what they state, %s's code facts (hashes, drift) the rest", d.Release.Version, d.Differences, d.Release.Version)
	}
	return j
}

// String names the judged version for people: "Karpenter v1.15.1 (linked
// CRDs)", with "~" before an inexact match.
func (j Judged) String() string {
	approx := ""
	if !j.Exact {
		approx = "~"
	}
	return fmt.Sprintf("Karpenter %s%s (%s)", approx, j.Release.Version, j.Source)
}

// Summary is a judged release as reports show it to people and scripts:
// `karpgate version --cluster`, status and explain.
type Summary struct {
	Version string `json:"version"`
	Exact   bool   `json:"exact"`
	// Source says what chose the version, as Judged.Source does.
	Source string `json:"source"`
	// Note says, for people, why the release may not be the one meant:
	// no exact match, or (status and explain) Karpenter CRDs that could
	// not be read or judged, so that the linked release was used.
	Note string `json:"note,omitempty"`
}

// Summary is what reports show of the judged release.
func (j Judged) Summary() Summary {
	return Summary{Version: j.Release.Version.String(), Exact: j.Exact, Source: j.Source, Note: j.Note}
}

// Describe names the release, how closely it matches and what chose it:
// "Karpenter v1.0.8, exactly (CRDs in cluster https://...)".
func (s Summary) Describe() string {
	return fmt.Sprintf("%s (%s)", s.DescribeRelease(), s.Source)
}

// DescribeWithNote is Describe, then the note when there is one, for a
// report that gives the release one line.
func (s Summary) DescribeWithNote() string {
	if s.Note == "" {
		return s.Describe()
	}
	return s.Describe() + ": " + s.Note
}

// DescribeRelease names the release and how closely it matches.
func (s Summary) DescribeRelease() string {
	if s.Exact {
		return "Karpenter " + s.Version + ", exactly"
	}
	return "Karpenter ~" + s.Version + ", the closest release karpgate knows"
}

// Data is what the Rego rules read as data.karpgate.karpenter: the version,
// how it was chosen and the facts, in the table's JSON shape.
func (j Judged) Data() map[string]any {
	// Through JSON, so that the rules see exactly the table's shape and
	// the policy store gets only JSON values.
	raw, err := json.Marshal(j.Facts)
	if err != nil {
		panic(err) // Facts holds only JSON-safe values
	}
	var facts map[string]any
	if err := json.Unmarshal(raw, &facts); err != nil {
		panic(err)
	}
	return map[string]any{
		"version": j.Release.Version.String(),
		"line":    j.Release.Version.MinorString(),
		"exact":   j.Exact,
		"source":  j.Source,
		"facts":   facts,
		// per-node drift: field path -> drift reason
		"resolutionDrift": j.Facts.ResolutionDrift(),
		// the release line each value first appeared in, for messages
		"introduced": Introduced(),
	}
}
