package twin

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"
)

// helperPrograms compiles each generated helper as the API server's CEL
// environment of the oldest supported version compiles a new expression.
var helperPrograms = sync.OnceValues(func() (map[string]cel.Program, error) {
	env, err := environment.MustBaseEnvSet(version.MajorMinor(1, 29)).Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        []cel.EnvOption{cel.Variable("s", cel.StringType)},
	})
	if err != nil {
		return nil, err
	}
	e, err := env.Env(environment.NewExpressions)
	if err != nil {
		return nil, err
	}
	x := &expander{helpers: generatedHelpers()}
	out := map[string]cel.Program{}
	for _, name := range []string{"goQuote", "lower", "oneLine"} {
		expr, err := x.expand("@" + name + "(s)")
		if err != nil {
			return nil, err
		}
		ast, iss := e.Compile(expr)
		if iss.Err() != nil {
			return nil, iss.Err()
		}
		if out[name], err = e.Program(ast); err != nil {
			return nil, err
		}
	}
	return out, nil
})

func evalHelper(t testing.TB, name, s string) string {
	t.Helper()
	progs, err := helperPrograms()
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := progs[name].Eval(map[string]any{"s": s})
	if err != nil {
		t.Fatalf("@%s(%q): %v", name, s, err)
	}
	return v.Value().(string)
}

// samples reach each branch of the helpers: printable text, the seven
// escapes, quotes and backslashes, control characters, non-printable runes
// of two, three and four UTF-8 bytes, spaces beyond ASCII, and the runes
// that lower into ASCII.
var samples = []string{
	"", "al2023@latest", `say "hi" \ there`, "tab\there\nnewline", "\a\b\f\v\r",
	"\x00\x01\x1f\x7f", "\u0080\u009f\u00a0\u00ad", "\u200b\u2028\u2029\u202f\ufeff", "\U000e0001\U0010ffff",
	"\u212a\u0130latest", "ÉTÉ ſ K", "日本語", "emoji 😀", "\u3000ideographic\u3000space",
}

func TestGoQuoteIsGoPercentQ(t *testing.T) {
	for _, s := range samples {
		if got, want := evalHelper(t, "goQuote", s), strconv.Quote(s); got != want {
			t.Errorf("@goQuote(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestLowerAgreesWithToLowerAgainstASCII(t *testing.T) {
	for _, s := range append(samples, "LATEST", "BottleRocKet", "Wİndows2019") {
		got, want := evalHelper(t, "lower", s), strings.ToLower(s)
		if isASCII(want) && got != want {
			t.Errorf("@lower(%q) = %q, want %q", s, got, want)
		}
		if !isASCII(want) && isASCII(got) {
			t.Errorf("@lower(%q) = %q is ASCII though strings.ToLower gives %q", s, got, want)
		}
	}
}

func TestOneLineIsFieldsJoined(t *testing.T) {
	for _, s := range append(samples, "  a \t b\u00a0c\u2003 ", "\n") {
		if got, want := evalHelper(t, "oneLine", s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("@oneLine(%q) = %q, want %q", s, got, want)
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// FuzzGeneratedHelpers compares the generated helpers with the Go they
// stand for, on any valid UTF-8 string (what a JSON object can hold).
func FuzzGeneratedHelpers(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		if got, want := evalHelper(t, "goQuote", s), strconv.Quote(s); got != want {
			t.Errorf("@goQuote(%q) = %s, want %s", s, got, want)
		}
		if got, want := evalHelper(t, "oneLine", s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("@oneLine(%q) = %q, want %q", s, got, want)
		}
		if got, want := evalHelper(t, "lower", s), strings.ToLower(s); isASCII(want) && got != want {
			t.Errorf("@lower(%q) = %q, want %q", s, got, want)
		}
	})
}
