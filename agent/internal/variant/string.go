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
		if i += jsontext.PlainLen(e.in[i:], '"'); i >= len(e.in) {
			break
		}
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

// firstString reads the string at pos in the first pass, and records
// where it ends for the second, with whether its text is its bytes. It
// returns its text, as valid UTF-8 (see text).
func (e *Encoder) firstString() ([]byte, error) {
	raw, escaped, ascii, err := e.readString()
	if err != nil {
		return nil, err
	}
	same := !escaped && (ascii || utf8.Valid(raw))
	if same {
		e.ends = append(e.ends, e.pos)
	} else {
		e.ends = append(e.ends, -e.pos)
	}
	return e.text(raw, same), nil
}

// skipString moves past the string at pos in the second pass, which the
// first pass read.
func (e *Encoder) skipString() {
	e.pos = abs(e.ends[e.nextStr])
	e.nextStr++
}

// secondString moves past the string at pos in the second pass, which the
// first pass read, and returns its text.
func (e *Encoder) secondString() []byte {
	end := e.ends[e.nextStr]
	e.nextStr++
	raw := e.in[e.pos+1 : abs(end)-1]
	e.pos = abs(end)
	return e.text(raw, end > 0)
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

// abs is the magnitude of an end that [Encoder.firstString] recorded.
func abs(end int) int { return max(end, -end) }
