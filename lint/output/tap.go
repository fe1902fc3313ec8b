package output

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/lint"
)

type tapFinding struct {
	Rule    string `yaml:"rule"`
	Action  string `yaml:"action"`
	Path    string `yaml:"path"`
	At      string `yaml:"at"`
	Message string `yaml:"message"`
	Fix     string `yaml:"fix,omitempty"`
	Reason  string `yaml:"reason,omitempty"`
}

type tapDiagnostic struct {
	Findings []tapFinding `yaml:"findings,omitempty"`
	Waived   []tapFinding `yaml:"waived,omitempty"`
}

// TAP writes TAP version 13: one test point per Karpenter object, "not ok"
// when it has deny findings, with its findings as a YAML diagnostic block.
func TAP(w io.Writer, r *lint.Report, opts Options) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "TAP version 13\n1..%d\n", len(r.Objects))
	for i, o := range r.Objects {
		status := "ok"
		var findings, waived []tapFinding
		for _, f := range o.Findings {
			if f.Action == config.Deny {
				status = "not ok"
			}
			if f.Action != config.Audit || opts.Audit {
				findings = append(findings, tapEntry(f))
			}
		}
		for _, f := range o.Waived {
			e := tapEntry(f)
			e.Action, e.Reason = "waived", f.WaiverReason
			waived = append(waived, e)
		}
		fmt.Fprintf(b, "%s %d - %s:%d %s\n", status, i+1, manifest.DisplayName(o.Source), o.Position.Line, o.Ref())
		if len(findings)+len(waived) == 0 {
			continue
		}
		var diag strings.Builder
		enc := yaml.NewEncoder(&diag)
		enc.SetIndent(2)
		if err := enc.Encode(tapDiagnostic{Findings: findings, Waived: waived}); err != nil {
			return err
		}
		fmt.Fprintln(b, "  ---")
		for _, line := range strings.Split(strings.TrimRight(diag.String(), "\n"), "\n") {
			fmt.Fprintf(b, "  %s\n", line)
		}
		fmt.Fprintln(b, "  ...")
	}
	return b.Flush()
}

func tapEntry(f lint.Finding) tapFinding {
	return tapFinding{Rule: f.RuleID, Action: string(f.Action), Path: f.Path, At: position(f.Position), Message: f.Message, Fix: f.Fix}
}
