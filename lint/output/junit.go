package output

import (
	"fmt"
	"io"
	"strings"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/junit"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/lint"
)

// JUnit writes one test suite per file and one test case per Karpenter
// object: a case fails when the object has deny findings; warnings and
// waived findings go to the case's system-out.
func JUnit(w io.Writer, r *lint.Report, opts Options) error {
	doc := junit.Suites{Name: "karpgate lint"}
	index := map[string]int{}
	for _, o := range r.Objects {
		i, ok := index[o.Source]
		if !ok {
			i = len(doc.Suites)
			index[o.Source] = i
			doc.Suites = append(doc.Suites, junit.Suite{Name: manifest.DisplayName(o.Source)})
		}
		c := junit.Case{Name: fmt.Sprintf("%s (line %d)", o.Ref(), o.Position.Line), Classname: manifest.DisplayName(o.Source)}
		var denied, other []string
		for _, f := range o.Findings {
			line := findingLine(f)
			switch {
			case f.Action == config.Deny:
				denied = append(denied, line)
			case f.Action != config.Audit || opts.Audit:
				other = append(other, string(f.Action)+" "+line)
			}
		}
		for _, f := range o.Waived {
			other = append(other, fmt.Sprintf("waived %s (reason: %s)", findingLine(f), f.WaiverReason))
		}
		if len(denied) > 0 {
			c.Failure = &junit.Problem{Message: plural(len(denied), "denial", "denials"), Type: "deny", Text: strings.Join(denied, "\n")}
		}
		c.SystemOut = strings.Join(other, "\n")
		doc.Suites[i].Cases = append(doc.Suites[i].Cases, c)
	}
	return junit.Write(w, doc)
}

func findingLine(f lint.Finding) string {
	s := fmt.Sprintf("%d:%d %s %s: %s", f.Line, f.Column, f.RuleID, f.Path, f.Message)
	if f.Fix != "" {
		s += " (fix: " + f.Fix + ")"
	}
	return s
}
