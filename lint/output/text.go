package output

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/lint"
	"github.com/karpgate/karpgate/policies"
)

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiFaint  = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiGreen  = "\x1b[32m"
)

// Text writes findings grouped by file, each with its position, action,
// rule, object and field path, then the message and fix indented below;
// waived findings follow their file's active ones; a summary ends it.
func Text(w io.Writer, r *lint.Report, opts Options) error {
	b := bufio.NewWriter(w)
	paint := func(code, s string) string {
		if !opts.Color {
			return s
		}
		return code + s + ansiReset
	}
	// Sorted and grouped once: with hundreds of files, sorting every
	// finding again for each file is what a run would spend its time on.
	active, waived := byFile(shown(r.Findings(), opts)), byFile(r.WaivedFindings())
	for _, source := range r.Sources {
		active, waived := active[source], waived[source]
		if len(active)+len(waived) == 0 {
			continue
		}
		fmt.Fprintln(b, paint(ansiBold, manifest.DisplayName(source)))
		for _, f := range active {
			colour := ansiYellow
			switch f.Action {
			case config.Deny:
				colour = ansiRed
			case config.Audit:
				colour = ansiFaint
			}
			fmt.Fprintf(b, "  %-7s %s  %s  %s  %s\n", position(f.Position), paint(colour, fmt.Sprintf("%-4s", f.Action)), paint(ansiBold, f.RuleID), f.Object.Ref(), f.Path)
			writeIndented(b, f.Message)
			if f.Fix != "" {
				writeIndented(b, "fix: "+f.Fix)
			}
		}
		for _, f := range waived {
			fmt.Fprintf(b, "  %-7s %s  %s  %s  %s\n", position(f.Position), paint(ansiFaint, "waived"), f.RuleID, f.Object.Ref(), f.Path)
			writeIndented(b, paint(ansiFaint, "reason: "+waiverLine(f.Finding.Finding)))
		}
		fmt.Fprintln(b)
	}
	s := r.Summary()
	verdict := paint(ansiGreen, "no findings")
	if s.Deny+s.Warn > 0 || opts.Audit && s.Audit > 0 {
		verdict = fmt.Sprintf("%s, %s", paint(ansiRed, plural(s.Deny, "denial", "denials")), paint(ansiYellow, plural(s.Warn, "warning", "warnings")))
	}
	if opts.Audit {
		verdict += fmt.Sprintf(", %d audit", s.Audit)
	}
	fmt.Fprintf(b, "%s, %d waived: %s checked in %s (%s), %s skipped",
		verdict, s.Waived, plural(s.Objects, "Karpenter object", "Karpenter objects"),
		plural(s.Files, "file", "files"), plural(s.Documents, "document", "documents"),
		plural(s.Skipped, "other object", "other objects"))
	if s.Others > 0 {
		fmt.Fprintf(b, "; conftest policies also checked %s", plural(s.Others, "other object", "other objects"))
	}
	if r.CRDs != "" {
		fmt.Fprintf(b, "; CRDs: %s", r.CRDs)
	}
	if r.KarpenterChoice != "" {
		fmt.Fprintf(b, "; judged as Karpenter %s", r.KarpenterChoice)
	}
	if r.Engine == lint.EngineAdmissionPolicy {
		fmt.Fprint(b, "; judged by the rules' CEL twins alone, as the API server's ValidatingAdmissionPolicy (--engine vap)")
	}
	if s.Audit > 0 && !opts.Audit {
		fmt.Fprintf(b, "; %s whose action is audit in --format json and sarif", plural(s.Audit, "finding", "findings"))
	}
	fmt.Fprintln(b)
	return b.Flush()
}

// waiverLine is a waiver's reason, with its expiry and author when known.
func waiverLine(f policies.Finding) string {
	s := f.WaiverReason
	if f.WaiverUntil != nil {
		s += "; until " + f.WaiverUntil.UTC().Format(time.RFC3339)
	}
	if f.WaiverSetBy != "" {
		s += "; set by " + f.WaiverSetBy
	}
	return s
}

func position(p manifest.Position) string {
	return fmt.Sprintf("%d:%d", p.Line, p.Column)
}

func writeIndented(b *bufio.Writer, s string) {
	for _, line := range strings.Split(s, "\n") {
		fmt.Fprintf(b, "          %s\n", line)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func byFile(fs []lint.Located) map[string][]lint.Located {
	out := map[string][]lint.Located{}
	for _, f := range fs {
		out[f.File] = append(out[f.File], f)
	}
	return out
}
