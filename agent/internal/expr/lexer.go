package expr

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the kind of a token.
type tokKind uint8

const (
	tokEOF tokKind = iota
	// tokIdent is a bare identifier or keyword; text is as written.
	tokIdent
	// tokQuoted is a `backquoted` identifier; text is the name unquoted.
	tokQuoted
	// tokString is a string literal; text is its unescaped value.
	tokString
	// tokInt and tokFloat are numeric literals; text is as written.
	tokInt
	tokFloat
	// tokOp is punctuation or an operator; text is the operator.
	tokOp
)

// token is one lexed token at byte offsets [pos, end) of the source.
type token struct {
	kind     tokKind
	text     string
	pos, end int
}

// describe names the token for a syntax error: "found ...".
func (t token) describe(src string) string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokString:
		return "the string " + shorten(src[t.pos:t.end])
	case tokInt, tokFloat:
		return "the number " + src[t.pos:t.end]
	default:
		return "'" + shorten(src[t.pos:t.end]) + "'"
	}
}

// shorten cuts long text for a message.
func shorten(s string) string {
	const maxShown = 40
	if len(s) <= maxShown {
		return s
	}
	i := maxShown
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

// operators are the lexer's operators, longest first.
var operators = []string{"<=>", "::", "||", "==", "!=", "<>", "<=", ">=",
	"(", ")", ",", ".", "[", "]", ":", "+", "-", "*", "/", "%", "=", "<", ">", "!"}

// lex splits src into tokens, ending with a tokEOF.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for {
		var ok bool
		if i, ok = skipSpace(src, i); !ok {
			return nil, &Error{Src: src, Pos: i, Msg: "unterminated /* comment"}
		}
		if i >= len(src) {
			return append(toks, token{kind: tokEOF, pos: len(src), end: len(src)}), nil
		}
		t, err := lexToken(src, i)
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		i = t.end
	}
}

// skipSpace skips white space and comments from i; false (and where it
// starts) for an unterminated block comment.
func skipSpace(src string, i int) (int, bool) {
	for i < len(src) {
		r, n := utf8.DecodeRuneInString(src[i:])
		switch {
		case unicode.IsSpace(r):
			i += n
		case strings.HasPrefix(src[i:], "--"):
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				return len(src), true
			}
			i += j + 1
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return i, false
			}
			i += j + 4
		default:
			return i, true
		}
	}
	return i, true
}

// lexToken lexes the token starting at i, which is not white space.
func lexToken(src string, i int) (token, error) {
	c := src[i]
	switch {
	case c == '\'' || c == '"':
		return lexString(src, i, i)
	case (c == 'r' || c == 'R') && i+1 < len(src) && (src[i+1] == '\'' || src[i+1] == '"'):
		return lexString(src, i, i+1)
	case c == '`':
		return lexQuoted(src, i)
	case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
		return lexNumber(src, i)
	case isIdentRune(rune(c)) || c >= utf8.RuneSelf:
		j := identEnd(src, i)
		if j == i {
			r, _ := utf8.DecodeRuneInString(src[i:])
			return token{}, &Error{Src: src, Pos: i, Msg: fmt.Sprintf("unexpected character %q", r)}
		}
		return token{kind: tokIdent, text: src[i:j], pos: i, end: j}, nil
	}
	for _, op := range operators {
		if strings.HasPrefix(src[i:], op) {
			return token{kind: tokOp, text: op, pos: i, end: i + len(op)}, nil
		}
	}
	r, _ := utf8.DecodeRuneInString(src[i:])
	return token{}, &Error{Src: src, Pos: i, Msg: fmt.Sprintf("unexpected character %q", r)}
}

// identEnd returns the end of the run of identifier characters of src
// that starts at i (i when there is none).
func identEnd(src string, i int) int {
	for i < len(src) {
		r, n := utf8.DecodeRuneInString(src[i:])
		if !isIdentRune(r) {
			break
		}
		i += n
	}
	return i
}

// isIdentRune says r may be part of an identifier: letters, digits and '_'.
func isIdentRune(r rune) bool {
	return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// lexQuoted lexes a `backquoted` identifier, where “ is one backquote.
func lexQuoted(src string, i int) (token, error) {
	var b strings.Builder
	for j := i + 1; j < len(src); j++ {
		if src[j] != '`' {
			b.WriteByte(src[j])
			continue
		}
		if j+1 < len(src) && src[j+1] == '`' {
			b.WriteByte('`')
			j++
			continue
		}
		return token{kind: tokQuoted, text: b.String(), pos: i, end: j + 1}, nil
	}
	return token{}, &Error{Src: src, Pos: i, Msg: "unterminated `quoted identifier`"}
}

// lexString lexes a string literal starting at i whose quote is at q (a
// raw string r'...' has q = i+1). As in Spark, a doubled quote is one
// quote and, outside raw strings, backslash escapes apply: \0 \b \n \r \t
// \Z (Ctrl-Z) \uXXXX, three octal digits, \% and \_ (kept with their
// backslash, for LIKE), and a backslash before any other character is that
// character.
func lexString(src string, i, q int) (token, error) {
	quote, raw := src[q], q > i
	var b strings.Builder
	for j := q + 1; j < len(src); j++ {
		c := src[j]
		switch {
		case c == quote && j+1 < len(src) && src[j+1] == quote:
			b.WriteByte(quote)
			j++
		case c == quote:
			return token{kind: tokString, text: b.String(), pos: i, end: j + 1}, nil
		case c == '\\' && raw:
			b.WriteByte(c)
			if j+1 < len(src) && src[j+1] == quote {
				b.WriteByte(quote)
				j++
			}
		case c == '\\' && j+1 < len(src):
			j += unescape(&b, src[j+1:])
		default:
			b.WriteByte(c)
		}
	}
	return token{}, &Error{Src: src, Pos: i, Msg: "unterminated string literal"}
}

// unescape writes the escape sequence at the start of s (after its
// backslash) and returns the bytes it used.
func unescape(b *strings.Builder, s string) int {
	if s[0] == 'u' && len(s) >= 5 {
		if v, err := strconv.ParseUint(s[1:5], 16, 32); err == nil {
			b.WriteRune(rune(v))
			return 5
		}
	}
	if len(s) >= 3 && s[0] >= '0' && s[0] <= '3' && isOctal(s[1]) && isOctal(s[2]) {
		b.WriteByte((s[0]-'0')<<6 | (s[1]-'0')<<3 | (s[2] - '0'))
		return 3
	}
	switch s[0] {
	case '0':
		b.WriteByte(0)
	case 'b':
		b.WriteByte('\b')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'Z':
		b.WriteByte(0x1a)
	case '%', '_':
		b.WriteByte('\\')
		b.WriteByte(s[0])
	default:
		_, n := utf8.DecodeRuneInString(s)
		b.WriteString(s[:n])
		return n
	}
	return 1
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// lexNumber lexes a number: digits, an optional fraction and exponent, and
// an optional suffix (L for BIGINT, D for DOUBLE; Spark's S, Y, F and BD
// name types the language lacks). Digits followed by letters are an
// identifier, as in Spark (2024_events).
func lexNumber(src string, i int) (token, error) {
	j, kind := i, tokInt
	digits := func() {
		for j < len(src) && src[j] >= '0' && src[j] <= '9' {
			j++
		}
	}
	digits()
	if j < len(src) && src[j] == '.' {
		kind = tokFloat
		j++
		digits()
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && src[k] >= '0' && src[k] <= '9' {
			kind, j = tokFloat, k
			digits()
		}
	}
	end := identEnd(src, j)
	suffix := strings.ToUpper(src[j:end])
	switch {
	case suffix == "":
	case suffix == "L" && kind == tokInt, suffix == "D":
	case suffix == "S" || suffix == "Y" || suffix == "F" || suffix == "BD":
		return token{}, &Error{Src: src, Pos: j, Msg: fmt.Sprintf("the literal suffix %s names a type the language does not support (SMALLINT, TINYINT, FLOAT, DECIMAL); write an INT, BIGINT (L) or DOUBLE (D) literal", src[j:end])}
	case kind == tokInt:
		return token{kind: tokIdent, text: src[i:end], pos: i, end: end}, nil
	default:
		return token{}, &Error{Src: src, Pos: j, Msg: fmt.Sprintf("unexpected '%s' after the number %s", src[j:end], src[i:j])}
	}
	return token{kind: kind, text: src[i:end], pos: i, end: end}, nil
}
