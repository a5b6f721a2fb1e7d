package variant

import (
	"unicode/utf16"
	"unicode/utf8"
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
			if i+1 >= len(e.in) {
				break
			}
			i++
			switch e.in[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(e.in) || hex4(e.in[i+1:i+5]) < 0 {
					e.pos = i - 1
					return nil, false, false, e.errorf("invalid \\u escape")
				}
				i += 4
			default:
				e.pos = i - 1
				return nil, false, false, e.errorf("invalid escape \\%c", e.in[i])
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
// unescaped into e.str.
func (e *Encoder) decodeString() ([]byte, error) {
	raw, escaped, ascii, err := e.readString()
	if err != nil {
		return nil, err
	}
	if !escaped && (ascii || utf8.Valid(raw)) {
		return raw, nil
	}
	e.str = appendUnescaped(e.str[:0], raw)
	return e.str, nil
}

// appendUnescaped appends the text of raw, the checked bytes between a
// string's quotes, to dst, always as valid UTF-8. It resolves escapes and
// replaces broken text as Spark's parse_json does (Spark decodes the input
// with Java's UTF-8 decoder, then encodes the parsed strings with Java's
// UTF-8 encoder): a \u escape of a UTF-16 surrogate that is not half of a
// pair becomes '?', and bytes that are not valid UTF-8 become U+FFFD, one
// for each run that Java's decoder replaces (see invalidLen).
func appendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\':
			i++
			switch raw[i] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := rune(hex4(raw[i+1 : i+5]))
				i += 4
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
						r2 = rune(hex4(raw[i+3 : i+7]))
					}
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						r = pair
						i += 6
					} else {
						r = '?'
					}
				}
				dst = utf8.AppendRune(dst, r)
			default: // '"', '\\' and '/' stand for themselves
				dst = append(dst, raw[i])
			}
			i++
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
				n = invalidLen(raw[i:])
			} else {
				dst = append(dst, raw[i:i+n]...)
			}
			i += n
		}
	}
	return dst
}

// invalidLen returns how many bytes at the start of b, which do not begin
// valid UTF-8, Java's UTF-8 decoder replaces with one U+FFFD: the lead byte
// of a 3- or 4-byte sequence takes the continuation bytes that may follow it
// (so a truncated sequence, or a surrogate encoded in 3 bytes, is one
// replacement); any other byte is replaced on its own. Bytes past the end of
// b count as no continuation, as the string's closing quote is none.
func invalidLen(b []byte) int {
	cont := func(i int) bool { return i < len(b) && b[i]&0xc0 == 0x80 }
	switch b1 := b[0]; {
	case b1 >= 0xe0 && b1 <= 0xef:
		switch {
		case !cont(1) || (b1 == 0xe0 && b[1] < 0xa0): // overlong
			return 1
		case !cont(2):
			return 2
		}
		return 3 // a surrogate: ED A0..BF xx
	case b1 >= 0xf0 && b1 <= 0xf4:
		switch {
		case !cont(1) || (b1 == 0xf0 && b[1] < 0x90) || (b1 == 0xf4 && b[1] > 0x8f):
			return 1
		case !cont(2):
			return 2
		}
		return 3 // the fourth byte is missing
	}
	return 1
}

// hex4 returns the value of four hex digits, or -1 if b has another byte.
func hex4(b []byte) int {
	v := 0
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		v = v<<4 | int(c)
	}
	return v
}
