package expr

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// likeElem is one element of a LIKE pattern: literal text, or the
// wildcard _ (one character) or % (any characters).
type likeElem struct {
	wild byte // 0 for literal text, '_' or '%'
	lit  string
}

// likePattern is a compiled LIKE pattern.
type likePattern []likeElem

// compileLike compiles a LIKE pattern with escape character esc: esc
// before %, _ or itself makes that character literal; esc before anything
// else, or at the end, is an error, as in Spark.
func compileLike(pattern string, esc rune) (likePattern, error) {
	var p likePattern
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			p = append(p, likeElem{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(pattern); {
		r, n := utf8.DecodeRuneInString(pattern[i:])
		i += n
		switch r {
		case esc:
			if i == len(pattern) {
				return nil, fmt.Errorf("the LIKE pattern %s ends with the escape character %q", quote(pattern), esc)
			}
			next, m := utf8.DecodeRuneInString(pattern[i:])
			if next != '%' && next != '_' && next != esc {
				return nil, fmt.Errorf("in the LIKE pattern %s the escape character %q may only precede %%, _ or itself, found %q", quote(pattern), esc, next)
			}
			lit.WriteRune(next)
			i += m
		case '%', '_':
			flush()
			if r == '%' && len(p) > 0 && p[len(p)-1].wild == '%' {
				continue // %% is %
			}
			p = append(p, likeElem{wild: byte(r)})
		default:
			lit.WriteRune(r)
		}
	}
	flush()
	return p, nil
}

// match says s matches the pattern. It backtracks to the last % only, as
// glob matching may, so it runs in O(len(s) * len(p)) at worst.
func (p likePattern) match(s string) bool {
	i, j := 0, 0
	star, starJ := -1, 0
	for {
		if i < len(p) {
			e := p[i]
			switch {
			case e.wild == '%':
				star, starJ = i, j
				i++
				continue
			case e.wild == '_' && j < len(s):
				_, n := utf8.DecodeRuneInString(s[j:])
				i, j = i+1, j+n
				continue
			case e.wild == 0 && strings.HasPrefix(s[j:], e.lit):
				i, j = i+1, j+len(e.lit)
				continue
			}
		} else if j == len(s) {
			return true
		}
		if star < 0 || starJ >= len(s) {
			return false
		}
		_, n := utf8.DecodeRuneInString(s[starJ:])
		starJ += n
		i, j = star+1, starJ
	}
}

// like compiles x [NOT] LIKE pattern [ESCAPE 'c'].
func (c *compiler) like(n *node) (compiled, error) {
	xs, err := c.compileAll(n.args[:2])
	if err != nil {
		return compiled{}, err
	}
	for i, x := range xs {
		if x.typ != TypeString && x.typ != TypeNull {
			return compiled{}, c.errAt(n.args[i].pos, "LIKE compares STRINGs, found %s: cast it, e.g. cast(%s AS STRING)", x.typ, shorten(c.text(n.args[i])))
		}
	}
	esc := '\\'
	if len(n.args) == 3 {
		e := n.args[2]
		if e.kind != nLiteral || e.lit.Type != TypeString || utf8.RuneCountInString(e.lit.Str) != 1 {
			return compiled{}, c.errAt(e.pos, "ESCAPE takes a string of one character, such as '!'")
		}
		esc, _ = utf8.DecodeRuneInString(e.lit.Str)
	}
	fx, fp, not, text := xs[0].eval, xs[1].eval, n.not, c.text(n)
	var fixed likePattern
	pn := n.args[1]
	isFixed := pn.kind == nLiteral && pn.lit.Type == TypeString
	if isFixed {
		if fixed, err = compileLike(pn.lit.Str, esc); err != nil {
			return compiled{}, c.errAt(pn.pos, "%v", err)
		}
	}
	return compiled{TypeBoolean, func(r *record.Record) (Value, error) {
		v, err := fx(r)
		if err != nil || v.Null {
			return nullOf(TypeBoolean), err
		}
		pat := fixed
		if !isFixed {
			pv, err := fp(r)
			if err != nil || pv.Null {
				return nullOf(TypeBoolean), err
			}
			if pat, err = compileLike(pv.Str, esc); err != nil {
				return fail(text, err)
			}
		}
		return Value{Type: TypeBoolean, Bool: pat.match(v.Str) != not}, nil
	}}, nil
}
