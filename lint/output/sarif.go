package output

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/lint"
)

// SARIF 2.1.0, as GitHub code scanning and other viewers read it.
const (
	sarifVersion = "2.1.0"
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	rulesHelpURI = "https://github.com/karpgate/karpgate/blob/main/policies/README.md#"
)

type sarifLog struct {
	Version string     `json:"version"`
	Schema  string     `json:"$schema"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      *sarifText     `json:"fullDescription,omitempty"`
	Help                 *sarifText     `json:"help,omitempty"`
	HelpURI              string         `json:"helpUri,omitempty"`
	DefaultConfiguration sarifConfig    `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID       string             `json:"ruleId"`
	RuleIndex    int                `json:"ruleIndex"`
	Level        string             `json:"level"`
	Message      sarifText          `json:"message"`
	Locations    []sarifLocation    `json:"locations"`
	Suppressions []sarifSuppression `json:"suppressions,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
}

type sarifLogical struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification"`
}

// SARIF writes one run with every rule of the catalog (title, description,
// fix as help, default level, kinds) and one result per finding; waived
// findings are results with an in-source suppression and its reason.
func SARIF(w io.Writer, r *lint.Report, opts Options) error {
	driver := sarifDriver{Name: "karpgate", Version: opts.ToolVersion, InformationURI: "https://github.com/karpgate/karpgate"}
	ruleIndex := map[string]int{}
	for i, rule := range r.Rules {
		ruleIndex[rule.ID] = i
		sr := sarifRule{
			ID:                   rule.ID,
			Name:                 ruleName(rule.Package),
			ShortDescription:     sarifText{Text: rule.Title},
			DefaultConfiguration: sarifConfig{Level: sarifLevel(rule.Severity)},
			Properties:           map[string]any{"kinds": rule.Kinds, "builtin": rule.Builtin},
		}
		if rule.Namespace != "" {
			sr.Properties["namespace"] = rule.Namespace
		}
		if rule.Description != "" {
			sr.FullDescription = &sarifText{Text: rule.Description}
		}
		if rule.Fix != "" {
			sr.Help = &sarifText{Text: rule.Fix}
		}
		if rule.Builtin {
			sr.HelpURI = rulesHelpURI + strings.ToLower(rule.ID)
		}
		driver.Rules = append(driver.Rules, sr)
	}
	results := []sarifResult{}
	add := func(f lint.Located, suppression *sarifSuppression) {
		msg := f.Message
		if f.Fix != "" {
			msg += " Fix: " + f.Fix
		}
		res := sarifResult{
			RuleID:    f.RuleID,
			RuleIndex: ruleIndex[f.RuleID],
			Level:     sarifLevel(f.Action),
			Message:   sarifText{Text: msg},
			Locations: []sarifLocation{{
				PhysicalLocation: sarifPhysical{
					ArtifactLocation: sarifArtifact{URI: artifactURI(f.File)},
					Region:           sarifRegion{StartLine: max(f.Line, 1), StartColumn: max(f.Column, 1)},
				},
				LogicalLocations: []sarifLogical{{FullyQualifiedName: logicalName(f), Kind: "member"}},
			}},
		}
		if suppression != nil {
			res.Suppressions = []sarifSuppression{*suppression}
		}
		results = append(results, res)
	}
	for _, f := range r.Findings() {
		add(f, nil)
	}
	for _, f := range r.WaivedFindings() {
		add(f, &sarifSuppression{Kind: "inSource", Justification: f.WaiverReason})
	}
	log := sarifLog{Version: sarifVersion, Schema: sarifSchema, Runs: []sarifRun{{Tool: sarifTool{Driver: driver}, Results: results}}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

// ruleName is a rule's package name in PascalCase, as SARIF names rules:
// data.karpgate.rules.ami_latest_production -> AmiLatestProduction.
func ruleName(pkg string) string {
	last := pkg[strings.LastIndex(pkg, ".")+1:]
	var b strings.Builder
	for _, part := range strings.Split(last, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

func artifactURI(file string) string {
	if file == manifest.StdinName {
		return "stdin"
	}
	return filepath.ToSlash(file)
}

func logicalName(f lint.Located) string {
	if f.Path == "" {
		return f.Object.Ref()
	}
	return f.Object.Ref() + "." + f.Path
}

// sarifLevel: deny is an error, warn a warning, audit a note (reported,
// never failing).
func sarifLevel(a config.Action) string {
	if a == config.Audit {
		return "note"
	}
	return level(a, "error", "warning")
}
