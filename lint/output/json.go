package output

import (
	"encoding/json"
	"io"
	"time"

	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/lint"
)

// jsonFinding is one finding in the json format: flat, so that jq filters
// stay short (.findings[] | select(.action == "deny")).
type jsonFinding struct {
	File         string `json:"file"`
	Line         int    `json:"line"`
	Column       int    `json:"column"`
	APIVersion   string `json:"apiVersion"`
	Kind         string `json:"kind"`
	Name         string `json:"name"`
	Rule         string `json:"rule"`
	Package      string `json:"package,omitempty"`
	Title        string `json:"title"`
	Severity     string `json:"severity"`
	Action       string `json:"action"`
	Message      string `json:"message"`
	Path         string `json:"path"`
	Fix          string `json:"fix,omitempty"`
	WaiverReason string `json:"waiverReason,omitempty"`
	// WaiverUntil (RFC 3339) and WaiverSetBy: the waiver's expiry and who
	// set it, when known.
	WaiverUntil string `json:"waiverUntil,omitempty"`
	WaiverSetBy string `json:"waiverSetBy,omitempty"`
	Patch       any    `json:"patch,omitempty"`
}

type jsonReport struct {
	Tool     jsonTool      `json:"tool"`
	Summary  lint.Summary  `json:"summary"`
	Findings []jsonFinding `json:"findings"`
	Waived   []jsonFinding `json:"waived"`
}

type jsonTool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// CRDs names the CRD set objects were judged with, when any.
	CRDs string `json:"crds,omitempty"`
	// Karpenter is the Karpenter version the rules judged by, and
	// KarpenterChoice how it was chosen when the CRDs alone do not say.
	Karpenter       string `json:"karpenter"`
	KarpenterChoice string `json:"karpenterChoice,omitempty"`
	// Engine says what judged: rego (karpgate's rules) or vap (the rules'
	// CEL twins, as the API server's ValidatingAdmissionPolicy).
	Engine string `json:"engine"`
}

// JSON writes the summary, the active findings and the waived ones.
func JSON(w io.Writer, r *lint.Report, opts Options) error {
	out := jsonReport{
		Tool:     jsonTool{Name: "karpgate", Version: opts.ToolVersion, CRDs: r.CRDs, Karpenter: r.Karpenter, KarpenterChoice: r.KarpenterChoice, Engine: engineName(r)},
		Summary:  r.Summary(),
		Findings: jsonFindings(r.Findings()),
		Waived:   jsonFindings(r.WaivedFindings()),
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func jsonFindings(fs []lint.Located) []jsonFinding {
	out := make([]jsonFinding, 0, len(fs))
	for _, f := range fs {
		jf := jsonFinding{
			File: manifest.DisplayName(f.File), Line: f.Line, Column: f.Column,
			APIVersion: f.Object.APIVersion, Kind: f.Object.Kind, Name: f.Object.Name,
			Rule: f.RuleID, Package: f.Package, Title: f.Title, Severity: string(f.Severity), Action: string(f.Action),
			Message: f.Message, Path: f.Path, Fix: f.Fix, WaiverReason: f.WaiverReason,
		}
		if len(f.Patch) > 0 {
			jf.Patch = f.Patch
		}
		if f.WaiverUntil != nil {
			jf.WaiverUntil = f.WaiverUntil.UTC().Format(time.RFC3339)
		}
		jf.WaiverSetBy = f.WaiverSetBy
		out = append(out, jf)
	}
	return out
}

// engineName is the report's engine, rego for a report made without one
// (a report built by hand).
func engineName(r *lint.Report) string {
	if r.Engine == "" {
		return lint.EngineRego
	}
	return r.Engine
}
