package variant

import (
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
)

// readString checks the string at pos (at its opening quote) and returns
// where it ends (after its closing quote), the bytes between the quotes and
// whether they are its text: they hold no escapes and are valid UTF-8 (see
// text). Control characters below U+0020 must be escaped, as RFC 8259
// says; bytes that are not valid UTF-8 are accepted here and replaced
// later.
func (e *Encoder) readString(pos int) (end int, raw []byte, same bool, err error) {
	in := e.in
	start := pos + 1
	high := byte(0)
	escaped := false
	for i := start; i < len(in); i++ {
		if i += jsontext.PlainLen(in[i:], '"'); i >= len(in) {
			break
		}
		c := in[i]
		high |= c
		switch {
		case c == '"':
			raw = in[start:i]
			return i + 1, raw, !escaped && (high < utf8.RuneSelf || utf8.Valid(raw)), nil
		case c == '\\':
			escaped = true
			switch n := jsontext.EscapeLen(in[i:], false); {
			case n > 0:
				i += n - 1
			case i+1 == len(in): // the string is unterminated
			case in[i+1] == 'u':
				return 0, nil, false, e.errorAt(i, "invalid \\u escape")
			default:
				return 0, nil, false, e.errorAt(i, "invalid escape \\%c", in[i+1])
			}
		case c < 0x20:
			return 0, nil, false, e.errorAt(i, "unescaped control character %#02x in a string", c)
		}
	}
	return 0, nil, false, e.errorAt(pos, "unterminated string")
}

// text returns the text of the string whose bytes between the quotes are
// raw: raw itself when same says it needs no change, else the text
// unescaped into e.str as Spark's parse_json reads it (see [jsontext]).
func (e *Encoder) text(raw []byte, same bool) []byte {
	if same {
		return raw
	}
	e.str = jsontext.AppendUnescaped(e.str[:0], raw)
	return e.str
}
