package schema

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokKind classifies a DDL token.
type tokKind uint8

const (
	tokEOF    tokKind = iota
	tokWord           // keyword, unquoted name or number: [A-Za-z0-9_]+
	tokQuoted         // backquoted name; text is unescaped
	tokString         // string literal; text is unescaped
	tokPunct          // one of < > ( ) , : and, in schema hints, .
)

// token is one lexed token: its kind, its value and the byte range it spans.
type token struct {
	kind     tokKind
	text     string
	off, end int
}

// next lexes the token after the current one into p.tok.
func (p *parser) next() error {
	if err := p.skipSpace(); err != nil {
		return err
	}
	start := p.pos
	if start >= len(p.src) {
		p.tok = token{kind: tokEOF, off: start, end: start}
		return nil
	}
	c := p.src[start]
	switch {
	case isWordByte(c):
		for p.pos < len(p.src) && isWordByte(p.src[p.pos]) {
			p.pos++
		}
		p.tok = token{kind: tokWord, text: p.src[start:p.pos]}
	case strings.IndexByte("<>(),:", c) >= 0 || c == '.' && p.paths:
		p.pos++
		p.tok = token{kind: tokPunct, text: p.src[start:p.pos]}
	case c == '`':
		text, err := p.lexQuoted()
		if err != nil {
			return err
		}
		p.tok = token{kind: tokQuoted, text: text}
	case c == '\'' || c == '"':
		text, err := p.lexString()
		if err != nil {
			return err
		}
		p.tok = token{kind: tokString, text: text}
	default:
		r, _ := utf8.DecodeRuneInString(p.src[start:])
		return p.errorf(start, "unexpected character %s (backquote names that contain characters other than ASCII letters, digits and underscores)",
			strconv.QuoteRune(r))
	}
	p.tok.off, p.tok.end = start, p.pos
	return nil
}

// isWordByte reports whether c can be part of an unquoted word.
func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// skipSpace skips whitespace, "--" line comments and "/* */" block comments,
// which nest as in Spark.
func (p *parser) skipSpace() error {
	for p.pos < len(p.src) {
		rest := p.src[p.pos:]
		switch {
		case strings.IndexByte(" \t\n\r\f\v", rest[0]) >= 0:
			p.pos++
		case strings.HasPrefix(rest, "--"):
			if i := strings.IndexByte(rest, '\n'); i >= 0 {
				p.pos += i + 1
			} else {
				p.pos = len(p.src)
			}
		case strings.HasPrefix(rest, "/*"):
			start, depth := p.pos, 0
			for {
				rest = p.src[p.pos:]
				switch {
				case rest == "":
					return p.errorf(start, "unterminated /* comment")
				case strings.HasPrefix(rest, "/*"):
					depth++
					p.pos += 2
				case strings.HasPrefix(rest, "*/"):
					depth--
					p.pos += 2
				default:
					p.pos++
				}
				if depth == 0 {
					break
				}
			}
		default:
			return nil
		}
	}
	return nil
}

// lexQuoted reads a backquoted name, in which two backquotes stand for one.
func (p *parser) lexQuoted() (string, error) {
	start := p.pos
	var b strings.Builder
	p.pos++
	for {
		i := strings.IndexByte(p.src[p.pos:], '`')
		if i < 0 {
			return "", p.errorf(start, "unterminated backquoted name (a backquote inside a name is written twice)")
		}
		b.WriteString(p.src[p.pos : p.pos+i])
		p.pos += i + 1
		if p.pos < len(p.src) && p.src[p.pos] == '`' {
			b.WriteByte('`')
			p.pos++
			continue
		}
		return b.String(), nil
	}
}

// lexString reads a single- or double-quoted string literal with Spark's
// backslash escapes: \n \t \r \b \0 \Z (Ctrl-Z) \uXXXX, an octal \ooo, \% and
// \_ (kept with their backslash, as Spark does), and a backslash before any
// other character standing for that character.
func (p *parser) lexString() (string, error) {
	start, quote := p.pos, p.src[p.pos]
	var b strings.Builder
	p.pos++
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == quote:
			p.pos++
			return b.String(), nil
		case c != '\\':
			b.WriteByte(c)
			p.pos++
		default:
			if err := p.lexEscape(&b); err != nil {
				return "", err
			}
		}
	}
	return "", p.errorf(start, "unterminated string literal (it starts with %c but never ends with one)", quote)
}

// lexEscape decodes the backslash escape at p.pos into b.
func (p *parser) lexEscape(b *strings.Builder) error {
	start := p.pos
	rest := p.src[p.pos+1:]
	if rest == "" {
		p.pos++
		return nil // the caller reports the unterminated string
	}
	if isOctalEscape(rest) {
		b.WriteRune(rune((rest[0]-'0')<<6 | (rest[1]-'0')<<3 | (rest[2] - '0')))
		p.pos += 4
		return nil
	}
	if s, ok := simpleEscapes[rest[0]]; ok {
		b.WriteString(s)
		p.pos += 2
		return nil
	}
	if rest[0] != 'u' {
		r, n := utf8.DecodeRuneInString(rest)
		b.WriteRune(r)
		p.pos += 1 + n
		return nil
	}
	r, ok := hex4(rest[1:])
	if !ok {
		return p.errorf(start, `invalid escape: \u must be followed by 4 hex digits`)
	}
	p.pos += 6
	if r >= 0xD800 && r < 0xDC00 && strings.HasPrefix(p.src[p.pos:], `\u`) { // a UTF-16 pair
		if low, ok := hex4(p.src[p.pos+2:]); ok && low >= 0xDC00 && low < 0xE000 {
			b.WriteRune((r-0xD800)<<10 | (low - 0xDC00) + 0x10000)
			p.pos += 6
			return nil
		}
	}
	if r >= 0xD800 && r < 0xE000 {
		return p.errorf(start, `invalid escape \u%04X: a lone UTF-16 surrogate is not a character`, r)
	}
	b.WriteRune(r)
	return nil
}

// simpleEscapes maps the character after a backslash to what it stands for.
var simpleEscapes = map[byte]string{'0': "\x00", 'b': "\b", 'n': "\n", 'r': "\r", 't': "\t", 'Z': "\x1a", '%': `\%`, '_': `\_`}

// isOctalEscape reports whether s starts with Spark's octal escape digits
// [0-3][0-7][0-7].
func isOctalEscape(s string) bool {
	return len(s) >= 3 && s[0] >= '0' && s[0] <= '3' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' && s[2] <= '7'
}

// hex4 decodes four hex digits at the start of s.
func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(s[:4], 16, 32)
	return rune(n), err == nil
}
