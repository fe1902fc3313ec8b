package sandbox

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gobwas/glob"

	"github.com/karpgate/karpgate/test/benchratio"
)

// BenchmarkStoppableRegexp: what reading the text through a reader that
// can stop costs against the regexp package's own string search, for the
// pattern the built-in rules use (KG304, over a field path) and a search
// of every match in 64 KiB.
func BenchmarkStoppableRegexp(b *testing.B) {
	var never atomic.Bool
	for _, bb := range []struct {
		name, pattern, text string
		all                 bool
	}{
		{"match-field-path", `\.reasons\[[0-9]+\]$`, "spec.disruption.budgets[0].reasons[1]", false},
		{"match-64KiB", `(a|b)*c`, strings.Repeat("ab", 32<<10), false},
		{"find-all-64KiB", `\d+`, strings.Repeat("id-1234 ", 8<<10), true},
	} {
		b.Run(bb.name, func(b *testing.B) {
			sr, err := compileStoppable(bb.pattern)
			if err != nil {
				b.Fatal(err)
			}
			subject := func() { _, _ = sr.MatchString(bb.text, &never) }
			baseline := func() { sr.re.MatchString(bb.text) }
			if bb.all {
				subject = func() { _, _ = sr.FindAllStringSubmatchIndex(bb.text, -1, &never) }
				baseline = func() { sr.re.FindAllStringSubmatchIndex(bb.text, -1) }
			}
			benchratio.Benchmark(b, subject, map[string]func(){"x-regexp": baseline})
		})
	}
}

// BenchmarkStoppableGlob: a glob as a stoppable regular expression against
// the glob library, on a host name and on the library's worst case.
func BenchmarkStoppableGlob(b *testing.B) {
	var never atomic.Bool
	for _, bb := range []struct{ name, pattern, text string }{
		{"host", "*.eu-west-?.compute.internal", "ip-10-0-1-2.eu-west-1.compute.internal"},
		{"stars-4KiB", "*a?*a?*a?*b*", strings.Repeat("a", 4<<10)},
	} {
		b.Run(bb.name, func(b *testing.B) {
			sr, _, err := compileStoppableGlob(bb.pattern, []rune{'.'})
			if err != nil {
				b.Fatal(err)
			}
			g := glob.MustCompile(bb.pattern, '.')
			benchratio.Benchmark(b, func() { _, _ = sr.MatchString(bb.text, &never) }, map[string]func(){"x-glob": func() { g.Match(bb.text) }})
		})
	}
}
