package output

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/lint"
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
	active, waived := byFile(r.Findings()), byFile(r.WaivedFindings())
	for _, source := range r.Sources {
		active, waived := active[source], waived[source]
		if len(active)+len(waived) == 0 {
			continue
		}
		fmt.Fprintln(b, paint(ansiBold, manifest.DisplayName(source)))
		for _, f := range active {
			colour := ansiYellow
			if f.Action == config.Deny {
				colour = ansiRed
			}
			fmt.Fprintf(b, "  %-7s %s  %s  %s  %s\n", position(f.Position), paint(colour, fmt.Sprintf("%-4s", f.Action)), paint(ansiBold, f.RuleID), f.Object.Ref(), f.Path)
			writeIndented(b, f.Message)
			if f.Fix != "" {
				writeIndented(b, "fix: "+f.Fix)
			}
		}
		for _, f := range waived {
			fmt.Fprintf(b, "  %-7s %s  %s  %s  %s\n", position(f.Position), paint(ansiFaint, "waived"), f.RuleID, f.Object.Ref(), f.Path)
			writeIndented(b, paint(ansiFaint, "reason: "+f.WaiverReason))
		}
		fmt.Fprintln(b)
	}
	s := r.Summary()
	verdict := paint(ansiGreen, "no findings")
	if s.Deny+s.Warn > 0 {
		verdict = fmt.Sprintf("%s, %s", paint(ansiRed, plural(s.Deny, "denial", "denials")), paint(ansiYellow, plural(s.Warn, "warning", "warnings")))
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
	fmt.Fprintln(b)
	return b.Flush()
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
