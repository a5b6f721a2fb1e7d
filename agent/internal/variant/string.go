package variant

import (
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
)

// readString checks the string starting at pos (at its opening quote) and
// moves past it. It returns the bytes between the quotes and whether they
// are its text: they hold no escapes and are valid UTF-8 (see text).
// Control characters below U+0020 must be escaped, as RFC 8259 says; bytes
// that are not valid UTF-8 are accepted here and replaced later.
func (e *Encoder) readString() (raw []byte, same bool, err error) {
	start := e.pos + 1
	high := byte(0)
	escaped := false
	for i := start; i < len(e.in); i++ {
		if i += jsontext.PlainLen(e.in[i:], '"'); i >= len(e.in) {
			break
		}
		c := e.in[i]
		high |= c
		switch {
		case c == '"':
			e.pos = i + 1
			raw = e.in[start:i]
			return raw, !escaped && (high < utf8.RuneSelf || utf8.Valid(raw)), nil
		case c == '\\':
			escaped = true
			switch n := jsontext.EscapeLen(e.in[i:], false); {
			case n > 0:
				i += n - 1
			case i+1 == len(e.in): // the string is unterminated
			case e.in[i+1] == 'u':
				e.pos = i
				return nil, false, e.errorf("invalid \\u escape")
			default:
				e.pos = i
				return nil, false, e.errorf("invalid escape \\%c", e.in[i+1])
			}
		case c < 0x20:
			e.pos = i
			return nil, false, e.errorf("unescaped control character %#02x in a string", c)
		}
	}
	return nil, false, e.errorf("unterminated string")
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
