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

// GitHub writes GitHub Actions workflow commands, which the runner turns
// into annotations on the pull request's files: ::error for deny,
// ::warning for warn, ::notice for waived findings.
func GitHub(w io.Writer, r *lint.Report, opts Options) error {
	b := bufio.NewWriter(w)
	write := func(command string, f lint.Located, msg string) {
		fmt.Fprintf(b, "::%s file=%s,line=%d,col=%d,title=%s::%s\n", command,
			escapeProperty(manifest.DisplayName(f.File)), f.Line, f.Column,
			escapeProperty(f.RuleID+" "+f.Title), escapeData(msg))
	}
	for _, f := range shown(r.Findings(), opts) {
		msg := fmt.Sprintf("%s %s: %s", f.Object.Ref(), f.Path, f.Message)
		if f.Fix != "" {
			msg += "\nFix: " + f.Fix
		}
		command := level(f.Action, "error", "warning")
		if f.Action == config.Audit {
			command = "notice" // only in `karpgate audit`
		}
		write(command, f, msg)
	}
	for _, f := range r.WaivedFindings() {
		write("notice", f, fmt.Sprintf("waived: %s %s: %s\nReason: %s", f.Object.Ref(), f.Path, f.Message, f.WaiverReason))
	}
	return b.Flush()
}

// escapeData and escapeProperty follow the runner's rules for workflow
// command values.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
