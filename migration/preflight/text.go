package preflight

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
)

// textWidth is where details wrap.
const textWidth = 100

// WriteText writes the report for people: each finding with its objects
// and fix, then a verdict.
func WriteText(w io.Writer, r *Report) error {
	b := bufio.NewWriter(w)
	if r.From.Version != "" {
		fmt.Fprintf(b, "karpgate preflight for Karpenter %s -> %s, %s\n", r.From.Version, r.Target, r.Source)
	} else {
		fmt.Fprintf(b, "karpgate preflight for Karpenter %s (the release running is unknown), %s\n", r.Target, r.Source)
	}
	fmt.Fprintf(b, "read %s\n", readSummary(r.Read))
	for _, f := range r.Findings {
		fmt.Fprintf(b, "\n%-4s  %s  %s: %s\n", f.Severity, f.ID, f.Check, f.Title)
		wrap(b, f.Detail, "      ")
		for i, o := range f.Objects {
			if i == maxTextObjects {
				fmt.Fprintf(b, "      ... and %d more (-o json lists every one)\n", len(f.Objects)-i)
				break
			}
			line := "      - " + o.Kind + "/" + o.Name
			if o.Where != "" {
				line += " (" + o.Where + ")"
			}
			if o.Note != "" {
				line += ": " + o.Note
			}
			fmt.Fprintln(b, line)
		}
		for _, e := range f.Fix.Edits {
			wrap(b, "edit: "+e, "      ")
		}
		for i, c := range f.Fix.Commands {
			if i == maxTextObjects {
				fmt.Fprintf(b, "      ... and %d more commands (-o json lists every one)\n", len(f.Fix.Commands)-i)
				break
			}
			fmt.Fprintf(b, "      fix: %s\n", c)
		}
	}
	fmt.Fprintf(b, "\n%d deny, %d warn, %d info: %s\n", r.Summary.Deny, r.Summary.Warn, r.Summary.Info, verdict(r))
	return b.Flush()
}

func verdict(r *Report) string {
	if r.Summary.Ready {
		return "ready for Karpenter " + r.Target
	}
	return "not ready for Karpenter " + r.Target + " (fix the deny findings, then run preflight again)"
}

func readSummary(read map[string]int) string {
	order := []string{"CustomResourceDefinition", "NodePool", "NodeClaim", "EC2NodeClass", "WebhookConfiguration"}
	known := map[string]bool{}
	var parts []string
	for _, k := range order {
		known[k] = true
		parts = append(parts, pluralKind(read[k], k))
	}
	var rest []string
	for k := range read {
		if !known[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		parts = append(parts, pluralKind(read[k], k))
	}
	return strings.Join(parts, ", ")
}

// wrap writes text in lines of at most textWidth, each after indent.
func wrap(w io.Writer, text, indent string) {
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > textWidth {
			fmt.Fprintln(w, line)
			line = indent + "  "
		}
		if len(line) > len(strings.TrimRight(line, " ")) || line == indent {
			line += word
		} else {
			line += " " + word
		}
	}
	if strings.TrimSpace(line) != "" {
		fmt.Fprintln(w, line)
	}
}
