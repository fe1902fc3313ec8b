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
	for _, source := range r.Sources {
		var active, waived []lint.Located
		for _, f := range r.Findings() {
			if f.File == source {
				active = append(active, f)
			}
		}
		for _, f := range r.WaivedFindings() {
			if f.File == source {
				waived = append(waived, f)
			}
		}
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
