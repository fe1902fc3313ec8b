package sandbox

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/gobwas/glob"
	"github.com/gobwas/glob/syntax"
)

// glob.match walks a tree of matchers that backtracks over every way its
// stars could split the text: `*a?*a?*a?*a?*a?*a?*b*` over a megabyte of
// a's runs for minutes, in one call. A glob is a regular expression,
// though: globRegexp writes it as one (from the tokens of the glob
// library's own lexer, for the patterns that library accepts), and the
// match runs as a stoppableRegexp, in time proportional to the pattern
// times the text, stopping with its evaluation.

// stoppableGlobs caches translated patterns by pattern and separators.
var stoppableGlobs = struct {
	sync.RWMutex
	m map[string]*stoppableRegexp
}{m: map[string]*stoppableRegexp{}}

// compileStoppableGlob compiles a glob as glob.Compile does, with its
// errors, and translates it; ok is false when the translation does not
// compile, which glob.match then answers itself.
func compileStoppableGlob(pattern string, separators []rune) (r *stoppableRegexp, ok bool, err error) {
	key := pattern + "\x00" + string(separators)
	stoppableGlobs.RLock()
	r, cached := stoppableGlobs.m[key]
	stoppableGlobs.RUnlock()
	if cached {
		return r, true, nil
	}
	if _, err := glob.Compile(pattern, separators...); err != nil {
		return nil, false, err
	}
	expr, ok := globRegexp(pattern, separators)
	if !ok {
		return nil, false, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, false, nil
	}
	r = newStoppableRegexp(re, expr)
	stoppableGlobs.Lock()
	defer stoppableGlobs.Unlock()
	if len(stoppableGlobs.m) >= 128 {
		clear(stoppableGlobs.m)
	}
	stoppableGlobs.m[key] = r
	return r, true, nil
}

// globRegexp is the regular expression that matches what pattern, a glob
// glob.Compile accepted, matches: `*` any run of non-separators, `**` any
// run, `?` one non-separator, `[...]` and `[!...]` a class or a range
// (which may match a separator), `{a,b}` alternatives, the rest literally.
func globRegexp(pattern string, separators []rune) (string, bool) {
	one := `(?s:.)`
	if len(separators) > 0 {
		var b strings.Builder
		b.WriteString("[^")
		for _, r := range separators {
			fmt.Fprintf(&b, `\x{%x}`, r)
		}
		b.WriteString("]")
		one = b.String()
	}
	var b strings.Builder
	b.WriteString(`\A(?:`)
	inClass := false
	lex := syntax.NewLexer(pattern)
	for {
		tok := lex.Next()
		switch tok.Type {
		case syntax.EOF:
			b.WriteString(`)\z`)
			return b.String(), true
		case syntax.Text:
			if !inClass {
				b.WriteString(regexp.QuoteMeta(tok.Data))
				continue
			}
			for _, r := range tok.Data {
				fmt.Fprintf(&b, `\x{%x}`, r)
			}
		case syntax.Any:
			b.WriteString(one + "*")
		case syntax.Super:
			b.WriteString(`(?s:.*)`)
		case syntax.Single:
			b.WriteString(one)
		case syntax.RangeOpen:
			b.WriteString("[")
			inClass = true
		case syntax.Not:
			b.WriteString("^")
		case syntax.RangeLo, syntax.RangeHi:
			for _, r := range tok.Data {
				fmt.Fprintf(&b, `\x{%x}`, r)
			}
		case syntax.RangeBetween:
			b.WriteString("-")
		case syntax.RangeClose:
			b.WriteString("]")
			inClass = false
		case syntax.TermsOpen:
			b.WriteString("(?:")
		case syntax.TermSeparator:
			b.WriteString("|")
		case syntax.TermsClose:
			b.WriteString(")")
		default:
			return "", false
		}
	}
}
