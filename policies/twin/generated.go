package twin

import (
	"fmt"
	"strings"
	"unicode"
)

// generatedHelpers are the helpers whose CEL is a table Go already has:
// they are written out here rather than by hand in lib.cel.
func generatedHelpers() map[string]helper {
	return map[string]helper{
		"goQuote": {name: "goQuote", params: []string{"s"}, body: goQuoteCEL()},
		"lower":   {name: "lower", params: []string{"s"}, body: lowerCEL()},
		"oneLine": {name: "oneLine", params: []string{"s"}, body: oneLineCEL()},
		"range":   {name: "range", params: []string{"n"}, body: rangeCEL()},
		"flatten": {name: "flatten", params: []string{"l"}, body: flattenCEL()},
	}
}

// MaxListItems bounds the lists the twins walk by index (@range) and
// concatenate (@flatten): CEL before Kubernetes 1.32 iterates a list
// without its indices, so the twins iterate a literal list of indices.
// The CRDs allow no more: 30 amiSelectorTerms, 50 budgets. A twin's
// findings beyond it are left out of its message, which is then past the
// API server's limit anyway (the rule's static message shows instead).
const MaxListItems = 50

// printable is Go's strconv.IsPrint as a regular expression: letters,
// marks, numbers, punctuation, symbols and the ASCII space.
const printable = `\p{L}\p{M}\p{N}\p{P}\p{S} `

// goQuoteCEL is Go's %q (strconv.Quote) of a valid UTF-8 string, which
// is what Rego's sprintf writes for %q. cel-go's strings.quote agrees
// with it on printable runes and the seven escapes \a \b \f \n \r \t \v,
// which is all most strings hold. Any other rune is written as Go writes
// it: strings.quote of the rune alone tells the seven escapes from the
// rest, which Go writes \x.. below U+0080 and else \u.... or \U........,
// the code point read from the rune's UTF-8 bytes in hex.
func goQuoteCEL() string {
	// _n are the hex digits of the rune's UTF-8 bytes, as numbers.
	codePoint := `[_h.split('').map(_x, '0123456789abcdef'.indexOf(_x))].map(_n,
        size(_n) == 4 ? (_n[0] * 16 + _n[1] - 192) * 64 + _n[2] * 16 + _n[3] - 128
        : size(_n) == 6 ? (_n[0] * 16 + _n[1] - 224) * 4096 + (_n[2] * 16 + _n[3] - 128) * 64 + _n[4] * 16 + _n[5] - 128
        : (_n[0] * 16 + _n[1] - 240) * 262144 + (_n[2] * 16 + _n[3] - 128) * 4096 + (_n[4] * 16 + _n[5] - 128) * 64 + _n[6] * 16 + _n[7] - 128)[0]`
	escape := `_c == '"' ? '\\"' : _c == '\\' ? '\\\\' : _c.matches(r'^[` + printable + `]$') ? _c
    : size(strings.quote(_c)) == 4 ? strings.quote(_c).substring(1, 3)
    : ['%x'.format([_c])].map(_h, size(_h) == 2 ? '\\x' + _h
      : [` + codePoint + `].map(_p, ['%x'.format([_p])].map(_x,
          _p < 65536 ? '\\u' + '0000'.substring(size(_x)) + _x : '\\U' + '00000000'.substring(size(_x)) + _x)[0])[0])[0]`
	return `s.matches(r'^[` + printable + `\x07\x08\x0c\n\r\t\x0b]*$') ? strings.quote(s) :
  '"' + s.split('').map(_c, ` + escape + `).join('') + '"'`
}

// foldsToASCII are the runes above ASCII that unicode.ToLower turns into
// an ASCII letter (the Kelvin sign into k, for one).
func foldsToASCII() []rune {
	var out []rune
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if l := unicode.ToLower(r); l < 0x80 {
			out = append(out, r)
		}
	}
	return out
}

// lowerCEL is strings.ToLower as far as any comparison with an ASCII
// string can tell: lowerAscii, after the runes that lower into ASCII. A
// rune that lowers to another non-ASCII rune stays as it is, so it never
// equals an ASCII string either way. Rego's lower() is strings.ToLower.
func lowerCEL() string {
	var b strings.Builder
	b.WriteString("s")
	for _, r := range foldsToASCII() {
		fmt.Fprintf(&b, ".replace('%c', '%c')", r, unicode.ToLower(r))
	}
	b.WriteString(".lowerAscii()")
	return b.String()
}

// spaces are the runes unicode.IsSpace reports, but ' '.
func spaces() []rune {
	var out []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r != ' ' && unicode.IsSpace(r) {
			out = append(out, r)
		}
	}
	return out
}

// oneLineCEL is strings.Join(strings.Fields(s), " "): the admission webhook
// writes every finding on one line that way, and a
// ValidatingAdmissionPolicy message may not hold a line break.
func oneLineCEL() string {
	var b strings.Builder
	b.WriteString("s")
	for _, r := range spaces() {
		fmt.Fprintf(&b, ".replace('\\u%04x', ' ')", r)
	}
	b.WriteString(".split(' ').filter(_w, _w != '').join(' ')")
	return b.String()
}

// rangeCEL is [0, 1, ..., n-1], for n up to MaxListItems: the numbers
// read from one string literal, which the API server type-checks at once,
// where a list literal of as many numbers costs it a check per element.
func rangeCEL() string {
	items := make([]string, MaxListItems)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	return "'" + strings.Join(items, ",") + "'.split(',').map(_s, int(_s)).filter(_i, _i < n)"
}

// flattenCEL concatenates a list of up to MaxListItems lists.
func flattenCEL() string {
	parts := make([]string, MaxListItems)
	for i := range parts {
		parts[i] = fmt.Sprintf("(size(_l) > %d ? _l[%d] : [])", i, i)
	}
	return "[l].map(_l, " + strings.Join(parts, " + ") + ")[0]"
}
