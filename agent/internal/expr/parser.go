package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// nodeKind is the kind of a syntax tree node.
type nodeKind uint8

const (
	nLiteral nodeKind = iota // lit
	nColumn                  // name (as written)
	nUnary                   // op ("-", "+", "NOT") args[0]
	nBinary                  // op args[0] args[1]
	nIsNull                  // not, args[0]
	nIn                      // not, args[0] IN (args[1:])
	nLike                    // not, args[0] LIKE args[1] [ESCAPE args[2]]
	nBetween                 // not, args[0] BETWEEN args[1] AND args[2]
	nCase                    // args: [operand,] WHEN/THEN pairs, [ELSE]; hasOperand, hasElse
	nCast                    // try, typ, args[0]
	nPath                    // args[0] : path
	nField                   // args[0] . name
	nIndex                   // args[0] [ args[1] ]
	nCall                    // name ( args )
)

// node is a syntax tree node covering src[pos:end]; opPos is where its
// operator or keyword is, for errors about it.
type node struct {
	kind       nodeKind
	pos, end   int
	opPos      int
	op         string
	name       string
	lit        Value
	typ        Type
	not, try   bool
	hasOperand bool
	hasElse    bool
	path       []PathStep
	args       []*node
}

// maxDepth bounds the nesting of an expression so that a hostile one
// cannot exhaust the stack.
const maxDepth = 200

// parser is a precedence-climbing parser over the tokens of src.
type parser struct {
	src   string
	toks  []token
	i     int
	depth int
}

// Binding powers, lowest first, as Spark's grammar nests them.
const (
	bpOr = iota + 1
	bpAnd
	bpNot
	bpPredicate // IS, IN, LIKE, BETWEEN
	bpCompare
	bpAdd // + - ||
	bpMul // * / %
	bpUnary
	bpPostfix // :: : . []
)

// parse parses src into a syntax tree.
func parse(src string) (*node, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	n, err := p.expr(0, "")
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.errAt(t.pos, "expected an operator or the end of the expression, found %s", t.describe(src))
	}
	return n, nil
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// prevEnd is where the last consumed token ends.
func (p *parser) prevEnd() int {
	if p.i == 0 {
		return 0
	}
	return p.toks[p.i-1].end
}

func (p *parser) errAt(pos int, format string, args ...any) error {
	return &Error{Src: p.src, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// isOp says t is the operator op.
func isOp(t token, op string) bool { return t.kind == tokOp && t.text == op }

// isKeyword says t is the bare keyword kw (case-insensitive).
func isKeyword(t token, kw string) bool { return t.kind == tokIdent && strings.EqualFold(t.text, kw) }

// expect consumes the operator or keyword want, or fails saying what it
// expected after what.
func (p *parser) expect(want, after string) (token, error) {
	t := p.peek()
	if isOp(t, want) || isKeyword(t, want) {
		return p.next(), nil
	}
	return t, p.errAt(t.pos, "expected '%s' after %s, found %s", want, after, t.describe(p.src))
}

// expr parses an expression whose operators bind tighter than minBP;
// after describes what precedes it, for "expected an expression after".
func (p *parser) expr(minBP int, after string) (*node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, p.errAt(p.peek().pos, "the expression is nested more than %d levels deep", maxDepth)
	}
	left, err := p.prefix(after)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		bp, ok := p.infixBP(t)
		if !ok || bp <= minBP {
			return left, nil
		}
		if left, err = p.infix(left, bp); err != nil {
			return nil, err
		}
	}
}

// infixBP returns the binding power of t as an infix or postfix operator.
func (p *parser) infixBP(t token) (int, bool) {
	switch {
	case t.kind == tokOp:
		switch t.text {
		case "::", ":", ".", "[":
			return bpPostfix, true
		case "*", "/", "%":
			return bpMul, true
		case "+", "-", "||":
			return bpAdd, true
		case "=", "==", "!=", "<>", "<", "<=", ">", ">=", "<=>":
			return bpCompare, true
		}
	case isKeyword(t, "OR"):
		return bpOr, true
	case isKeyword(t, "AND"):
		return bpAnd, true
	case isKeyword(t, "IS"), isKeyword(t, "IN"), isKeyword(t, "LIKE"), isKeyword(t, "BETWEEN"):
		return bpPredicate, true
	case isKeyword(t, "NOT"):
		if n := p.toks[p.i+1]; isKeyword(n, "IN") || isKeyword(n, "LIKE") || isKeyword(n, "BETWEEN") {
			return bpPredicate, true
		}
	}
	return 0, false
}

// prefix parses a primary expression or a prefix operator's.
func (p *parser) prefix(after string) (*node, error) {
	t := p.next()
	switch t.kind {
	case tokEOF:
		if after == "" {
			return nil, p.errAt(t.pos, "expected an expression, found end of input")
		}
		return nil, p.errAt(t.pos, "expected an expression after %s, found end of input", after)
	case tokString:
		s := t.text
		for p.peek().kind == tokString { // 'a' 'b' is 'ab', as in Spark
			s += p.next().text
		}
		return &node{kind: nLiteral, pos: t.pos, end: p.prevEnd(), lit: Value{Type: TypeString, Str: s}}, nil
	case tokInt, tokFloat:
		v, err := p.number(t)
		if err != nil {
			return nil, err
		}
		return &node{kind: nLiteral, pos: t.pos, end: t.end, lit: v}, nil
	case tokQuoted:
		return &node{kind: nColumn, pos: t.pos, end: t.end, name: t.text}, nil
	case tokOp:
		switch t.text {
		case "(":
			n, err := p.expr(0, "'('")
			if err != nil {
				return nil, err
			}
			r, err := p.expect(")", "the expression in parentheses")
			if err != nil {
				return nil, err
			}
			n.pos, n.end = t.pos, r.end // runtime errors quote the parentheses too
			return n, nil
		case "-", "+":
			return p.unary(t, t.text, bpUnary)
		case "!":
			return p.unary(t, "NOT", bpNot)
		}
	case tokIdent:
		return p.identifier(t, after)
	}
	return nil, p.errAt(t.pos, "expected an expression%s, found %s", afterText(after), t.describe(p.src))
}

func afterText(after string) string {
	if after == "" {
		return ""
	}
	return " after " + after
}

// unary parses the operand of prefix operator t.
func (p *parser) unary(t token, op string, bp int) (*node, error) {
	x, err := p.expr(bp-1, "'"+t.text+"'")
	if err != nil {
		return nil, err
	}
	return &node{kind: nUnary, pos: t.pos, end: x.end, opPos: t.pos, op: op, args: []*node{x}}, nil
}

// identifier parses what starts with a bare word: a keyword's construct,
// a function call or a column.
func (p *parser) identifier(t token, after string) (*node, error) {
	switch strings.ToUpper(t.text) {
	case "NULL":
		return &node{kind: nLiteral, pos: t.pos, end: t.end, lit: Value{Type: TypeNull, Null: true}}, nil
	case "TRUE", "FALSE":
		return &node{kind: nLiteral, pos: t.pos, end: t.end, lit: Value{Type: TypeBoolean, Bool: strings.EqualFold(t.text, "TRUE")}}, nil
	case "NOT":
		return p.unary(t, "NOT", bpNot)
	case "CASE":
		return p.caseExpr(t)
	case "CAST", "TRY_CAST":
		if isOp(p.peek(), "(") {
			return p.cast(t)
		}
	case "AND", "OR", "IS", "IN", "LIKE", "BETWEEN", "WHEN", "THEN", "ELSE", "END":
		return nil, p.errAt(t.pos, "expected an expression%s, found the keyword %s", afterText(after), strings.ToUpper(t.text))
	}
	if !isOp(p.peek(), "(") {
		return &node{kind: nColumn, pos: t.pos, end: t.end, name: t.text}, nil
	}
	p.next()
	call := &node{kind: nCall, pos: t.pos, opPos: t.pos, name: t.text}
	if isOp(p.peek(), ")") {
		call.end = p.next().end
		return call, nil
	}
	if err := p.list(call, "'"+t.text+"('", "after an argument of "+t.text); err != nil {
		return nil, err
	}
	return call, nil
}

// list parses the expressions of a list after its '(' into n's arguments,
// up to the ')', which ends n. after says what the first expression comes
// after and where says where a missing ',' or ')' is, for the messages.
func (p *parser) list(n *node, after, where string) error {
	for {
		a, err := p.expr(0, after)
		if err != nil {
			return err
		}
		n.args = append(n.args, a)
		c := p.next()
		if isOp(c, ")") {
			n.end = c.end
			return nil
		}
		if !isOp(c, ",") {
			return p.errAt(c.pos, "expected ',' or ')' %s, found %s", where, c.describe(p.src))
		}
	}
}

// number converts a numeric literal: an integer is an INT when it fits,
// else a BIGINT; a number with a fraction or exponent is a DOUBLE (Spark
// makes 1.5 a DECIMAL, which the language does not have).
func (p *parser) number(t token) (Value, error) {
	text := t.text
	last := text[len(text)-1]
	if last == 'd' || last == 'D' || t.kind == tokFloat {
		f, err := strconv.ParseFloat(strings.TrimRight(text, "dD"), 64)
		if err != nil || math.IsInf(f, 0) {
			return Value{}, p.errAt(t.pos, "the number %s is out of the DOUBLE range", text)
		}
		return Value{Type: TypeDouble, Float: f}, nil
	}
	long := last == 'l' || last == 'L'
	v, err := strconv.ParseInt(strings.TrimRight(text, "lL"), 10, 64)
	if err != nil {
		return Value{}, p.errAt(t.pos, "the integer %s is out of the BIGINT range (DECIMAL is not supported; write a DOUBLE such as %se0)", text, text)
	}
	if !long && v >= math.MinInt32 && v <= math.MaxInt32 {
		return Value{Type: TypeInt, Int: v}, nil
	}
	return Value{Type: TypeBigInt, Int: v}, nil
}

// infix parses the infix or postfix operator after left.
func (p *parser) infix(left *node, bp int) (*node, error) {
	t := p.next()
	if t.kind == tokOp {
		switch t.text {
		case "::":
			typ, end, err := p.typeName("'::'")
			if err != nil {
				return nil, err
			}
			return &node{kind: nCast, pos: left.pos, end: end, opPos: t.pos, typ: typ, args: []*node{left}}, nil
		case ":":
			return p.path(left, t)
		case ".":
			f := p.next()
			if f.kind != tokIdent && f.kind != tokQuoted {
				return nil, p.errAt(f.pos, "expected a field name after '.', found %s", f.describe(p.src))
			}
			return &node{kind: nField, pos: left.pos, end: f.end, opPos: f.pos, name: f.text, args: []*node{left}}, nil
		case "[":
			idx, err := p.expr(0, "'['")
			if err != nil {
				return nil, err
			}
			r, err := p.expect("]", "the index")
			if err != nil {
				return nil, err
			}
			return &node{kind: nIndex, pos: left.pos, end: r.end, opPos: t.pos, args: []*node{left, idx}}, nil
		}
		right, err := p.expr(bp, "'"+t.text+"'")
		if err != nil {
			return nil, err
		}
		return &node{kind: nBinary, pos: left.pos, end: right.end, opPos: t.pos, op: t.text, args: []*node{left, right}}, nil
	}
	kw := strings.ToUpper(t.text)
	switch kw {
	case "AND", "OR":
		right, err := p.expr(bp, kw)
		if err != nil {
			return nil, err
		}
		return &node{kind: nBinary, pos: left.pos, end: right.end, opPos: t.pos, op: kw, args: []*node{left, right}}, nil
	case "IS":
		n := &node{kind: nIsNull, pos: left.pos, opPos: t.pos, args: []*node{left}}
		if isKeyword(p.peek(), "NOT") {
			p.next()
			n.not = true
		}
		e, err := p.expect("NULL", "IS")
		if err != nil {
			return nil, err
		}
		n.end = e.end
		return n, nil
	}
	n := &node{pos: left.pos, opPos: t.pos, args: []*node{left}}
	if kw == "NOT" {
		n.not = true
		t = p.next()
		kw = strings.ToUpper(t.text)
	}
	switch kw {
	case "IN":
		return p.in(n)
	case "LIKE":
		n.kind = nLike
		pat, err := p.expr(bpPredicate, "LIKE")
		if err != nil {
			return nil, err
		}
		n.args, n.end = append(n.args, pat), pat.end
		if isKeyword(p.peek(), "ESCAPE") {
			p.next()
			esc, err := p.expr(bpPredicate, "ESCAPE")
			if err != nil {
				return nil, err
			}
			n.args, n.end = append(n.args, esc), esc.end
		}
		return n, nil
	default: // BETWEEN
		n.kind = nBetween
		lo, err := p.expr(bpPredicate, "BETWEEN")
		if err != nil {
			return nil, err
		}
		if _, err := p.expect("AND", "BETWEEN's lower bound"); err != nil {
			return nil, err
		}
		hi, err := p.expr(bpPredicate, "AND")
		if err != nil {
			return nil, err
		}
		n.args, n.end = append(n.args, lo, hi), hi.end
		return n, nil
	}
}

// in parses the list of x [NOT] IN (a, b, ...).
func (p *parser) in(n *node) (*node, error) {
	n.kind = nIn
	if _, err := p.expect("(", "IN"); err != nil {
		return nil, err
	}
	if err := p.list(n, "'('", "in the list of IN"); err != nil {
		return nil, err
	}
	return n, nil
}

// caseExpr parses CASE [x] WHEN c THEN v ... [ELSE e] END.
func (p *parser) caseExpr(t token) (*node, error) {
	n := &node{kind: nCase, pos: t.pos, opPos: t.pos}
	if !isKeyword(p.peek(), "WHEN") {
		x, err := p.expr(0, "CASE")
		if err != nil {
			return nil, err
		}
		n.args, n.hasOperand = append(n.args, x), true
	}
	if _, err := p.expect("WHEN", "CASE"); err != nil {
		return nil, err
	}
	for {
		c, err := p.expr(0, "WHEN")
		if err != nil {
			return nil, err
		}
		if _, err := p.expect("THEN", "WHEN's condition"); err != nil {
			return nil, err
		}
		v, err := p.expr(0, "THEN")
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, c, v)
		if !isKeyword(p.peek(), "WHEN") {
			break
		}
		p.next()
	}
	if isKeyword(p.peek(), "ELSE") {
		p.next()
		e, err := p.expr(0, "ELSE")
		if err != nil {
			return nil, err
		}
		n.args, n.hasElse = append(n.args, e), true
	}
	e := p.peek()
	if !isKeyword(e, "END") {
		want := "WHEN, ELSE or END"
		if n.hasElse {
			want = "END"
		}
		return nil, p.errAt(e.pos, "expected %s in CASE, found %s", want, e.describe(p.src))
	}
	n.end = p.next().end
	return n, nil
}

// cast parses cast(x AS type) and try_cast(x AS type) after the name t.
func (p *parser) cast(t token) (*node, error) {
	p.next() // (
	x, err := p.expr(0, "'"+t.text+"('")
	if err != nil {
		return nil, err
	}
	if _, err := p.expect("AS", "the expression to cast"); err != nil {
		return nil, err
	}
	typ, _, err := p.typeName("AS")
	if err != nil {
		return nil, err
	}
	r, err := p.expect(")", "the type")
	if err != nil {
		return nil, err
	}
	return &node{kind: nCast, pos: t.pos, end: r.end, opPos: t.pos, try: strings.EqualFold(t.text, "TRY_CAST"), typ: typ, args: []*node{x}}, nil
}

// typeName parses a type name and returns the type and where it ends.
func (p *parser) typeName(after string) (Type, int, error) {
	t := p.next()
	if t.kind != tokIdent {
		return 0, 0, p.errAt(t.pos, "expected a type after %s, found %s", after, t.describe(p.src))
	}
	typ, ok := typeNames[strings.ToUpper(t.text)]
	if !ok {
		return 0, 0, p.errAt(t.pos, "type %s is not supported; use one of %s", strings.ToUpper(t.text), supportedTypes)
	}
	return typ, t.end, nil
}

// path parses the JSON path after ':' (token t): a name, `name` or
// ['name'] / ["name"], then any number of .name, [index] and ['name'].
func (p *parser) path(left *node, t token) (*node, error) {
	n := &node{kind: nPath, pos: left.pos, opPos: t.pos, args: []*node{left}}
	for first := true; ; first = false {
		s := p.peek()
		switch {
		case first && (s.kind == tokIdent || s.kind == tokQuoted):
			p.next()
			n.path = append(n.path, PathStep{Name: s.text})
		case isOp(s, "."):
			p.next()
			f := p.next()
			if f.kind != tokIdent && f.kind != tokQuoted {
				return nil, p.errAt(f.pos, "expected a field name after '.' in the JSON path, found %s", f.describe(p.src))
			}
			n.path = append(n.path, PathStep{Name: f.text})
		case isOp(s, "["):
			p.next()
			k := p.next()
			switch k.kind {
			case tokString:
				n.path = append(n.path, PathStep{Name: k.text, Bracketed: true})
			case tokInt:
				i, err := strconv.Atoi(k.text)
				if err != nil || i > math.MaxInt32 || strings.ContainsAny(k.text, "lL") {
					return nil, p.errAt(k.pos, "the JSON path index %s is out of range", k.text)
				}
				n.path = append(n.path, PathStep{IsIndex: true, Index: i})
			default:
				return nil, p.errAt(k.pos, "expected an array index or a quoted field name after '[' in the JSON path, found %s", k.describe(p.src))
			}
			if _, err := p.expect("]", "the JSON path step"); err != nil {
				return nil, err
			}
		case first:
			return nil, p.errAt(s.pos, "expected a field name or [ after ':' (a JSON path such as value:a.b[0]), found %s", s.describe(p.src))
		default:
			n.end = p.prevEnd()
			return n, nil
		}
	}
}
