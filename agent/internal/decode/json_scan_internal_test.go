package decode

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
)

// strOracle is what jsonScanner.str must return for the string at pos of
// s, worked out a byte at a time from the definition: the content up to
// the first quote that no escape holds, which must be rewritten when it
// holds an escape or invalid UTF-8; nothing, and not ok, for a control
// character, a bad escape or no closing quote. end is where the scanner
// must stop.
func strOracle(s []byte, pos int, singleQuotes bool) (raw []byte, esc, ok bool, end int) {
	quote := s[pos]
	for i := pos + 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == quote:
			raw = s[pos+1 : i]
			return raw, bytes.IndexByte(raw, '\\') >= 0 || !utf8.Valid(raw), true, i + 1
		case c < 0x20:
			return nil, false, false, 0
		case c == '\\':
			n := jsontext.EscapeLen(s[i:], singleQuotes)
			if n == 0 {
				return nil, false, false, 0
			}
			i += n - 1
		}
	}
	return nil, false, false, 0
}

// checkStr compares the scanner's str on data with the oracle, for each
// quote data may open with.
func checkStr(t *testing.T, data []byte) {
	t.Helper()
	if len(data) == 0 || (data[0] != '"' && data[0] != '\'') {
		return
	}
	sc := jsonScanner{data: data, singleQuotes: data[0] == '\''}
	raw, esc, ok := sc.str()
	wantRaw, wantEsc, wantOK, wantEnd := strOracle(data, 0, sc.singleQuotes)
	if ok != wantOK || !bytes.Equal(raw, wantRaw) || esc != wantEsc || (ok && sc.pos != wantEnd) {
		t.Fatalf("str(%q) = %q, esc %v, ok %v, at %d; want %q, esc %v, ok %v, at %d",
			data, raw, esc, ok, sc.pos, wantRaw, wantEsc, wantOK, wantEnd)
	}
}

// Every byte that ends a run of plain ones (the quote, a backslash, a
// control character, the bytes of a multi-byte or invalid UTF-8 sequence)
// is found at every offset of the eight-byte words the scanner reads, and
// after it, in strings of every length around a word.
func TestStrFindsEverySpecialByte(t *testing.T) {
	specials := [][]byte{{'"'}, {'\''}, {'\\', 'n'}, {'\\', 'u', '0', '0', 'e', '9'}, {'\\', 'x'}, {'\\', '\''}, {0x01}, {0x1f},
		{0x7f}, []byte("é"), []byte("€"), {0xff}, {0xc3}, {0x80}, {' '}, {0x20 - 1 + 0x80}}
	for _, quote := range []byte{'"', '\''} {
		for before := range 20 {
			for _, sp := range specials {
				for after := range 12 {
					data := []byte{quote}
					data = append(data, bytes.Repeat([]byte{'a'}, before)...)
					data = append(data, sp...)
					data = append(data, bytes.Repeat([]byte{'b'}, after)...)
					checkStr(t, data)
					checkStr(t, append(data, quote))
					checkStr(t, append(append(data, quote), "tail after the string"...))
				}
			}
		}
	}
}

// FuzzStr compares the scanner's str with the oracle on any input.
func FuzzStr(f *testing.F) {
	for _, s := range []string{`"plain ascii text"`, `"esc\"aped\\ and \u00e9"`, "\"ctrl\x01\"", `'single \' quoted'`,
		"\"utf8 é € 𝄞\"", "\"bad \xff utf8\"", `"unterminated`, `"a"`, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkStr(t, data)
	})
}
