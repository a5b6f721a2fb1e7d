package expr

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// evalFn evaluates a compiled expression on a record.
type evalFn func(*record.Record) (Value, error)

// compiled is a type-checked expression.
type compiled struct {
	typ  Type
	eval evalFn
}

// compiler type-checks a syntax tree and builds its closures.
type compiler struct {
	src   string
	depth int
}

// maxCompileDepth bounds the depth of the tree (long chains such as
// a || b || c ... nest without parentheses).
const maxCompileDepth = 1000

// text is the source of n, which runtime errors name.
func (c *compiler) text(n *node) string { return c.src[n.pos:n.end] }

func (c *compiler) errAt(pos int, format string, args ...any) error {
	return &Error{Src: c.src, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// fail wraps a runtime error with the expression it happened in.
func fail(text string, err error) (Value, error) {
	return Value{}, fmt.Errorf("%s: %w", text, err)
}

// column is a column of the raw record.
type column struct {
	name string
	typ  Type
	eval evalFn
}

// columns are the raw record's columns.
var columns = []column{
	{"key", TypeBinary, func(r *record.Record) (Value, error) {
		return Value{Type: TypeBinary, Bytes: r.Key, Null: r.Key == nil}, nil
	}},
	{"value", TypeBinary, func(r *record.Record) (Value, error) {
		return Value{Type: TypeBinary, Bytes: r.Value, Null: r.Value == nil}, nil
	}},
	{"topic", TypeString, func(r *record.Record) (Value, error) {
		return Value{Type: TypeString, Str: r.Topic}, nil
	}},
	{"partition", TypeInt, func(r *record.Record) (Value, error) {
		return Value{Type: TypeInt, Int: int64(r.Partition)}, nil
	}},
	{"offset", TypeBigInt, func(r *record.Record) (Value, error) {
		return Value{Type: TypeBigInt, Int: r.Offset}, nil
	}},
	{"timestamp", TypeTimestamp, func(r *record.Record) (Value, error) {
		if !r.HasTimestamp() {
			return nullOf(TypeTimestamp), nil
		}
		return Value{Type: TypeTimestamp, Int: r.Timestamp.UnixMicro()}, nil
	}},
	{"timestampType", TypeInt, func(r *record.Record) (Value, error) {
		return Value{Type: TypeInt, Int: int64(r.TimestampType)}, nil
	}},
	{"headers", TypeHeaders, func(r *record.Record) (Value, error) {
		return Value{Type: TypeHeaders, Headers: r.Headers}, nil
	}},
}

// columnNames lists the columns for messages.
func columnNames() []string {
	names := make([]string, len(columns))
	for i, col := range columns {
		names[i] = col.name
	}
	return names
}

// compile type-checks n and builds its closure.
func (c *compiler) compile(n *node) (compiled, error) {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxCompileDepth {
		return compiled{}, c.errAt(n.pos, "the expression is nested more than %d levels deep", maxCompileDepth)
	}
	switch n.kind {
	case nLiteral:
		v := n.lit
		return compiled{v.Type, func(*record.Record) (Value, error) { return v, nil }}, nil
	case nColumn:
		for _, col := range columns {
			if strings.EqualFold(col.name, n.name) {
				return compiled{col.typ, col.eval}, nil
			}
		}
		return compiled{}, c.errAt(n.pos, "unknown column %s%s; the raw record's columns are %s",
			n.name, didYouMean(n.name, columnNames()), strings.Join(columnNames(), ", "))
	case nUnary:
		return c.unary(n)
	case nBinary:
		return c.binary(n)
	case nIsNull:
		return c.isNull(n)
	case nIn:
		return c.in(n)
	case nLike:
		return c.like(n)
	case nBetween:
		return c.between(n)
	case nCase:
		return c.caseExpr(n)
	case nCast:
		return c.cast(n)
	case nPath:
		return c.path(n)
	case nField:
		return c.field(n)
	case nIndex:
		return c.index(n)
	default: // nCall
		return c.call(n)
	}
}

// compileAll compiles ns.
func (c *compiler) compileAll(ns []*node) ([]compiled, error) {
	out := make([]compiled, len(ns))
	for i, n := range ns {
		var err error
		if out[i], err = c.compile(n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// coerce converts x's values to type to (a widening, or an implicit cast
// from STRING that names the expression text when it fails).
func coerce(x compiled, to Type, text string) evalFn {
	if x.typ == to {
		return x.eval
	}
	f := x.eval
	return func(r *record.Record) (Value, error) {
		v, err := f(r)
		if err != nil || v.Null {
			return nullOf(to), err
		}
		if v, err = castValue(v, to); err != nil {
			return fail(text, err)
		}
		return v, nil
	}
}

// commonType is the type values of types a and b both convert to, for
// the branches of CASE, if and coalesce.
func commonType(a, b Type) (Type, bool) {
	switch {
	case a == b || b == TypeNull:
		return a, true
	case a == TypeNull:
		return b, true
	case isNumeric(a) && isNumeric(b):
		return max(a, b), true
	case (a == TypeDate || a == TypeTimestamp) && (b == TypeDate || b == TypeTimestamp):
		return TypeTimestamp, true
	}
	return 0, false
}

// branches finds the common type of xs (the branches at nodes ns) and
// converts them to it.
func (c *compiler) branches(what string, ns []*node, xs []compiled) (Type, []evalFn, error) {
	t := TypeNull
	for i, x := range xs {
		u, ok := commonType(t, x.typ)
		if !ok {
			return 0, nil, c.errAt(ns[i].pos, "the %s have different types, %s and %s: cast one to the other's type, e.g. cast(%s AS %s)",
				what, t, x.typ, shorten(c.text(ns[i])), t)
		}
		t = u
	}
	fs := make([]evalFn, len(xs))
	for i, x := range xs {
		fs[i] = coerce(x, t, c.text(ns[i]))
	}
	return t, fs, nil
}

// wantBoolean checks that x (at n) is a BOOLEAN for what.
func (c *compiler) wantBoolean(n *node, x compiled, what string) error {
	if x.typ != TypeBoolean && x.typ != TypeNull {
		return c.errAt(n.pos, "%s must be a BOOLEAN, found %s", what, x.typ)
	}
	return nil
}

func (c *compiler) isNull(n *node) (compiled, error) {
	x, err := c.compile(n.args[0])
	if err != nil {
		return compiled{}, err
	}
	f, not := x.eval, n.not
	return compiled{TypeBoolean, func(r *record.Record) (Value, error) {
		v, err := f(r)
		return Value{Type: TypeBoolean, Bool: v.Null != not}, err
	}}, nil
}

func (c *compiler) cast(n *node) (compiled, error) {
	x, err := c.compile(n.args[0])
	if err != nil {
		return compiled{}, err
	}
	return c.castOf(n, x)
}

// castOf compiles the cast n of x, its compiled operand.
func (c *compiler) castOf(n *node, x compiled) (compiled, error) {
	to, try, text := n.typ, n.try, c.text(n)
	if !canCast(x.typ, to) {
		return compiled{}, c.errAt(n.opPos, "cannot cast %s to %s", x.typ, to)
	}
	if x.typ == to {
		return compiled{to, x.eval}, nil
	}
	f := x.eval
	return compiled{to, func(r *record.Record) (Value, error) {
		v, err := f(r)
		if err != nil {
			return v, err
		}
		if v, err = castValue(v, to); err != nil {
			if try {
				return nullOf(to), nil
			}
			return fail(text, err)
		}
		return v, nil
	}}, nil
}

// path compiles x:path, which reads x's JSON text.
func (c *compiler) path(n *node) (compiled, error) {
	arg := n.args[0]
	var x compiled
	var err error
	if arg.kind == nCast && !arg.try && arg.typ == TypeString {
		if x, err = c.compile(arg.args[0]); err != nil {
			return compiled{}, err
		}
		if x.typ == TypeBinary { // cast(binary AS STRING):path reads the bytes without copying them
			f, steps := x.eval, n.path
			return compiled{TypeString, func(r *record.Record) (Value, error) {
				v, err := f(r)
				if err != nil || v.Null {
					return nullOf(TypeString), err
				}
				s, ok := jsonPath(v.Bytes, steps)
				return Value{Type: TypeString, Str: s, Null: !ok}, nil
			}}, nil
		}
		x, err = c.castOf(arg, x)
	} else {
		x, err = c.compile(arg)
	}
	if err != nil {
		return compiled{}, err
	}
	switch x.typ {
	case TypeString, TypeNull:
	case TypeBinary:
		text := shorten(c.text(arg))
		return compiled{}, c.errAt(n.opPos, "the : operator reads JSON text and %s is BINARY: cast it to STRING first, e.g. cast(%s AS STRING)%s",
			text, text, c.src[n.opPos:n.end])
	default:
		return compiled{}, c.errAt(n.opPos, "the : operator reads JSON text from a STRING, found %s", x.typ)
	}
	f, steps := x.eval, n.path
	return compiled{TypeString, func(r *record.Record) (Value, error) {
		v, err := f(r)
		if err != nil || v.Null {
			return nullOf(TypeString), err
		}
		// jsonPath only reads the document, so the string's bytes serve.
		s, ok := jsonPath(stringBytes(v.Str), steps)
		return Value{Type: TypeString, Str: s, Null: !ok}, nil
	}}, nil
}

// field compiles x.key and x.value of a header.
func (c *compiler) field(n *node) (compiled, error) {
	x, err := c.compile(n.args[0])
	if err != nil {
		return compiled{}, err
	}
	if x.typ != TypeHeader {
		return compiled{}, c.errAt(n.opPos, "only a header, such as element_at(headers, 1), has fields; %s is %s", shorten(c.text(n.args[0])), x.typ)
	}
	f := x.eval
	switch strings.ToLower(n.name) {
	case "key":
		return compiled{TypeString, func(r *record.Record) (Value, error) {
			v, err := f(r)
			return Value{Type: TypeString, Str: v.Header.Key, Null: v.Null}, err
		}}, nil
	case "value":
		return compiled{TypeBinary, func(r *record.Record) (Value, error) {
			v, err := f(r)
			return Value{Type: TypeBinary, Bytes: v.Header.Value, Null: v.Null || v.Header.Value == nil}, err
		}}, nil
	}
	return compiled{}, c.errAt(n.opPos, "a header has the fields key and value, not %s", n.name)
}

// index compiles array[i] (0-based).
func (c *compiler) index(n *node) (compiled, error) {
	xs, err := c.compileAll(n.args)
	if err != nil {
		return compiled{}, err
	}
	a, i := xs[0], xs[1]
	var elem Type
	switch a.typ {
	case TypeHeaders:
		elem = TypeHeader
	case TypeStringArray:
		elem = TypeString
	default:
		return compiled{}, c.errAt(n.opPos, "only an array can be indexed with [ ]; %s is %s", shorten(c.text(n.args[0])), a.typ)
	}
	if i.typ != TypeInt && i.typ != TypeBigInt && i.typ != TypeNull {
		return compiled{}, c.errAt(n.args[1].pos, "an array index must be an INT, found %s", i.typ)
	}
	fa, fi, text := a.eval, i.eval, c.text(n)
	return compiled{elem, func(r *record.Record) (Value, error) {
		av, err := fa(r)
		if err != nil || av.Null {
			return nullOf(elem), err
		}
		iv, err := fi(r)
		if err != nil || iv.Null {
			return nullOf(elem), err
		}
		size := len(av.Strs)
		if elem == TypeHeader {
			size = len(av.Headers)
		}
		if iv.Int < 0 || iv.Int >= int64(size) {
			return fail(text, fmt.Errorf("the index %d is out of bounds: the array has %d elements (indexes start at 0)", iv.Int, size))
		}
		if elem == TypeHeader {
			return Value{Type: TypeHeader, Header: av.Headers[iv.Int]}, nil
		}
		return Value{Type: TypeString, Str: av.Strs[iv.Int]}, nil
	}}, nil
}

// coreFunctions are the functions the compiler handles itself: cast and
// those that evaluate their arguments only as needed.
var coreFunctions = []string{"cast", "try_cast", "if", "iff", "coalesce", "nvl", "ifnull"}

// call compiles a function call.
func (c *compiler) call(n *node) (compiled, error) {
	name := strings.ToLower(n.name)
	switch name {
	case "if", "iff":
		return c.ifFunc(n)
	case "coalesce", "nvl", "ifnull":
		return c.coalesce(n)
	}
	fn, ok := functions[name]
	if !ok {
		return compiled{}, c.errAt(n.pos, "unknown function %s%s", n.name, didYouMean(name, functionNames()))
	}
	if err := c.arity(n, fn.minArgs, fn.maxArgs); err != nil {
		return compiled{}, err
	}
	xs, err := c.compileAll(n.args)
	if err != nil {
		return compiled{}, err
	}
	types := make([]Type, len(xs))
	fs := make([]evalFn, len(xs))
	for i, x := range xs {
		types[i], fs[i] = x.typ, x.eval
	}
	typ, err := fn.check(types)
	if err != nil {
		return compiled{}, c.errAt(n.pos, "%s: %v", n.name, err)
	}
	args := make([]Value, len(fs)) // the call's scratch space: a Program runs on one goroutine
	eval, text := fn.eval, c.text(n)
	return compiled{typ, func(r *record.Record) (Value, error) {
		for i, f := range fs {
			v, err := f(r)
			if err != nil {
				clear(args)
				return v, err
			}
			args[i] = v
		}
		v, err := eval(args)
		clear(args) // drop references to the record's bytes
		if err != nil {
			return fail(text, err)
		}
		return v, nil
	}}, nil
}

// arity checks n's argument count.
func (c *compiler) arity(n *node, lo, hi int) error {
	k := len(n.args)
	if k >= lo && (hi < 0 || k <= hi) {
		return nil
	}
	want := fmt.Sprintf("%d to %d arguments", lo, hi)
	switch {
	case lo == hi:
		want = fmt.Sprintf("%d argument%s", lo, plural(lo))
	case hi < 0:
		want = fmt.Sprintf("at least %d argument%s", lo, plural(lo))
	}
	return c.errAt(n.pos, "%s takes %s, found %d", n.name, want, k)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// functionNames lists every function name, for suggestions.
func functionNames() []string {
	names := append([]string(nil), coreFunctions...)
	for name := range functions {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// ifFunc compiles if(cond, then, else), which evaluates one branch.
func (c *compiler) ifFunc(n *node) (compiled, error) {
	if err := c.arity(n, 3, 3); err != nil {
		return compiled{}, err
	}
	xs, err := c.compileAll(n.args)
	if err != nil {
		return compiled{}, err
	}
	if err := c.wantBoolean(n.args[0], xs[0], "the condition of "+n.name); err != nil {
		return compiled{}, err
	}
	t, fs, err := c.branches("results of "+n.name, n.args[1:], xs[1:])
	if err != nil {
		return compiled{}, err
	}
	cond, then, els := xs[0].eval, fs[0], fs[1]
	return compiled{t, func(r *record.Record) (Value, error) {
		v, err := cond(r)
		if err != nil {
			return v, err
		}
		if !v.Null && v.Bool {
			return then(r)
		}
		return els(r)
	}}, nil
}

// coalesce compiles coalesce(a, ...), nvl(a, b) and ifnull(a, b): the
// first argument that is not NULL, evaluating no further.
func (c *compiler) coalesce(n *node) (compiled, error) {
	lo, hi := 2, 2
	if strings.EqualFold(n.name, "coalesce") {
		lo, hi = 1, -1
	}
	if err := c.arity(n, lo, hi); err != nil {
		return compiled{}, err
	}
	xs, err := c.compileAll(n.args)
	if err != nil {
		return compiled{}, err
	}
	t, fs, err := c.branches("arguments of "+n.name, n.args, xs)
	if err != nil {
		return compiled{}, err
	}
	return compiled{t, func(r *record.Record) (Value, error) {
		for _, f := range fs {
			if v, err := f(r); err != nil || !v.Null {
				return v, err
			}
		}
		return nullOf(t), nil
	}}, nil
}

// caseExpr compiles both forms of CASE.
func (c *compiler) caseExpr(n *node) (compiled, error) {
	xs, err := c.compileAll(n.args)
	if err != nil {
		return compiled{}, err
	}
	args := n.args
	var operand compiled
	if n.hasOperand {
		operand, xs, args = xs[0], xs[1:], args[1:]
	}
	var conds []compiled
	var condNodes, resNodes []*node
	var results []compiled
	for i := 0; i+1 < len(xs); i += 2 {
		conds, condNodes = append(conds, xs[i]), append(condNodes, args[i])
		results, resNodes = append(results, xs[i+1]), append(resNodes, args[i+1])
	}
	if n.hasElse {
		results, resNodes = append(results, xs[len(xs)-1]), append(resNodes, args[len(args)-1])
	}
	t, fs, err := c.branches("results of CASE", resNodes, results)
	if err != nil {
		return compiled{}, err
	}
	els := func(*record.Record) (Value, error) { return nullOf(t), nil }
	if n.hasElse {
		els = fs[len(fs)-1]
	}
	thens := fs[:len(conds)]
	if n.hasOperand {
		return c.simpleCase(n, operand, conds, condNodes, thens, els, t)
	}
	whens := make([]evalFn, len(conds))
	for i, x := range conds {
		if err := c.wantBoolean(condNodes[i], x, "a WHEN condition"); err != nil {
			return compiled{}, err
		}
		whens[i] = x.eval
	}
	return compiled{t, func(r *record.Record) (Value, error) {
		for i, when := range whens {
			v, err := when(r)
			if err != nil {
				return v, err
			}
			if !v.Null && v.Bool {
				return thens[i](r)
			}
		}
		return els(r)
	}}, nil
}

// simpleCase compiles CASE x WHEN v THEN ... : the first v equal to x.
func (c *compiler) simpleCase(n *node, operand compiled, vals []compiled, valNodes []*node, thens []evalFn, els evalFn, t Type) (compiled, error) {
	ct, fs, err := c.comparable(n, operand, valNodes, vals)
	if err != nil {
		return compiled{}, err
	}
	x, whens := fs[0], fs[1:]
	return compiled{t, func(r *record.Record) (Value, error) {
		a, err := x(r)
		if err != nil {
			return a, err
		}
		if !a.Null {
			for i, when := range whens {
				b, err := when(r)
				if err != nil {
					return b, err
				}
				if !b.Null && compareValues(ct, &a, &b) == 0 {
					return thens[i](r)
				}
			}
		}
		return els(r)
	}}, nil
}

// comparable finds the type x and each of ys (at yns) are compared in by
// n (IN, BETWEEN, CASE x), and returns x's then ys' closures converted to
// it; a failing implicit cast names n.
func (c *compiler) comparable(n *node, x compiled, yns []*node, ys []compiled) (Type, []evalFn, error) {
	t := x.typ
	for i, y := range ys {
		u, ok := compareType(t, y.typ)
		if !ok {
			return 0, nil, c.errAt(yns[i].pos, "cannot compare %s with %s", t, y.typ)
		}
		t = u
	}
	text := c.text(n)
	fs := []evalFn{coerce(x, t, text)}
	for _, y := range ys {
		fs = append(fs, coerce(y, t, text))
	}
	return t, fs, nil
}

// comparableArgs compiles the arguments of n (IN, BETWEEN), the first
// compared with each other one, and returns them as comparable does.
func (c *compiler) comparableArgs(n *node) (Type, []evalFn, error) {
	xs, err := c.compileAll(n.args)
	if err != nil {
		return 0, nil, err
	}
	return c.comparable(n, xs[0], n.args[1:], xs[1:])
}

// in compiles x [NOT] IN (a, ...): TRUE if x equals one, else NULL if x or
// one of them is NULL, else FALSE (negated for NOT IN).
func (c *compiler) in(n *node) (compiled, error) {
	t, fs, err := c.comparableArgs(n)
	if err != nil {
		return compiled{}, err
	}
	x, items, not := fs[0], fs[1:], n.not
	return compiled{TypeBoolean, func(r *record.Record) (Value, error) {
		a, err := x(r)
		if err != nil || a.Null {
			return nullOf(TypeBoolean), err
		}
		sawNull := false
		for _, item := range items {
			b, err := item(r)
			if err != nil {
				return b, err
			}
			if b.Null {
				sawNull = true
			} else if compareValues(t, &a, &b) == 0 {
				return Value{Type: TypeBoolean, Bool: !not}, nil
			}
		}
		if sawNull {
			return nullOf(TypeBoolean), nil
		}
		return Value{Type: TypeBoolean, Bool: not}, nil
	}}, nil
}

// between compiles x [NOT] BETWEEN lo AND hi: lo <= x AND x <= hi with
// three-valued logic, x evaluated once.
func (c *compiler) between(n *node) (compiled, error) {
	t, fs, err := c.comparableArgs(n)
	if err != nil {
		return compiled{}, err
	}
	fx, flo, fhi, not := fs[0], fs[1], fs[2], n.not
	return compiled{TypeBoolean, func(r *record.Record) (Value, error) {
		x, err := fx(r)
		if err != nil || x.Null {
			return nullOf(TypeBoolean), err
		}
		lo, err := flo(r)
		if err != nil {
			return lo, err
		}
		if !lo.Null && compareValues(t, &lo, &x) > 0 {
			return Value{Type: TypeBoolean, Bool: not}, nil
		}
		hi, err := fhi(r)
		if err != nil {
			return hi, err
		}
		if !hi.Null && compareValues(t, &x, &hi) > 0 {
			return Value{Type: TypeBoolean, Bool: not}, nil
		}
		return Value{Type: TypeBoolean, Bool: !not, Null: lo.Null || hi.Null}, nil
	}}, nil
}

// didYouMean suggests the name in names closest to name, if one is close.
func didYouMean(name string, names []string) string {
	best, bestD := "", 3
	for _, cand := range names {
		if d := editDistance(strings.ToLower(name), strings.ToLower(cand)); d < bestD {
			best, bestD = cand, d
		}
	}
	if best == "" || len(name) <= bestD {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
