package app

import (
	"fmt"
	"regexp"
	"strings"
)

// The documentation's output blocks say where their text comes from with a
// comment on the line before the opening fence (docs/development.md,
// "Output in the docs"):
//
//	<!-- output: golden disruption/status/testdata/table.golden -->
//	<!-- output: run -->                        the block's `$ karpgate` commands, run from the repository root
//	<!-- output: run in budget/report/testdata -->
//	<!-- output: e2e TestAdmissionDenies -->    asserted by that end-to-end test, which needs a cluster
//
// A line that is `...` alone marks an abridgement: the lines between two
// markers must appear together and in order in the source, and a block that
// neither starts nor ends with one must match the source's first or last
// lines.
var outputMarker = regexp.MustCompile(`^<!-- output: (.*?) -->\s*$`)

// abridged is the line that stands for lines left out of an output block.
const abridged = "..."

// mdBlock is a fenced code block of a Markdown file.
type mdBlock struct {
	line   int    // 1-based line of the opening fence
	source string // what its <!-- output: ... --> comment says, or ""
	lines  []string
}

// fence is an opening or closing code fence as CommonMark reads one: up to
// three spaces, then three or more backticks or tildes.
var fenceLine = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})(.*)$")

// markdownBlocks returns the fenced code blocks of a Markdown file, and an
// error for what would make GitHub render prose as code: a fence that is
// never closed, or a closing fence with text after it (CommonMark does not
// close a block there, so everything up to the next fence becomes code).
func markdownBlocks(data string) ([]mdBlock, []error) {
	var (
		blocks  []mdBlock
		errs    []error
		open    *mdBlock
		fence   string // the opening run of backticks or tildes
		lastTxt string // the line before the current one
	)
	for i, line := range strings.Split(data, "\n") {
		n := i + 1
		m := fenceLine.FindStringSubmatch(line)
		switch {
		case open == nil && m != nil:
			if m[1][0] == '`' && strings.Contains(m[2], "`") {
				break // inline code such as ```x```, not a fence
			}
			open = &mdBlock{line: n}
			fence = m[1]
			if mm := outputMarker.FindStringSubmatch(lastTxt); mm != nil {
				open.source = mm[1]
			}
		case open != nil && m != nil && m[1][0] == fence[0] && len(m[1]) >= len(fence):
			if strings.TrimSpace(m[2]) != "" {
				errs = append(errs, fmt.Errorf("line %d: %q does not close the code block opened on line %d (text after a closing fence keeps it open); put the text on a line of its own", n, line, open.line))
				open.lines = append(open.lines, line)
				break
			}
			blocks = append(blocks, *open)
			open = nil
		case open != nil:
			open.lines = append(open.lines, line)
		case outputMarker.MatchString(lastTxt) && !outputMarker.MatchString(line):
			errs = append(errs, fmt.Errorf("line %d: an output comment must be followed by the code block it describes", n-1))
		}
		lastTxt = line
	}
	if open != nil {
		errs = append(errs, fmt.Errorf("line %d: code block never closed", open.line))
	}
	return blocks, errs
}

// matchAbridged compares an output block with its source, line by line,
// ignoring trailing blanks; `...` lines in the block stand for any number of
// source lines. It returns "" on a match, else what differs.
func matchAbridged(block, source []string) string {
	block = trimLines(block)
	source = trimLines(source)
	var runs [][]string
	var run []string
	for _, l := range block {
		if strings.TrimSpace(l) == abridged {
			runs = append(runs, run)
			run = nil
			continue
		}
		run = append(run, l)
	}
	runs = append(runs, run)
	if len(runs) == 1 {
		if strings.Join(block, "\n") == strings.Join(source, "\n") {
			return ""
		}
		return firstDifference(block, source)
	}
	// runs[0] must start the source, the last run must end it, and those
	// between must follow each other in order.
	at := 0
	for i, r := range runs {
		switch {
		case i == 0:
			if !hasRunAt(source, r, 0) {
				return fmt.Sprintf("the block's first lines are not the source's first lines:\n%s", firstDifference(r, source))
			}
			at = len(r)
		case i == len(runs)-1:
			start := len(source) - len(r)
			if start < at || !hasRunAt(source, r, start) {
				return fmt.Sprintf("the block's last lines are not the source's last lines (end the block with %q if it leaves them out):\n%s", abridged, strings.Join(r, "\n"))
			}
		default:
			found := -1
			for j := at; j+len(r) <= len(source); j++ {
				if hasRunAt(source, r, j) {
					found = j
					break
				}
			}
			if found < 0 {
				return fmt.Sprintf("these lines are not in the source (after line %d) together and in this order:\n%s", at, strings.Join(r, "\n"))
			}
			at = found + len(r)
		}
	}
	return ""
}

func hasRunAt(source, run []string, at int) bool {
	if at < 0 || at+len(run) > len(source) {
		return false
	}
	for i, l := range run {
		if source[at+i] != l {
			return false
		}
	}
	return true
}

// trimLines drops trailing blanks on each line and blank lines at the end.
func trimLines(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, strings.TrimRight(l, " \t\r"))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

func firstDifference(doc, source []string) string {
	for i := 0; i < len(doc) || i < len(source); i++ {
		d, s := "(the block ends)", "(the source ends)"
		if i < len(doc) {
			d = doc[i]
		}
		if i < len(source) {
			s = source[i]
		}
		if d != s || i >= len(doc) || i >= len(source) {
			return fmt.Sprintf("first difference at line %d of the output:\n  docs:   %s\n  source: %s\n--- source, in full:\n%s", i+1, quoteLine(d, i < len(doc)), quoteLine(s, i < len(source)), strings.Join(source, "\n"))
		}
	}
	return ""
}

func quoteLine(line string, present bool) string {
	if !present {
		return line
	}
	return fmt.Sprintf("%q", line)
}
