package lint

import (
	"cmp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/policies"
)

// Exit codes of `karpgate lint`.
const (
	ExitClean = 0 // no deny findings (and no warnings with --fail-on-warn)
	ExitDeny  = 1 // at least one deny finding
	ExitWarn  = 2 // warnings only, with --fail-on-warn
	ExitUsage = 3 // bad flags, unreadable config or policies, unparsable input
)

// Report is the outcome of one lint run.
type Report struct {
	// Sources are the files read, in order ("-" for standard input).
	Sources []string
	// Documents counts YAML/JSON documents, empty ones included.
	Documents int
	// Skipped counts objects that are not Karpenter kinds, unless policies
	// in conftest's layout judged them.
	Skipped int
	// Objects are the objects checked, in input order: every Karpenter
	// object, and the others when conftest policies are loaded.
	Objects []ObjectResult
	// Rules is the engine's catalog, for formats that describe rules.
	Rules policies.Catalog
	// CRDs names the CRD set objects were judged with; "" when the schema
	// stage was off.
	CRDs string
	// Karpenter is the Karpenter version the rules judged by ("v1.15.1").
	Karpenter string
	// KarpenterChoice says how that version was chosen when the CRD set
	// does not say it alone ("~v1.14.3 (--karpenter-version v1.14)"); ""
	// when the CRDs are exactly that release's.
	KarpenterChoice string
	// Engine says what judged the objects: EngineRego (karpgate's rules)
	// or EngineAdmissionPolicy (the rules' CEL twins, as the API server
	// enforces them).
	Engine string
}

// ObjectResult is the verdict on one object.
type ObjectResult struct {
	Source     string            `json:"file"`
	Position   manifest.Position `json:"position"`
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Name       string            `json:"name"`
	Findings   []Finding         `json:"findings"`
	Waived     []Finding         `json:"waived,omitempty"`
	// OnlyDocumentRules marks an object of another kind than Karpenter's,
	// which only the policies in conftest's layout judged.
	OnlyDocumentRules bool `json:"-"`
	// Stored is the object as the API server would store it (the CRD's
	// defaults applied and marked, unknown fields pruned), with
	// Options.KeepStored; nil otherwise or when no CRD judged it.
	Stored *yaml.Node `json:"-"`
}

// Ref names the object for people: "NodePool/default".
func (o ObjectResult) Ref() string {
	name := o.Name
	if name == "" {
		name = "<unnamed>"
	}
	return o.Kind + "/" + name
}

// Finding is a policy finding located in its file.
type Finding struct {
	policies.Finding
	File string `json:"file"`
	manifest.Position
}

// Summary counts what a report holds.
type Summary struct {
	Files     int `json:"files"`
	Documents int `json:"documents"`
	Objects   int `json:"objects"`
	// Others are the objects of other kinds the conftest policies judged.
	Others  int `json:"others,omitempty"`
	Skipped int `json:"skipped"`
	Deny    int `json:"deny"`
	Warn    int `json:"warn"`
	// Audit counts findings whose action is audit: reported, never failing.
	Audit  int `json:"audit"`
	Waived int `json:"waived"`
}

// Summary counts files, objects and findings by action.
func (r *Report) Summary() Summary {
	s := Summary{Files: len(r.Sources), Documents: r.Documents, Skipped: r.Skipped}
	for _, o := range r.Objects {
		if o.OnlyDocumentRules {
			s.Others++
		} else {
			s.Objects++
		}
		for _, f := range o.Findings {
			switch f.Action {
			case config.Deny:
				s.Deny++
			case config.Warn:
				s.Warn++
			case config.Audit:
				s.Audit++
			}
		}
		s.Waived += len(o.Waived)
	}
	return s
}

// ExitCode is the process exit code the report calls for.
func (r *Report) ExitCode(failOnWarn bool) int {
	s := r.Summary()
	switch {
	case s.Deny > 0:
		return ExitDeny
	case failOnWarn && s.Warn > 0:
		return ExitWarn
	default:
		return ExitClean
	}
}

// Findings returns every active finding with its object, in reading
// order: by file as given, then line and column, then rule.
func (r *Report) Findings() []Located {
	return r.located(func(o *ObjectResult) []Finding { return o.Findings })
}

// WaivedFindings returns every waived finding with its object, in the same
// order as Findings.
func (r *Report) WaivedFindings() []Located {
	return r.located(func(o *ObjectResult) []Finding { return o.Waived })
}

func (r *Report) located(of func(*ObjectResult) []Finding) []Located {
	var out []Located
	for i := range r.Objects {
		for _, f := range of(&r.Objects[i]) {
			out = append(out, Located{Object: &r.Objects[i], Finding: f})
		}
	}
	sourceIndex := make(map[string]int, len(r.Sources))
	for i, s := range r.Sources {
		sourceIndex[s] = i
	}
	slices.SortStableFunc(out, func(a, b Located) int {
		return cmp.Or(
			cmp.Compare(sourceIndex[a.File], sourceIndex[b.File]),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Column, b.Column),
			strings.Compare(a.RuleID, b.RuleID),
		)
	})
	return out
}

// Located is a finding with the object it concerns.
type Located struct {
	Object *ObjectResult
	Finding
}
