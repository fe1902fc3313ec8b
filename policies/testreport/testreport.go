package testreport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/karpgate/karpgate/internal/junit"
	"github.com/karpgate/karpgate/policies/verify"
)

// Formats lists the output formats.
var Formats = []string{"text", "json", "junit"}

// Options tune rendering.
type Options struct {
	// Verbose lists passing tests in text, not only failures.
	Verbose bool
	// Timings writes durations; off keeps output byte-stable for goldens.
	Timings bool
}

// Summary counts results.
type Summary struct {
	Total   int `json:"total"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// Summarise counts results.
func Summarise(results []verify.Result) Summary {
	s := Summary{Total: len(results)}
	for _, r := range results {
		switch {
		case r.Skipped:
			s.Skipped++
		case r.Passed:
			s.Passed++
		default:
			s.Failed++
		}
	}
	return s
}

// Write renders results in format.
func Write(w io.Writer, format string, results []verify.Result, opts Options) error {
	switch format {
	case "text":
		return writeText(w, results, opts)
	case "json":
		return writeJSON(w, results, opts)
	case "junit":
		return writeJUnit(w, results, opts)
	}
	return fmt.Errorf("unknown format %q; use one of %s", format, strings.Join(Formats, ", "))
}

func writeText(w io.Writer, results []verify.Result, opts Options) error {
	b := bufio.NewWriter(w)
	for _, r := range results {
		switch {
		case r.Skipped:
			if opts.Verbose {
				fmt.Fprintf(b, "SKIP %s.%s (%s:%d)\n", r.Package, r.Name, r.File, r.Line)
			}
		case r.Passed:
			if opts.Verbose {
				fmt.Fprintf(b, "PASS %s.%s%s\n", r.Package, r.Name, duration(r.Duration, opts))
			}
		default:
			fmt.Fprintf(b, "FAIL %s.%s (%s:%d)%s\n", r.Package, r.Name, r.File, r.Line, duration(r.Duration, opts))
			fmt.Fprintf(b, "     %s\n", r.Error)
			for _, line := range strings.Split(strings.TrimRight(r.Output, "\n"), "\n") {
				if line != "" {
					fmt.Fprintf(b, "     print: %s\n", line)
				}
			}
		}
	}
	s := Summarise(results)
	verdict := "PASS"
	if s.Failed > 0 {
		verdict = "FAIL"
	}
	fmt.Fprintf(b, "%s: %d passed, %d failed, %d skipped (%d tests)\n", verdict, s.Passed, s.Failed, s.Skipped, s.Total)
	return b.Flush()
}

func duration(d time.Duration, opts Options) string {
	if !opts.Timings {
		return ""
	}
	return fmt.Sprintf(" (%s)", d.Round(time.Microsecond))
}

func writeJSON(w io.Writer, results []verify.Result, opts Options) error {
	out := struct {
		Summary Summary         `json:"summary"`
		Tests   []verify.Result `json:"tests"`
	}{Summarise(results), make([]verify.Result, 0, len(results))}
	for _, r := range results {
		if !opts.Timings {
			r.Duration = 0
		}
		out.Tests = append(out.Tests, r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeJUnit(w io.Writer, results []verify.Result, opts Options) error {
	doc := junit.Suites{Name: "karpgate verify"}
	index := map[string]int{}
	for _, r := range results {
		i, ok := index[r.Package]
		if !ok {
			i = len(doc.Suites)
			index[r.Package] = i
			doc.Suites = append(doc.Suites, junit.Suite{Name: r.Package})
		}
		c := junit.Case{Name: r.Name, Classname: r.Package}
		if opts.Timings {
			c.Time = junit.Seconds(r.Duration)
			doc.Suites[i].Time += c.Time
		}
		switch {
		case r.Skipped:
			c.Skipped = &junit.Skipped{}
		case !r.Passed:
			c.Failure = &junit.Problem{Message: r.Error, Type: "fail", Text: fmt.Sprintf("%s:%d", r.File, r.Line)}
		}
		c.SystemOut = r.Output
		doc.Suites[i].Cases = append(doc.Suites[i].Cases, c)
	}
	slices.SortStableFunc(doc.Suites, func(a, b junit.Suite) int { return strings.Compare(a.Name, b.Name) })
	return junit.Write(w, doc)
}
