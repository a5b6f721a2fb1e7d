package variant

import (
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
)

// readString checks the string starting at pos (at its opening quote) and
// moves past it. It returns the bytes between the quotes, whether they hold
// escapes, and whether they are all ASCII. Control characters below U+0020
// must be escaped, as RFC 8259 says; bytes that are not valid UTF-8 are
// accepted here and replaced later.
func (e *Encoder) readString() (raw []byte, escaped, ascii bool, err error) {
	start := e.pos + 1
	high := byte(0)
	for i := start; i < len(e.in); i++ {
		c := e.in[i]
		high |= c
		switch {
		case c == '"':
			e.pos = i + 1
			raw = e.in[start:i]
			return raw, escaped, high < utf8.RuneSelf, nil
		case c == '\\':
			escaped = true
			switch n := jsontext.EscapeLen(e.in[i:], false); {
			case n > 0:
				i += n - 1
			case i+1 == len(e.in): // the string is unterminated
			case e.in[i+1] == 'u':
				e.pos = i
				return nil, false, false, e.errorf("invalid \\u escape")
			default:
				e.pos = i
				return nil, false, false, e.errorf("invalid escape \\%c", e.in[i+1])
			}
		case c < 0x20:
			e.pos = i
			return nil, false, false, e.errorf("unescaped control character %#02x in a string", c)
		}
	}
	return nil, false, false, e.errorf("unterminated string")
}

// decodeString reads the string at pos and returns its text as valid UTF-8:
// the input bytes themselves when they need no change, else the text
// unescaped into e.str as Spark's parse_json reads it (see [jsontext]).
func (e *Encoder) decodeString() ([]byte, error) {
	raw, escaped, ascii, err := e.readString()
	if err != nil {
		return nil, err
	}
	if !escaped && (ascii || utf8.Valid(raw)) {
		return raw, nil
	}
	e.str = jsontext.AppendUnescaped(e.str[:0], raw)
	return e.str, nil
}
