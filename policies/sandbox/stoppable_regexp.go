package sandbox

import (
	"errors"
	"io"
	"regexp"
	"regexp/syntax"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Go's regular expressions take time proportional to the pattern times the
// text, and finding every match can take that again per match: a pattern
// of a thousand states over a megabyte of text runs for seconds, in one
// call OPA cannot interrupt. But the regexp package can read its text from
// an io.RuneReader, one rune at a time, and a reader can end the text
// early. stoppableRegexp runs a pattern over such a reader, which ends the
// text once the evaluation is stopped: the call then returns within a
// rune's work, its result discarded, and nothing runs on.

// errStopped is a call cut short because its evaluation was stopped.
var errStopped = errors.New("stopped")

// stop is set when the evaluation a builtin call belongs to ends; nil
// never stops (a call outside karpgate's evaluations).
type stop = *atomic.Bool

func stopped(s stop) bool { return s != nil && s.Load() }

// runeText is a string read one rune at a time from pos, ending early once
// stop is set. It decodes as the regexp package decodes a string.
type runeText struct {
	s    string
	pos  int
	stop stop
}

func (t *runeText) ReadRune() (rune, int, error) {
	if t.pos >= len(t.s) || stopped(t.stop) {
		return 0, 0, io.EOF
	}
	r, w := utf8.DecodeRuneInString(t.s[t.pos:])
	t.pos += w
	return r, w, nil
}

// stoppableRegexp is a compiled pattern that can be run so as to stop.
type stoppableRegexp struct {
	re *regexp.Regexp
	// after finds the leftmost match starting at or past a position p > 0
	// when read from the rune before p: `\A(?s:.)(?s:.*?)(pattern)`. The
	// regexp package starts a reader at the beginning of the text, where
	// ^, \A and \b would see no rune before p; reading that rune first
	// gives them the context they have in the whole text, and the lazy
	// .*? is how an unanchored search is defined. Group 1 is the match,
	// the pattern's groups follow. nil when that form does not compile to
	// the same pattern (none is known): the call then runs unstoppable.
	after *regexp.Regexp
	// insts is the size of the compiled program: a match takes at most a
	// step per instruction per rune of text (see quick).
	insts int
}

// quickSteps bounds the work of a call that runs without a reader: the
// regexp package's own search on a string is several times faster than
// one through a reader (9x for a field path), and a call of at most this
// many steps ends within milliseconds anyway, well inside any evaluation's
// time. Most calls the rules make are of a short pattern over a field path
// or a value: they all take the quick way.
const quickSteps = 1 << 20

// newStoppableRegexp is re with the size of its program, which expr (its
// source, already compiled by re) gives.
func newStoppableRegexp(re *regexp.Regexp, expr string) *stoppableRegexp {
	r := &stoppableRegexp{re: re, insts: quickSteps}
	if parsed, err := syntax.Parse(expr, syntax.Perl); err == nil {
		if prog, err := syntax.Compile(parsed.Simplify()); err == nil {
			r.insts = max(len(prog.Inst), 1)
		}
	}
	return r
}

// quick reports whether a search of text needs no reader: at most
// quickSteps steps for one search, and for every match in turn, each of
// which may read the rest of the text again, len(text) searches.
func (r *stoppableRegexp) quick(text string, all bool) bool {
	n := len(text) + 1
	if all {
		return n <= quickSteps/n/r.insts
	}
	return n <= quickSteps/r.insts
}

// stoppableRegexps caches compiled patterns, as OPA does: policies use
// the same few again and again. It is emptied when full.
var stoppableRegexps = struct {
	sync.RWMutex
	m map[string]*stoppableRegexp
}{m: map[string]*stoppableRegexp{}}

// compileStoppable compiles pattern as regexp.Compile does, with the same
// errors.
func compileStoppable(pattern string) (*stoppableRegexp, error) {
	stoppableRegexps.RLock()
	r, ok := stoppableRegexps.m[pattern]
	stoppableRegexps.RUnlock()
	if ok {
		return r, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	r = newStoppableRegexp(re, pattern)
	r.after = compileAfter(pattern)
	stoppableRegexps.Lock()
	defer stoppableRegexps.Unlock()
	if len(stoppableRegexps.m) >= 128 {
		clear(stoppableRegexps.m)
	}
	stoppableRegexps.m[pattern] = r
	return r, nil
}

// compileAfter builds stoppableRegexp.after and checks that its group 1
// parses to the pattern itself: written around the pattern's text, an
// unterminated \Q would swallow the closing parenthesis, so that one is
// tried with \E too.
func compileAfter(pattern string) *regexp.Regexp {
	want, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	shiftGroups(want)
	for _, inner := range []string{pattern, pattern + `\E`} {
		expr := `\A(?s:.)(?s:.*?)(` + inner + `)`
		got, err := syntax.Parse(expr, syntax.Perl)
		if err != nil || got.Op != syntax.OpConcat || len(got.Sub) != 4 {
			continue
		}
		group := got.Sub[3]
		if group.Op != syntax.OpCapture || group.Cap != 1 || !group.Sub[0].Equal(want) {
			continue
		}
		if re, err := regexp.Compile(expr); err == nil {
			return re
		}
	}
	return nil
}

// shiftGroups numbers the capture groups of re one higher, as they are
// inside stoppableRegexp.after.
func shiftGroups(re *syntax.Regexp) {
	if re.Op == syntax.OpCapture {
		re.Cap++
	}
	for _, sub := range re.Sub {
		shiftGroups(sub)
	}
}

// MatchString is regexp.Regexp.MatchString, or errStopped.
func (r *stoppableRegexp) MatchString(s string, stop stop) (bool, error) {
	if r.quick(s, false) {
		return r.re.MatchString(s), nil
	}
	return r.matchReader(s, stop)
}

// matchReader is MatchString through a reader that can stop.
func (r *stoppableRegexp) matchReader(s string, stop stop) (bool, error) {
	matched := r.re.MatchReader(&runeText{s: s, stop: stop})
	if stopped(stop) {
		return false, errStopped
	}
	return matched, nil
}

// FindAllStringSubmatchIndex is regexp.Regexp.FindAllStringSubmatchIndex,
// or errStopped. It walks the text as the regexp package does (its
// allMatches): an empty match right after the previous match is skipped,
// and after an empty match the search moves on one rune.
func (r *stoppableRegexp) FindAllStringSubmatchIndex(s string, n int, stop stop) ([][]int, error) {
	if r.after == nil || r.quick(s, true) {
		return r.re.FindAllStringSubmatchIndex(s, n), nil
	}
	return r.findAllReader(s, n, stop)
}

// findAllReader is FindAllStringSubmatchIndex through readers that can
// stop; r.after must be set.
func (r *stoppableRegexp) findAllReader(s string, n int, stop stop) ([][]int, error) {
	if n < 0 {
		n = len(s) + 1
	}
	var out [][]int
	for pos, prevEnd := 0, -1; len(out) < n && pos <= len(s); {
		m := r.matchFrom(s, pos, stop)
		if stopped(stop) {
			return nil, errStopped
		}
		if m == nil {
			break
		}
		accept := true
		if m[1] == pos {
			if m[0] == prevEnd {
				accept = false
			}
			if pos < len(s) {
				_, w := utf8.DecodeRuneInString(s[pos:])
				pos += w
			} else {
				pos = len(s) + 1
			}
		} else {
			pos = m[1]
		}
		prevEnd = m[1]
		if accept {
			out = append(out, m)
		}
	}
	return out, nil
}

// matchFrom is the leftmost match starting at or after pos, with its
// groups, as offsets into s; nil when there is none.
func (r *stoppableRegexp) matchFrom(s string, pos int, stop stop) []int {
	if pos == 0 {
		return r.re.FindReaderSubmatchIndex(&runeText{s: s, stop: stop})
	}
	// pos is where a rune starts, read from the beginning, so the rune
	// before it reads the same backwards and forwards.
	_, w := utf8.DecodeLastRuneInString(s[:pos])
	start := pos - w
	m := r.after.FindReaderSubmatchIndex(&runeText{s: s, pos: start, stop: stop})
	if m == nil {
		return nil
	}
	m = m[2:]
	for i := range m {
		if m[i] >= 0 {
			m[i] += start
		}
	}
	return m
}

// FindAllStringIndex is regexp.Regexp.FindAllStringIndex, or errStopped.
func (r *stoppableRegexp) FindAllStringIndex(s string, n int, stop stop) ([][]int, error) {
	ms, err := r.FindAllStringSubmatchIndex(s, n, stop)
	for i := range ms {
		ms[i] = ms[i][:2]
	}
	return ms, err
}

// Split is regexp.Regexp.Split(s, -1), or errStopped.
func (r *stoppableRegexp) Split(s string, stop stop) ([]string, error) {
	if len(r.re.String()) > 0 && len(s) == 0 {
		return []string{""}, nil
	}
	matches, err := r.FindAllStringIndex(s, -1, stop)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(matches))
	beg, end := 0, 0
	for _, m := range matches {
		end = m[0]
		if m[1] != 0 {
			out = append(out, s[beg:end])
		}
		beg = m[1]
	}
	if end != len(s) {
		out = append(out, s[beg:])
	}
	return out, nil
}
