package expr

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// errDivideByZero is the error of x / 0 and x % 0 under ANSI rules.
var errDivideByZero = errors.New("division by zero")

func (c *compiler) unary(n *node) (compiled, error) {
	x, err := c.compile(n.args[0])
	if err != nil {
		return compiled{}, err
	}
	f, text := x.eval, c.text(n)
	switch n.op {
	case "NOT":
		if err := c.wantBoolean(n.args[0], x, "the operand of NOT"); err != nil {
			return compiled{}, err
		}
		return compiled{TypeBoolean, func(r *record.Record) (Value, error) {
			v, err := f(r)
			return Value{Type: TypeBoolean, Bool: !v.Bool, Null: v.Null}, err
		}}, nil
	case "+":
		if !isNumeric(x.typ) && x.typ != TypeNull {
			return compiled{}, c.errAt(n.opPos, "unary + needs a number, found %s", x.typ)
		}
		return x, nil
	}
	t := x.typ
	switch t {
	case TypeNull:
		t = TypeInt
	case TypeInt, TypeBigInt, TypeDouble:
	default:
		return compiled{}, c.errAt(n.opPos, "unary - needs a number, found %s", x.typ)
	}
	return compiled{t, func(r *record.Record) (Value, error) {
		v, err := f(r)
		if err != nil || v.Null {
			return nullOf(t), err
		}
		if t == TypeDouble {
			return Value{Type: t, Float: -v.Float}, nil
		}
		if v.Int == math.MinInt64 || t == TypeInt && v.Int == math.MinInt32 {
			return fail(text, fmt.Errorf("the result overflows %s", t))
		}
		return Value{Type: t, Int: -v.Int}, nil
	}}, nil
}

func (c *compiler) binary(n *node) (compiled, error) {
	xs, err := c.compileAll(n.args)
	if err != nil {
		return compiled{}, err
	}
	l, r := xs[0], xs[1]
	switch n.op {
	case "AND", "OR":
		return c.logic(n, l, r)
	case "||":
		return c.concat(n, l, r)
	case "+", "-", "*", "/", "%":
		return c.arith(n, l, r)
	}
	return c.compare(n, l, r)
}

// logic compiles AND and OR with SQL's three-valued logic, evaluating the
// right side only when the left one does not decide.
func (c *compiler) logic(n *node, l, r compiled) (compiled, error) {
	if err := c.wantBoolean(n.args[0], l, "the left operand of "+n.op); err != nil {
		return compiled{}, err
	}
	if err := c.wantBoolean(n.args[1], r, "the right operand of "+n.op); err != nil {
		return compiled{}, err
	}
	fl, fr := l.eval, r.eval
	decides := n.op == "OR" // the value of the left side that decides alone
	return compiled{TypeBoolean, func(rec *record.Record) (Value, error) {
		a, err := fl(rec)
		if err != nil {
			return a, err
		}
		if !a.Null && a.Bool == decides {
			return Value{Type: TypeBoolean, Bool: decides}, nil
		}
		b, err := fr(rec)
		if err != nil {
			return b, err
		}
		if !b.Null && b.Bool == decides {
			return Value{Type: TypeBoolean, Bool: decides}, nil
		}
		return Value{Type: TypeBoolean, Bool: !decides, Null: a.Null || b.Null}, nil
	}}, nil
}

// concat compiles a || b: BINARY when both are, else STRING, other
// scalar types cast to STRING.
func (c *compiler) concat(n *node, l, r compiled) (compiled, error) {
	t := TypeString
	binaryOrNull := func(t Type) bool { return t == TypeBinary || t == TypeNull }
	if binaryOrNull(l.typ) && binaryOrNull(r.typ) && (l.typ == TypeBinary || r.typ == TypeBinary) {
		t = TypeBinary
	}
	for i, x := range []compiled{l, r} {
		if x.typ > TypeTimestamp {
			return compiled{}, c.errAt(n.args[i].pos, "|| concatenates strings, found %s", x.typ)
		}
	}
	fl, fr := coerce(l, t, c.text(n.args[0])), coerce(r, t, c.text(n.args[1]))
	return compiled{t, func(rec *record.Record) (Value, error) {
		a, err := fl(rec)
		if err != nil || a.Null {
			return nullOf(t), err
		}
		b, err := fr(rec)
		if err != nil || b.Null {
			return nullOf(t), err
		}
		if t == TypeBinary {
			return Value{Type: t, Bytes: append(append(make([]byte, 0, len(a.Bytes)+len(b.Bytes)), a.Bytes...), b.Bytes...)}, nil
		}
		return Value{Type: t, Str: a.Str + b.Str}, nil
	}}, nil
}

// arithType is the type the operands of an arithmetic operator convert
// to: the wider number; a STRING converts to the other side's type
// (BIGINT for an integer, as Spark's ANSI coercion), two STRINGs to DOUBLE.
func arithType(a, b Type) (Type, bool) {
	switch {
	case a == TypeNull && b == TypeNull:
		return TypeInt, true
	case a == TypeString && b == TypeString:
		return TypeDouble, true
	case a == TypeNull:
		return arithType(b, b)
	case b == TypeNull:
		return arithType(a, a)
	case isNumeric(a) && isNumeric(b):
		return max(a, b), true
	case a == TypeString && isNumeric(b) || b == TypeString && isNumeric(a):
		if a == TypeDouble || b == TypeDouble {
			return TypeDouble, true
		}
		return TypeBigInt, true
	}
	return 0, false
}

func (c *compiler) arith(n *node, l, r compiled) (compiled, error) {
	t, ok := arithType(l.typ, r.typ)
	if !ok {
		return compiled{}, c.errAt(n.opPos, "%s needs numbers, found %s and %s", n.op, l.typ, r.typ)
	}
	if n.op == "/" {
		t = TypeDouble // as Spark: / on integers is a DOUBLE division
	}
	text := c.text(n)
	fl, fr := coerce(l, t, text), coerce(r, t, text)
	op := n.op[0]
	return compiled{t, func(rec *record.Record) (Value, error) {
		a, err := fl(rec)
		if err != nil || a.Null {
			return nullOf(t), err
		}
		b, err := fr(rec)
		if err != nil || b.Null {
			return nullOf(t), err
		}
		v, err := arithmetic(op, t, a, b)
		if err != nil {
			return fail(text, err)
		}
		return v, nil
	}}, nil
}

// arithmetic applies op to a and b of type t, with ANSI errors for
// overflow and division by zero.
func arithmetic(op byte, t Type, a, b Value) (Value, error) {
	if t == TypeDouble {
		x, y := a.Float, b.Float
		switch op {
		case '+':
			x += y
		case '-':
			x -= y
		case '*':
			x *= y
		default:
			if y == 0 {
				return Value{}, errDivideByZero
			}
			if op == '/' {
				x /= y
			} else {
				x = math.Mod(x, y)
			}
		}
		return Value{Type: t, Float: x}, nil
	}
	x, y := a.Int, b.Int
	var z int64
	overflow := false
	switch op {
	case '+':
		z = x + y
		overflow = (z > x) != (y > 0)
	case '-':
		z = x - y
		overflow = (z < x) != (y > 0)
	case '*':
		z = x * y
		overflow = x != 0 && (z/x != y || x == -1 && y == math.MinInt64)
	default:
		if y == 0 {
			return Value{}, errDivideByZero
		}
		z = x % y
	}
	if overflow || t == TypeInt && (z < math.MinInt32 || z > math.MaxInt32) {
		return Value{}, fmt.Errorf("the result overflows %s", t)
	}
	return Value{Type: t, Int: z}, nil
}

// compareType is the type two values are compared in: their common type
// (the wider number, a DATE with a TIMESTAMP as a TIMESTAMP), or, with a
// STRING, the other side's type (BIGINT for an INT). Arrays do not
// compare.
func compareType(a, b Type) (Type, bool) {
	switch {
	case a > TypeTimestamp || b > TypeTimestamp:
		return 0, false
	case a == TypeString && b == TypeInt || a == TypeInt && b == TypeString:
		return TypeBigInt, true
	case a == TypeString && b != TypeNull:
		return b, true
	case b == TypeString && a != TypeNull:
		return a, true
	}
	return commonType(a, b)
}

// compareValues compares a and b, both non-NULL of type t: -1, 0 or 1.
// DOUBLE compares as Spark: NaN equals NaN and is above every number.
func compareValues(t Type, a, b *Value) int {
	switch t {
	case TypeString:
		return strings.Compare(a.Str, b.Str)
	case TypeBinary:
		return bytes.Compare(a.Bytes, b.Bytes)
	case TypeBoolean:
		switch {
		case a.Bool == b.Bool:
			return 0
		case b.Bool:
			return -1
		}
		return 1
	case TypeDouble:
		x, y := a.Float, b.Float
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		case x == y || math.IsNaN(x) && math.IsNaN(y):
			return 0
		case math.IsNaN(x):
			return 1
		}
		return -1
	}
	switch {
	case a.Int < b.Int:
		return -1
	case a.Int > b.Int:
		return 1
	}
	return 0
}

func (c *compiler) compare(n *node, l, r compiled) (compiled, error) {
	t, ok := compareType(l.typ, r.typ)
	if !ok {
		return compiled{}, c.errAt(n.opPos, "cannot compare %s with %s", l.typ, r.typ)
	}
	text := c.text(n)
	fl, fr := coerce(l, t, text), coerce(r, t, text)
	var want func(int) bool
	switch n.op {
	case "=", "==", "<=>":
		want = func(c int) bool { return c == 0 }
	case "!=", "<>":
		want = func(c int) bool { return c != 0 }
	case "<":
		want = func(c int) bool { return c < 0 }
	case "<=":
		want = func(c int) bool { return c <= 0 }
	case ">":
		want = func(c int) bool { return c > 0 }
	default: // >=
		want = func(c int) bool { return c >= 0 }
	}
	if n.op == "<=>" {
		return compiled{TypeBoolean, func(rec *record.Record) (Value, error) {
			a, err := fl(rec)
			if err != nil {
				return a, err
			}
			b, err := fr(rec)
			if err != nil || a.Null || b.Null {
				return Value{Type: TypeBoolean, Bool: a.Null && b.Null}, err
			}
			return Value{Type: TypeBoolean, Bool: compareValues(t, &a, &b) == 0}, nil
		}}, nil
	}
	return compiled{TypeBoolean, func(rec *record.Record) (Value, error) {
		a, err := fl(rec)
		if err != nil || a.Null {
			return nullOf(TypeBoolean), err
		}
		b, err := fr(rec)
		if err != nil || b.Null {
			return nullOf(TypeBoolean), err
		}
		return Value{Type: TypeBoolean, Bool: want(compareValues(t, &a, &b))}, nil
	}}, nil
}
