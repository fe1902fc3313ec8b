package sandbox

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/gobwas/glob"
)

// regexpSeeds are patterns whose matches depend on what comes before the
// position a search starts from (^, \A, \b, \B, multi-line ^), empty
// matches, groups that take no part, flags, and a \Q without \E.
var regexpSeeds = []struct{ pattern, text string }{
	{`^a`, "aaa\naa"}, {`(?m)^a`, "aaa\naa"}, {`\Aa`, "aaa"}, {`\ba`, "a a aa ba"}, {`\Ba`, "a a aa ba"},
	{`a*`, "baaac"}, {`x*`, "abc"}, {`(a)|(b)`, "abab"}, {`(?i)AB`, "ab Ab aB"}, {`a$`, "aa\na"}, {`(?m)a$`, "aa\na"},
	{`\Qa.b`, "a.b axb"}, {`\Qa)\E|b`, "a)b"}, {`(?U)a+`, "aaa"}, {`(?s).`, "a\nb"}, {`é|\x{FFFD}`, "é\xff\xe2\x82a"},
	{``, "añb"}, {`(?P<x>a)(b)?`, "aab"}, {`[[:alpha:]]+`, "ab12cd"}, {`\d+`, "a1b22c333"},
}

func TestStoppableRegexpAgreesWithRegexp(t *testing.T) {
	for _, s := range regexpSeeds {
		checkAgainstRegexp(t, s.pattern, s.text, -1)
		checkAgainstRegexp(t, s.pattern, s.text, 2)
	}
}

// FuzzStoppableRegexpAgreesWithRegexp: whatever the pattern and the text,
// the stoppable forms answer as the regexp package does.
func FuzzStoppableRegexpAgreesWithRegexp(f *testing.F) {
	for _, s := range regexpSeeds {
		f.Add(s.pattern, s.text, -1)
	}
	f.Fuzz(func(t *testing.T, pattern, text string, n int) {
		if len(pattern) > 64 || len(text) > 256 {
			t.Skip("too large to be quick")
		}
		checkAgainstRegexp(t, pattern, text, n%8)
	})
}

func checkAgainstRegexp(t *testing.T, pattern, text string, n int) {
	t.Helper()
	re, err := regexp.Compile(pattern)
	sr, serr := compileStoppable(pattern)
	if (err == nil) != (serr == nil) {
		t.Fatalf("%#q: regexp.Compile %v, compileStoppable %v", pattern, err, serr)
	}
	if err != nil {
		if err.Error() != serr.Error() {
			t.Fatalf("%#q: errors differ: %v, %v", pattern, err, serr)
		}
		return
	}
	if sr.after == nil {
		t.Fatalf("%#q: no stoppable form for searches past the start", pattern)
	}
	var never atomic.Bool
	// Texts this small take the quick way (the regexp package's own
	// search); the readers, which larger texts take, are compared too.
	if got, _ := sr.matchReader(text, &never); got != re.MatchString(text) {
		t.Errorf("%#q on %q: matchReader %v, regexp %v", pattern, text, got, !got)
	}
	if got, _ := sr.MatchString(text, &never); got != re.MatchString(text) {
		t.Errorf("%#q on %q: MatchString %v, regexp %v", pattern, text, got, !got)
	}
	want := re.FindAllStringSubmatchIndex(text, n)
	if got, _ := sr.findAllReader(text, n, &never); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("%#q on %q, n=%d: findAllReader\n got %v\nwant %v", pattern, text, n, got, want)
	}
	if got, _ := sr.FindAllStringSubmatchIndex(text, n, &never); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("%#q on %q, n=%d: FindAllStringSubmatchIndex\n got %v\nwant %v", pattern, text, n, got, want)
	}
	split, _ := sr.Split(text, &never)
	if want := re.Split(text, -1); !slices.Equal(split, want) {
		t.Errorf("%#q on %q: Split %q, want %q", pattern, text, split, want)
	}
}

func TestAStoppedRegexpStopsAtOnce(t *testing.T) {
	sr, err := compileStoppable(`(a?){50}b`)
	if err != nil {
		t.Fatal(err)
	}
	var stopped atomic.Bool
	stopped.Store(true)
	text := string(make([]byte, 1<<20))
	if _, err := sr.MatchString(text, &stopped); !errors.Is(err, errStopped) {
		t.Errorf("MatchString: %v, want errStopped", err)
	}
	if _, err := sr.FindAllStringSubmatchIndex(text, -1, &stopped); !errors.Is(err, errStopped) {
		t.Errorf("FindAllStringSubmatchIndex: %v, want errStopped", err)
	}
	if _, err := sr.Split(text, &stopped); !errors.Is(err, errStopped) {
		t.Errorf("Split: %v, want errStopped", err)
	}
}

// globSeeds cover every token of the glob syntax.
var globSeeds = []struct {
	pattern, text string
	dots          bool
}{
	{"*.com", "a.b.com", true}, {"*.com", "a.b.com", false}, {"**.com", "a.b.com", true}, {"a?c", "a.c", true},
	{"a?c", "a.c", false}, {"[a-c]x", "bx", false}, {"[!a-c]x", ".x", true}, {"[abc]*", "c.d", true},
	{"{a,b*,}c", "bxc", false}, {"{a,{b,c}d}", "cd", false}, {`\*\?`, "*?", false}, {"a,b}", "a,b}", false},
	{"[!a]", "\uFFFD", false}, {"*{*0,}", "1", false}, {"é?", "éè", false}, {"", "", false}, {"*", "", true},
}

func TestStoppableGlobAgreesWithGlob(t *testing.T) {
	for _, s := range globSeeds {
		checkAgainstGlob(t, s.pattern, s.text, s.dots)
	}
}

// FuzzStoppableGlobAgreesWithGlob: whatever the pattern and the text, the
// translated glob answers as the glob library does.
func FuzzStoppableGlobAgreesWithGlob(f *testing.F) {
	for _, s := range globSeeds {
		f.Add(s.pattern, s.text, s.dots)
	}
	f.Fuzz(func(t *testing.T, pattern, text string, dots bool) {
		if len(pattern) > 32 || len(text) > 64 {
			t.Skip("too large to be quick")
		}
		if !utf8.ValidString(pattern) || !utf8.ValidString(text) {
			t.Skip("glob.match leaves text that is not UTF-8 to the glob library")
		}
		if dots && strings.Count(pattern, "*") > 4 {
			t.Skip("the glob library backtracks over separator-limited stars: too slow to compare with")
		}
		checkAgainstGlob(t, pattern, text, dots)
	})
}

func checkAgainstGlob(t *testing.T, pattern, text string, dots bool) {
	t.Helper()
	var separators []rune
	if dots {
		separators = []rune{'.'}
	}
	g, err := glob.Compile(pattern, separators...)
	sr, ok, serr := compileStoppableGlob(pattern, separators)
	if (err == nil) != (serr == nil) {
		t.Fatalf("%#q: glob.Compile %v, compileStoppableGlob %v", pattern, err, serr)
	}
	if err != nil {
		return
	}
	if !ok {
		t.Fatalf("%#q: no regular expression for it", pattern)
	}
	var never atomic.Bool
	if got, _ := sr.MatchString(text, &never); got != g.Match(text) {
		t.Errorf("%#q (%s) on %q with separators %q: %v, glob %v", pattern, sr.re, text, string(separators), got, !got)
	}
	if got, _ := sr.matchReader(text, &never); got != g.Match(text) {
		t.Errorf("%#q (%s) on %q with separators %q: matchReader %v, glob %v", pattern, sr.re, text, string(separators), got, !got)
	}
}
