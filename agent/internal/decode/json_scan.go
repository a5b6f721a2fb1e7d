package decode

import (
	"math"
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
)

// JSON scanning: the tokens of a document (whitespace, strings, numbers,
// literals, the punctuation between members and elements) and the passing
// over of whole values, without building anything. The JSON decoder
// (json.go) drives a jsonScanner through the objects a schema describes,
// and package changelog walks change-event envelopes with a [Scanner].

// maxDepth bounds the nesting of skipped JSON values, so that hostile input
// cannot exhaust the stack; deeper documents are malformed.
const maxDepth = 1000

// jsonScanner reads the tokens of a JSON document at pos in data: it
// validates and passes over them, and reads keys and strings, as Jackson
// does with the parser options Spark gives it. The JSON decoder embeds one
// and reads values through it; [Scanner] wraps one for package changelog.
type jsonScanner struct {
	data []byte
	pos  int
	// singleQuotes accepts 'single-quoted' strings and names, nonNumeric
	// the numbers NaN, Infinity, +Infinity and -Infinity, as Spark's
	// allowSingleQuotes and allowNonNumericNumbers.
	singleQuotes, nonNumeric bool
	// scratch holds unescaped text that is not kept (keys, timestamps).
	scratch []byte
}

// isQuote reports whether c opens a string: a double quote, or a single
// quote when single quotes are allowed.
func (sc *jsonScanner) isQuote(c byte) bool {
	return c == '"' || (c == '\'' && sc.singleQuotes)
}

// ws skips JSON whitespace. Every whitespace byte is at most a space, so a
// token's first byte, the usual next byte, ends the loop after one
// comparison.
func (sc *jsonScanner) ws() {
	for sc.pos < len(sc.data) && sc.data[sc.pos] <= ' ' {
		switch sc.data[sc.pos] {
		case ' ', '\t', '\n', '\r':
			sc.pos++
		default:
			return
		}
	}
}

// key parses `"name"` and the colon after it, and returns the unescaped
// name (valid until the next key).
func (sc *jsonScanner) key() ([]byte, bool) {
	sc.ws()
	if sc.pos >= len(sc.data) || !sc.isQuote(sc.data[sc.pos]) {
		return nil, false
	}
	raw, esc, ok := sc.str()
	if !ok {
		return nil, false
	}
	if esc {
		sc.scratch = jsontext.AppendUnescaped(sc.scratch[:0], raw)
		raw = sc.scratch
	}
	sc.ws()
	if sc.pos >= len(sc.data) || sc.data[sc.pos] != ':' {
		return nil, false
	}
	sc.pos++
	sc.ws()
	return raw, true
}

// knownKey consumes `"name"` and the colon after it when the document
// spells the key so at sc.pos, double-quoted and plain (see
// [jsontext.IsPlain]): the bytes are compared where [jsonScanner.key]
// would scan a string and unescape it. Otherwise it consumes nothing but
// whitespace and returns false.
func (sc *jsonScanner) knownKey(name string) bool {
	sc.ws()
	start := sc.pos
	end := start + 1 + len(name)
	if end >= len(sc.data) || sc.data[start] != '"' || sc.data[end] != '"' || string(sc.data[start+1:end]) != name {
		return false
	}
	sc.pos = end + 1
	sc.ws()
	if sc.pos >= len(sc.data) || sc.data[sc.pos] != ':' {
		sc.pos = start
		return false
	}
	sc.pos++
	sc.ws()
	return true
}

// next consumes the ',' between members or elements or the closing byte
// end; false means neither came.
func (sc *jsonScanner) next(end byte) bool {
	sc.ws()
	if sc.pos >= len(sc.data) {
		return false
	}
	c := sc.data[sc.pos]
	sc.pos++
	return c == ',' || c == end
}

// literal consumes lit (true, false, null).
func (sc *jsonScanner) literal(lit string) bool {
	if len(sc.data)-sc.pos < len(lit) || string(sc.data[sc.pos:sc.pos+len(lit)]) != lit {
		return false
	}
	sc.pos += len(lit)
	return true
}

// numberEnd returns the end of the JSON number starting at s[i], or -1.
func numberEnd(s []byte, i int) int {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return -1
	}
	if i < len(s) && s[i] == '.' {
		i++
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return -1
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return -1
		}
	}
	return i
}

// maxNumberDigits is how many digits (of the integer part, fraction and
// exponent together) a number of a document may have: Jackson's default
// maximum number length, which Spark keeps. Jackson refuses a longer number
// as it reads it, so Spark finds the whole record corrupt, wherever the
// number is and whatever the type of its field.
const maxNumberDigits = 1000

// numberTokenEnd is [numberEnd] for a number of a document, -1 also when
// it has more than maxNumberDigits digits.
func numberTokenEnd(s []byte, i int) int {
	end := numberEnd(s, i)
	if end-i <= maxNumberDigits {
		return end
	}
	digits := 0
	for _, c := range s[i:end] {
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	if digits > maxNumberDigits {
		return -1
	}
	return end
}

// str scans the string at sc.pos (its opening quote, double or single) and
// returns its raw content, whether [jsontext.AppendUnescaped] must rewrite
// it (it holds escapes or invalid UTF-8, which Spark's UTF-8 reader
// replaces), and false if it is malformed: an unterminated string, a
// control character or a bad escape.
func (sc *jsonScanner) str() (raw []byte, esc, ok bool) {
	s := sc.data
	quote := s[sc.pos]
	i := sc.pos + 1
	start := i
	for i < len(s) {
		if i += jsontext.PlainLen(s[i:], quote); i >= len(s) {
			break
		}
		c := s[i]
		switch {
		case c == quote:
			sc.pos = i + 1
			return s[start:i], esc, true
		case c == '\\':
			esc = true
			n := jsontext.EscapeLen(s[i:], sc.singleQuotes)
			if n == 0 {
				return nil, false, false
			}
			i += n
		case c < 0x20:
			return nil, false, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n <= 1 {
				esc = true
			}
			i += n
		}
	}
	return nil, false, false
}

// skip validates and passes over the value at sc.pos.
func (sc *jsonScanner) skip(depth int) bool {
	sc.ws()
	if sc.pos >= len(sc.data) || depth > maxDepth {
		return false
	}
	if _, n := sc.nonNumber(); n > 0 {
		sc.pos += n
		return true
	}
	switch c := sc.data[sc.pos]; {
	case sc.isQuote(c):
		_, _, ok := sc.str()
		return ok
	case c == 't':
		return sc.literal("true")
	case c == 'f':
		return sc.literal("false")
	case c == 'n':
		return sc.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		end := numberTokenEnd(sc.data, sc.pos)
		sc.pos = max(end, sc.pos)
		return end >= 0
	case c == '[':
		sc.pos++
		sc.ws()
		if sc.pos < len(sc.data) && sc.data[sc.pos] == ']' {
			sc.pos++
			return true
		}
		for {
			if !sc.skip(depth+1) || !sc.next(']') {
				return false
			}
			if sc.data[sc.pos-1] == ']' {
				return true
			}
		}
	case c == '{':
		sc.pos++
		sc.ws()
		if sc.pos < len(sc.data) && sc.data[sc.pos] == '}' {
			sc.pos++
			return true
		}
		for {
			if _, ok := sc.key(); !ok || !sc.skip(depth+1) || !sc.next('}') {
				return false
			}
			if sc.data[sc.pos-1] == '}' {
				return true
			}
		}
	}
	return false
}

// nonNumber matches the numbers Spark's allowNonNumericNumbers accepts at
// sc.pos (NaN, Infinity, +Infinity, -Infinity): their value and length, 0
// when none is there or the option is off.
func (sc *jsonScanner) nonNumber() (float64, int) {
	rest := sc.data[sc.pos:]
	if !sc.nonNumeric || (rest[0] != 'N' && rest[0] != 'I' && rest[0] != '+' && (rest[0] != '-' || len(rest) < 2 || rest[1] != 'I')) {
		return 0, 0
	}
	for _, nn := range nonNumbers {
		if len(rest) >= len(nn.text) && string(rest[:len(nn.text)]) == nn.text {
			return nn.value, len(nn.text)
		}
	}
	return 0, 0
}

// nonNumbers are the unquoted numbers of allowNonNumericNumbers.
var nonNumbers = []struct {
	text  string
	value float64
}{{"NaN", math.NaN()}, {"Infinity", math.Inf(1)}, {"+Infinity", math.Inf(1)}, {"-Infinity", math.Inf(-1)}}

// Scanner walks JSON objects and arrays member by member without decoding
// them, as the JSON decoder scans them (double-quoted strings only, no
// NaN or Infinity): package changelog reads change-event envelopes with
// it. It is reused across calls and is not safe for concurrent use.
type Scanner struct {
	s jsonScanner
}

// Members calls fn for each member of the JSON object at the start of
// data (data[0] is '{'), with the member's unescaped key, valid during the
// call, and the raw text of its value, a sub-slice of data; fn may use the
// Scanner on other text. It returns the index in data after the object,
// or -1 when the object is malformed JSON; an error of fn stops it and is
// returned, with -1. What follows the object is not read.
func (s *Scanner) Members(data []byte, fn func(key, val []byte) error) (int, error) {
	j := &s.s
	defer func() { j.data = nil }() // do not keep the caller's bytes
	j.data, j.pos = data, 1
	j.ws()
	if j.pos < len(data) && data[j.pos] == '}' {
		return j.pos + 1, nil
	}
	for {
		key, ok := j.key()
		if !ok {
			return -1, nil
		}
		start := j.pos
		if !j.skip(1) {
			return -1, nil
		}
		pos := j.pos
		if err := fn(key, data[start:pos]); err != nil {
			return -1, err
		}
		j.data, j.pos = data, pos
		if !j.next('}') {
			return -1, nil
		}
		if data[j.pos-1] == '}' {
			return j.pos, nil
		}
	}
}

// Elements calls fn for the raw text of each element of the JSON array at
// the start of data (data[0] is '['), a sub-slice of data; fn may use the
// Scanner on other text. It returns false when the array is malformed
// JSON, and an error of fn, which stops it.
func (s *Scanner) Elements(data []byte, fn func(val []byte) error) (bool, error) {
	j := &s.s
	defer func() { j.data = nil }()
	j.data, j.pos = data, 1
	j.ws()
	if j.pos < len(data) && data[j.pos] == ']' {
		return true, nil
	}
	for {
		j.ws()
		start := j.pos
		if !j.skip(1) {
			return false, nil
		}
		pos := j.pos
		if err := fn(data[start:pos]); err != nil {
			return false, err
		}
		j.data, j.pos = data, pos
		if !j.next(']') {
			return false, nil
		}
		if data[j.pos-1] == ']' {
			return true, nil
		}
	}
}
