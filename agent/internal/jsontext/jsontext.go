// Package jsontext reads and writes the text of JSON strings as Spark does.
//
// Spark parses JSON with Jackson over Java's UTF-8 decoder and writes the
// strings it parsed with Java's UTF-8 encoder, so the text a Spark table
// holds differs from the JSON input in three ways that this package
// reproduces: escapes are resolved (a UTF-16 surrogate pair written as two
// \u escapes is one character), a \u escape of a surrogate that is not half
// of a pair becomes '?', and bytes that are not valid UTF-8 become U+FFFD,
// one for each run Java's decoder replaces. The decoder, the VARIANT encoder
// and schema inference all use it, so a key or a value reads the same
// everywhere.
//
// The functions append to a caller's buffer and allocate only when it must
// grow.
package jsontext

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendFloat appends f, a float of bits 32 or 64, as a JSON number in
// strconv's format fmt ('g' or 'e', the shortest digits that read back the
// same), and NaN and ±Inf, which JSON has no number for, as the strings
// "NaN", "Infinity" and "-Infinity", as Jackson writes them for Spark.
func AppendFloat(dst []byte, f float64, fmt byte, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, f, fmt, -1, bits)
}

// AppendUnescaped appends the text of raw, the bytes between a JSON string's
// quotes, to dst and returns the extended slice. The text is always valid
// UTF-8: escapes are resolved and broken text replaced as Spark does (see
// the package doc). \' stands for a quote, as in Jackson with single quotes
// allowed.
//
// Callers pass strings they have checked, where every backslash starts a
// valid escape; in unchecked input a backslash that does not stands for
// itself.
func AppendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		j := i
		for j < len(raw) && raw[j] != '\\' && raw[j] < utf8.RuneSelf {
			j++
		}
		dst = append(dst, raw[i:j]...)
		if i = j; i == len(raw) {
			break
		}
		if raw[i] >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
				n = InvalidLen(raw[i:])
			} else {
				dst = append(dst, raw[i:i+n]...)
			}
			i += n
			continue
		}
		n := 0 // the length of the escape at i, 0 if it is not one
		if i+1 < len(raw) {
			n = 2
			switch c := raw[i+1]; c {
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
			case '"', '\\', '/', '\'':
				dst = append(dst, c)
			case 'u':
				var r rune
				if r, n = unicodeEscape(raw[i:]); n > 0 {
					dst = utf8.AppendRune(dst, r)
				}
			default:
				n = 0
			}
		}
		if n == 0 { // not a valid escape: the backslash stands for itself
			dst = append(dst, '\\')
			n = 1
		}
		i += n
	}
	return dst
}

// IsPlain reports whether s is spelled in JSON by its own bytes between
// double quotes, with nothing a reader unescapes or replaces: valid UTF-8
// with no double quote, backslash or control character. A plain key
// matches a document's key when their bytes are equal.
func IsPlain(s string) bool {
	for _, c := range []byte(s) {
		if c == '"' || c == '\\' || c < 0x20 {
			return false
		}
	}
	return utf8.ValidString(s)
}

// PlainLen returns how many bytes at the start of s a string scanner may
// pass over without looking at them: ASCII bytes that are neither quote
// (the string's closing quote), a backslash nor a control character. It
// looks at eight bytes at a time and stops within eight bytes of the end of
// s, where the scanner's own loop takes over.
func PlainLen(s []byte, quote byte) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if m := special(binary.LittleEndian.Uint64(s[i:]), quote); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	return i
}

// special returns the high bits of the bytes of x, eight bytes of text
// read little-endian, that are at least 0x80, below 0x20, quote or a
// backslash. Each term may also set the bit of a byte after one it rightly
// sets (a borrow carries into the next byte), never before, so the lowest
// bit set is exact.
func special(x uint64, quote byte) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (x | (x-ones*0x20)&^x | hasZero(x^(ones*uint64(quote))) | hasZero(x^(ones*'\\'))) & highs
}

// hasZero sets the high bit of a byte of x that is zero (see special).
func hasZero(x uint64) uint64 { return (x - 0x0101010101010101) &^ x }

// EscapeLen returns the length of the valid escape at the start of b (its
// backslash), or 0 if it is not one. singleQuote makes \' an escape, as
// Jackson does when single quotes are allowed.
func EscapeLen(b []byte, singleQuote bool) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case '\'':
		if singleQuote {
			return 2
		}
	case 'u':
		if Hex4(b[2:]) >= 0 {
			return 6
		}
	}
	return 0
}

// unicodeEscape returns the character of the \u escape at the start of b and
// its length: 12 for a surrogate pair, 6 for any other escape, whose lone
// surrogate becomes '?' as Java's UTF-8 encoder writes it, or 0 if b does
// not start with four hex digits after the \u.
func unicodeEscape(b []byte) (rune, int) {
	r := rune(Hex4(b[2:]))
	switch {
	case r < 0:
		return 0, 0
	case !utf16.IsSurrogate(r):
		return r, 6
	}
	if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
		if pair := utf16.DecodeRune(r, rune(Hex4(b[8:]))); pair != utf8.RuneError {
			return pair, 12
		}
	}
	return '?', 6
}

// AppendValidUTF8 appends s to dst with the bytes that are not valid UTF-8
// replaced by U+FFFD, one for each run Java's UTF-8 decoder replaces (see
// [InvalidLen]), and returns the extended slice. It appends at most
// 3*len(s) bytes.
func AppendValidUTF8(dst, s []byte) []byte {
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		if r == utf8.RuneError && n == 1 {
			n = InvalidLen(s)
		}
		dst = utf8.AppendRune(dst, r)
		s = s[n:]
	}
	return dst
}

// InvalidLen returns how many bytes at the start of b, which does not begin
// with valid UTF-8, Java's UTF-8 decoder replaces with one U+FFFD: the lead
// byte of a 3- or 4-byte sequence takes the continuation bytes that may
// follow it (so a truncated sequence, or a surrogate encoded in 3 bytes, is
// one replacement); any other byte is replaced on its own. Bytes past the
// end of b count as no continuation, which is what Java does at the end of
// its input and when a string's closing quote follows.
func InvalidLen(b []byte) int {
	cont := func(i int) bool { return i < len(b) && b[i]&0xc0 == 0x80 }
	if len(b) == 0 {
		return 0
	}
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

// Hex4 returns the value of the four hex digits at the start of b, or -1
// if b is shorter or has another byte there.
func Hex4(b []byte) int {
	if len(b) < 4 {
		return -1
	}
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

// AppendQuoted appends s to dst as a JSON string with Jackson's escapes
// and returns the extended slice: '"' and '\\' are escaped, and so are the
// control characters, with the short forms \b, \t, \n, \f and \r where
// JSON has them and \u00XX otherwise. Other bytes are copied as they are.
func AppendQuoted(dst, s []byte) []byte {
	return append(appendEscaped(append(dst, '"'), s), '"')
}

// AppendQuotedString appends s to dst as a JSON string as [AppendQuoted]
// does, except that each byte of s that is not part of valid UTF-8 becomes
// U+FFFD, so that what it appends is valid UTF-8 whatever s holds.
func AppendQuotedString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for len(s) > 0 {
		valid := 0
		for valid < len(s) {
			if s[valid] < utf8.RuneSelf {
				valid++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[valid:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			valid += size
		}
		dst = appendEscaped(dst, s[:valid])
		if valid < len(s) {
			dst = append(dst, "\ufffd"...)
			valid++
		}
		s = s[valid:]
	}
	return append(dst, '"')
}

// appendEscaped appends s with the escapes of [AppendQuoted].
func appendEscaped[T string | []byte](dst []byte, s T) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c >= 0x20:
			dst = append(dst, c)
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return dst
}

// hexDigits are the digits of Jackson's \u escapes.
const hexDigits = "0123456789ABCDEF"
