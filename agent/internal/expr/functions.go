package expr

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"
)

// The built-in functions that evaluate all their arguments, with Databricks
// SQL's semantics under ANSI mode. Arguments of a STRING position may be of
// any type Spark casts to STRING implicitly (numbers, BOOLEAN, DATE,
// TIMESTAMP), converted as cast(x AS STRING) does; BINARY is refused with a
// hint to cast it. A NULL argument makes the result NULL unless the function
// says otherwise.
func init() {
	for name, f := range map[string]*function{
		"lower":           stringFunc(strings.ToLower),
		"upper":           stringFunc(strings.ToUpper),
		"trim":            trimFunc(strings.Trim),
		"ltrim":           trimFunc(strings.TrimLeft),
		"rtrim":           trimFunc(strings.TrimRight),
		"concat":          {minArgs: 0, maxArgs: -1, check: checkConcat, eval: evalConcat},
		"concat_ws":       {minArgs: 1, maxArgs: -1, check: checkConcatWS, eval: evalConcatWS},
		"substring":       substringFunc(),
		"substr":          substringFunc(),
		"replace":         {minArgs: 2, maxArgs: 3, check: returns(TypeString, argString), eval: evalReplace},
		"regexp_replace":  {minArgs: 3, maxArgs: 4, check: returns(TypeString, argString, argString, argString, argInt), eval: evalRegexpReplace},
		"regexp_extract":  {minArgs: 2, maxArgs: 3, check: returns(TypeString, argString, argString, argInt), eval: evalRegexpExtract},
		"split":           {minArgs: 2, maxArgs: 3, check: returns(TypeStringArray, argString, argString, argInt), eval: evalSplit},
		"element_at":      elementAtFunc(false),
		"try_element_at":  elementAtFunc(true),
		"length":          {minArgs: 1, maxArgs: 1, check: checkLength, eval: evalLength},
		"date_format":     {minArgs: 2, maxArgs: 2, check: returns(TypeString, argTimestamp, argString), eval: evalDateFormat},
		"get_json_object": {minArgs: 2, maxArgs: 2, check: checkGetJSONObject, eval: evalGetJSONObject},
	} {
		functions[name] = f
	}
}

// argKind is what an argument position accepts.
type argKind uint8

// The argument kinds. NULL fits every kind.
const (
	// argString is STRING or a type cast to it implicitly.
	argString argKind = iota
	// argInt is INT or BIGINT.
	argInt
	// argStringOrBinary is STRING (or implicitly cast to it) or BINARY.
	argStringOrBinary
	// argStringOrArray is STRING (or implicitly cast to it) or ARRAY<STRING>.
	argStringOrArray
	// argArray is ARRAY<STRING> or headers.
	argArray
	// argTimestamp is TIMESTAMP, DATE or STRING (cast to TIMESTAMP).
	argTimestamp
)

// castsToString says whether Spark casts t to STRING implicitly.
func castsToString(t Type) bool {
	switch t {
	case TypeString, TypeInt, TypeBigInt, TypeDouble, TypeBoolean, TypeDate, TypeTimestamp:
		return true
	}
	return false
}

// fits says whether an argument of type t fits kind k.
func (k argKind) fits(t Type) bool {
	switch {
	case t == TypeNull:
		return true
	case k == argString:
		return castsToString(t)
	case k == argInt:
		return t == TypeInt || t == TypeBigInt
	case k == argStringOrBinary:
		return castsToString(t) || t == TypeBinary
	case k == argStringOrArray:
		return castsToString(t) || t == TypeStringArray
	case k == argArray:
		return t == TypeStringArray || t == TypeHeaders
	}
	return t == TypeTimestamp || t == TypeDate || t == TypeString
}

// expected says what kind k expects, and how to fix an argument that
// does not fit.
func (k argKind) expected() string {
	switch k {
	case argString:
		return "STRING"
	case argInt:
		return "INT"
	case argStringOrBinary:
		return "STRING or BINARY"
	case argStringOrArray:
		return "STRING or ARRAY<STRING>"
	case argArray:
		return "an array (ARRAY<STRING> or headers)"
	}
	return "TIMESTAMP"
}

// checkArgs checks args against kinds, the last kind repeating for any
// further arguments. Its message leaves out the function's name, which
// the compiler puts before it.
func checkArgs(args []Type, kinds ...argKind) error {
	for i, t := range args {
		k := kinds[min(i, len(kinds)-1)]
		if k.fits(t) {
			continue
		}
		msg := fmt.Sprintf("expects %s, got %s as argument %d", k.expected(), t.String(), i+1)
		switch k {
		case argString, argInt, argTimestamp:
			msg += "; cast it to " + k.expected()
		}
		return errors.New(msg)
	}
	return nil
}

// returns is a check function for a function of result type t whose
// arguments have kinds.
func returns(t Type, kinds ...argKind) func([]Type) (Type, error) {
	return func(args []Type) (Type, error) {
		return t, checkArgs(args, kinds...)
	}
}

// stringValue is a STRING value.
func stringValue(s string) Value { return Value{Type: TypeString, Str: s} }

// anyNull says whether an argument is NULL.
func anyNull(args []Value) bool {
	for i := range args {
		if args[i].Null {
			return true
		}
	}
	return false
}

// asString returns the text of v, not NULL, cast to STRING if it is not one.
func asString(v *Value) (string, error) {
	if v.Type == TypeString {
		return v.Str, nil
	}
	s, err := castValue(*v, TypeString)
	if err != nil {
		return "", fmt.Errorf("casting %s to STRING: %w", v.Type.String(), err)
	}
	return s.Str, nil
}

// stringArgs starts a function of STRINGs: null true when any argument
// is NULL, else the text of the first n arguments, appended to buf.
func stringArgs(args []Value, n int, buf []string) (s []string, null bool, err error) {
	if anyNull(args) {
		return nil, true, nil
	}
	for i := range args[:n] {
		t, err := asString(&args[i])
		if err != nil {
			return nil, false, err
		}
		buf = append(buf, t)
	}
	return buf, false, nil
}

// asInt32 returns v, an INT or BIGINT, as an INT: a BIGINT out of its
// range is an error, as the ANSI cast Spark inserts.
func asInt32(v *Value) (int, error) {
	if v.Int < math.MinInt32 || v.Int > math.MaxInt32 {
		return 0, fmt.Errorf("%d is out of the range of INT", v.Int)
	}
	return int(v.Int), nil
}

// stringFunc is a function of one STRING.
func stringFunc(f func(string) string) *function {
	return &function{
		minArgs: 1, maxArgs: 1,
		check: returns(TypeString, argString),
		eval: func(args []Value) (Value, error) {
			if args[0].Null {
				return nullOf(TypeString), nil
			}
			s, err := asString(&args[0])
			if err != nil {
				return Value{}, err
			}
			return stringValue(f(s)), nil
		},
	}
}

// trimFunc is trim, ltrim or rtrim, which trim does: f(str) removes
// spaces (only ' ', as Spark), f(trimStr, str) the characters of trimStr
// (Databricks puts the characters first).
func trimFunc(trim func(s, cutset string) string) *function {
	return &function{
		minArgs: 1, maxArgs: 2,
		check: returns(TypeString, argString),
		eval: func(args []Value) (Value, error) {
			var buf [2]string
			s, null, err := stringArgs(args, len(args), buf[:0])
			if null || err != nil {
				return nullOf(TypeString), err
			}
			if len(s) == 1 {
				return stringValue(trim(s[0], " ")), nil
			}
			return stringValue(trim(s[1], s[0])), nil
		},
	}
}

// checkConcat: concat of strings (and types cast to STRING) is a STRING,
// of BINARY values a BINARY, of arrays an ARRAY<STRING>.
func checkConcat(args []Type) (Type, error) {
	result := TypeString
	for _, t := range args {
		if t != TypeNull {
			result = t
			break
		}
	}
	switch result {
	case TypeBinary:
		for i, t := range args {
			if t != TypeBinary && t != TypeNull {
				return 0, fmt.Errorf("BINARY concatenates only with BINARY, got %s as argument %d; cast the BINARY arguments to STRING", t.String(), i+1)
			}
		}
		return TypeBinary, nil
	case TypeStringArray:
		for i, t := range args {
			if t != TypeStringArray && t != TypeNull {
				return 0, fmt.Errorf("an array concatenates only with arrays, got %s as argument %d", t.String(), i+1)
			}
		}
		return TypeStringArray, nil
	}
	return TypeString, checkArgs(args, argString)
}

// evalConcat concatenates; any NULL argument makes it NULL.
func evalConcat(args []Value) (Value, error) {
	t := TypeString
	for i := range args {
		if args[i].Type != TypeNull {
			t = args[i].Type
			break
		}
	}
	if t != TypeBinary && t != TypeStringArray {
		t = TypeString
	}
	if anyNull(args) {
		return nullOf(t), nil
	}
	switch t {
	case TypeBinary:
		var b []byte
		for i := range args {
			b = append(b, args[i].Bytes...)
		}
		if b == nil {
			b = []byte{}
		}
		return Value{Type: TypeBinary, Bytes: b}, nil
	case TypeStringArray:
		var strs []string
		for i := range args {
			strs = append(strs, args[i].Strs...)
		}
		return Value{Type: TypeStringArray, Strs: strs}, nil
	}
	var sb strings.Builder
	for i := range args {
		s, err := asString(&args[i])
		if err != nil {
			return Value{}, err
		}
		sb.WriteString(s)
	}
	return stringValue(sb.String()), nil
}

// checkConcatWS: concat_ws(sep, STRING or ARRAY<STRING>, ...).
func checkConcatWS(args []Type) (Type, error) {
	return TypeString, checkArgs(args, argString, argStringOrArray)
}

// evalConcatWS joins the arguments after the separator with it, skipping
// NULLs; a NULL separator makes it NULL.
func evalConcatWS(args []Value) (Value, error) {
	if args[0].Null {
		return nullOf(TypeString), nil
	}
	sep, err := asString(&args[0])
	if err != nil {
		return Value{}, err
	}
	var sb strings.Builder
	first := true
	add := func(s string) {
		if !first {
			sb.WriteString(sep)
		}
		sb.WriteString(s)
		first = false
	}
	for i := range args[1:] {
		a := &args[1+i]
		switch {
		case a.Null:
		case a.Type == TypeStringArray:
			for _, s := range a.Strs {
				add(s)
			}
		default:
			s, err := asString(a)
			if err != nil {
				return Value{}, err
			}
			add(s)
		}
	}
	return stringValue(sb.String()), nil
}

// firstTyped is a function of minArgs to maxArgs arguments of kinds whose
// result is of type then when its first argument is of type when, else a
// STRING: substring of BINARY, element_at of headers. Any NULL argument
// makes it NULL; eval gets the result type and the arguments, none NULL.
func firstTyped(minArgs, maxArgs int, when, then Type, kinds []argKind, eval func(t Type, args []Value) (Value, error)) *function {
	return &function{
		minArgs: minArgs, maxArgs: maxArgs,
		check: func(args []Type) (Type, error) {
			return pick(args[0] == when, then, TypeString), checkArgs(args, kinds...)
		},
		eval: func(args []Value) (Value, error) {
			t := pick(args[0].Type == when, then, TypeString)
			if anyNull(args) {
				return nullOf(t), nil
			}
			return eval(t, args)
		},
	}
}

// substringFunc is substring or substr(str, pos[, len]) with Spark's
// positions: 1-based, 0 as 1, negative from the end; on STRING they count
// characters, on BINARY bytes.
func substringFunc() *function {
	return firstTyped(2, 3, TypeBinary, TypeBinary, []argKind{argStringOrBinary, argInt},
		func(t Type, args []Value) (Value, error) {
			pos, err := asInt32(&args[1])
			if err != nil {
				return Value{}, err
			}
			n := math.MaxInt32
			if len(args) == 3 {
				if n, err = asInt32(&args[2]); err != nil {
					return Value{}, err
				}
			}
			if t == TypeBinary {
				b := args[0].Bytes
				from, to := substringRange(len(b), pos, n)
				return Value{Type: TypeBinary, Bytes: b[from:to]}, nil
			}
			s, err := asString(&args[0])
			if err != nil {
				return Value{}, err
			}
			from, to := substringRange(utf8.RuneCountInString(s), pos, n)
			return stringValue(s[runeOffset(s, from):runeOffset(s, to)]), nil
		})
}

// substringRange returns the range [from, to) of a sequence of size
// elements that Spark's substring(pos, n) selects.
func substringRange(size, pos, n int) (from, to int) {
	start := int64(0)
	switch {
	case pos > 0:
		start = int64(pos) - 1
	case pos < 0:
		start = int64(size) + int64(pos)
	}
	end := start + int64(n)
	start = max(start, 0)
	if start >= end || start >= int64(size) {
		return 0, 0
	}
	return int(start), int(min(end, int64(size)))
}

// runeOffset returns the byte offset of the n-th character of s.
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// evalReplace is replace(str, search[, replace]): every occurrence of
// search replaced (by nothing by default); an empty search changes nothing.
func evalReplace(args []Value) (Value, error) {
	var buf [3]string
	s, null, err := stringArgs(args, len(args), buf[:0])
	if null || err != nil {
		return nullOf(TypeString), err
	}
	if len(s) == 2 {
		s = append(s, "")
	}
	if s[1] == "" {
		return stringValue(s[0]), nil
	}
	return stringValue(strings.ReplaceAll(s[0], s[1], s[2])), nil
}

// memo memoizes a compile function by the text it compiles: a regular
// expression, a JSON path or a datetime pattern, arguments that are nearly
// always literals. It is safe for concurrent use, and cleared when it holds
// maxMemo entries, so text computed per record cannot grow it without
// bound.
type memo[V any] struct {
	m sync.Map // string → V
	n atomic.Int64
}

// maxMemo bounds each memo.
const maxMemo = 256

// get returns compile(key), compiling it on the first call.
func (c *memo[V]) get(key string, compile func(string) V) V {
	if v, ok := c.m.Load(key); ok {
		return v.(V)
	}
	v := compile(key)
	if c.n.Add(1) > maxMemo {
		c.m.Clear()
		c.n.Store(1)
	}
	c.m.Store(key, v)
	return v
}

// compiledRegexp is a compiled pattern, or the error compiling it.
type compiledRegexp struct {
	re  *regexp.Regexp
	err error
}

// regexps holds the compiled patterns.
var regexps memo[compiledRegexp]

// compileRegexp returns the compiled pattern. Patterns are Java regular
// expressions in Spark; this runs them with Go's RE2 syntax and semantics,
// which agree on the common subset. A pattern RE2 does not accept
// (lookaround, backreferences, possessive quantifiers) is an error naming
// it.
func compileRegexp(pattern string) (*regexp.Regexp, error) {
	c := regexps.get(pattern, func(p string) compiledRegexp {
		re, err := regexp.Compile(p)
		return compiledRegexp{re, err}
	})
	if c.err != nil {
		return nil, fmt.Errorf("the regular expression %q is not supported (RE2 syntax, no lookaround or backreferences): %w", pattern, c.err)
	}
	return c.re, nil
}

// evalRegexpReplace is regexp_replace(str, regexp, rep[, position]): every
// match from character position (1-based, default 1) on replaced by rep,
// in which $n and ${name} are groups and a backslash escapes the next
// character, as in Java.
func evalRegexpReplace(args []Value) (Value, error) {
	var buf [3]string
	s, null, err := stringArgs(args, 3, buf[:0])
	if null || err != nil {
		return nullOf(TypeString), err
	}
	src, rep := s[0], s[2]
	re, err := compileRegexp(s[1])
	if err != nil {
		return Value{}, err
	}
	prefix := 0
	if len(args) == 4 {
		pos, err := asInt32(&args[3])
		if err != nil {
			return Value{}, err
		}
		if pos <= 0 {
			return Value{}, fmt.Errorf("the position must be positive, got %d", pos)
		}
		if pos > utf8.RuneCountInString(src) {
			return stringValue(src), nil
		}
		prefix = runeOffset(src, pos-1)
	}
	matches := re.FindAllStringSubmatchIndex(src[prefix:], -1)
	if matches == nil {
		return stringValue(src), nil
	}
	out := make([]byte, 0, len(src))
	out = append(out, src[:prefix]...)
	last := 0
	tail := src[prefix:]
	for _, m := range matches {
		out = append(out, tail[last:m[0]]...)
		if out, err = appendJavaReplacement(out, rep, tail, m, re); err != nil {
			return Value{}, fmt.Errorf("replacement %q: %w", rep, err)
		}
		last = m[1]
	}
	out = append(out, tail[last:]...)
	return stringValue(string(out)), nil
}

// appendJavaReplacement appends the replacement rep of match m of src as
// Java's Matcher.appendReplacement does: $n is group n (as many digits as
// name an existing group), ${name} a named group, \c the character c.
func appendJavaReplacement(dst []byte, rep, src string, m []int, re *regexp.Regexp) ([]byte, error) {
	groups := re.NumSubexp()
	group := func(n int) {
		if m[2*n] >= 0 {
			dst = append(dst, src[m[2*n]:m[2*n+1]]...)
		}
	}
	for i := 0; i < len(rep); i++ {
		switch c := rep[i]; c {
		case '\\':
			if i++; i == len(rep) {
				return nil, fmt.Errorf("the character to be escaped is missing")
			}
			dst = append(dst, rep[i])
		case '$':
			if i++; i == len(rep) {
				return nil, fmt.Errorf("illegal group reference: group index is missing")
			}
			if rep[i] == '{' {
				end := strings.IndexByte(rep[i:], '}')
				if end < 0 {
					return nil, fmt.Errorf("named capturing group is missing trailing '}'")
				}
				name := rep[i+1 : i+end]
				n := re.SubexpIndex(name)
				if n < 0 {
					return nil, fmt.Errorf("no group with name {%s}", name)
				}
				group(n)
				i += end
				continue
			}
			if rep[i] < '0' || rep[i] > '9' {
				return nil, fmt.Errorf("illegal group reference")
			}
			n := int(rep[i] - '0')
			for i+1 < len(rep) && rep[i+1] >= '0' && rep[i+1] <= '9' && n*10+int(rep[i+1]-'0') <= groups {
				n = n*10 + int(rep[i+1]-'0')
				i++
			}
			if n > groups {
				return nil, fmt.Errorf("no group %d", n)
			}
			group(n)
		default:
			dst = append(dst, c)
		}
	}
	return dst, nil
}

// evalRegexpExtract is regexp_extract(str, regexp[, idx]): group idx
// (default 1; 0 the whole match) of the first match, "" when nothing
// matches or the group did not take part. A group the pattern does not
// have is an error, as in Spark.
func evalRegexpExtract(args []Value) (Value, error) {
	var buf [2]string
	s, null, err := stringArgs(args, 2, buf[:0])
	if null || err != nil {
		return nullOf(TypeString), err
	}
	re, err := compileRegexp(s[1])
	if err != nil {
		return Value{}, err
	}
	idx := 1
	if len(args) == 3 {
		if idx, err = asInt32(&args[2]); err != nil {
			return Value{}, err
		}
	}
	if idx < 0 || idx > re.NumSubexp() {
		return Value{}, fmt.Errorf("the regular expression %q has %d groups; the group index must be between 0 and %d, got %d",
			s[1], re.NumSubexp(), re.NumSubexp(), idx)
	}
	m := re.FindStringSubmatchIndex(s[0])
	if m == nil || m[2*idx] < 0 {
		return stringValue(""), nil
	}
	return stringValue(s[0][m[2*idx]:m[2*idx+1]]), nil
}

// evalSplit is split(str, regex[, limit]) as Spark's (Java's String.split
// with trailing empty strings kept): limit > 0 gives at most limit
// elements, the last holding the rest; limit <= 0 (the default -1) splits
// at every match. A zero-width match at the start gives no empty first
// element, and an empty regex splits between characters.
func evalSplit(args []Value) (Value, error) {
	var buf [2]string
	s, null, err := stringArgs(args, 2, buf[:0])
	if null || err != nil {
		return nullOf(TypeStringArray), err
	}
	limit := -1
	if len(args) == 3 {
		if limit, err = asInt32(&args[2]); err != nil {
			return Value{}, err
		}
	}
	str := s[0]
	if s[1] == "" && str != "" {
		n := utf8.RuneCountInString(str)
		if limit > 0 && limit < n {
			n = limit
		}
		out := make([]string, 0, n)
		for i := range str {
			if len(out) == n-1 {
				out = append(out, str[i:])
				break
			}
			_, size := utf8.DecodeRuneInString(str[i:])
			out = append(out, str[i:i+size])
		}
		return Value{Type: TypeStringArray, Strs: out}, nil
	}
	re, err := compileRegexp(s[1])
	if err != nil {
		return Value{}, err
	}
	var out []string
	index := 0
	for _, m := range re.FindAllStringIndex(str, -1) {
		if limit > 0 && len(out) == limit-1 {
			break
		}
		if m[1] == 0 { // a zero-width match at the start
			continue
		}
		out = append(out, str[index:m[0]])
		index = m[1]
	}
	return Value{Type: TypeStringArray, Strs: append(out, str[index:])}, nil
}

// elementAtFunc is element_at(array, index) on ARRAY<STRING> (a STRING)
// or headers (one header): index 1 is the first element, -1 the last, 0 is
// an error. An index past either end is an error under ANSI mode, as in
// Databricks SQL, unless orNull (try_element_at), which makes it NULL.
func elementAtFunc(orNull bool) *function {
	return firstTyped(2, 2, TypeHeaders, TypeHeader, []argKind{argArray, argInt},
		func(t Type, args []Value) (Value, error) {
			size := len(args[0].Strs)
			if t == TypeHeader {
				size = len(args[0].Headers)
			}
			i := args[1].Int
			switch {
			case i == 0:
				return Value{}, fmt.Errorf("the index 0 is invalid: the first element is 1 and the last -1")
			case i > int64(size) || i < -int64(size):
				if orNull {
					return nullOf(t), nil
				}
				return Value{}, fmt.Errorf("the index %d is out of bounds: the array has %d elements; try_element_at returns NULL instead", i, size)
			case i < 0:
				i += int64(size)
			default:
				i--
			}
			if t == TypeHeader {
				return Value{Type: TypeHeader, Header: args[0].Headers[i]}, nil
			}
			return stringValue(args[0].Strs[i]), nil
		})
}

// checkLength: length(STRING or BINARY) is an INT.
func checkLength(args []Type) (Type, error) {
	return TypeInt, checkArgs(args, argStringOrBinary)
}

// evalLength is the number of characters of a STRING, of bytes of a
// BINARY.
func evalLength(args []Value) (Value, error) {
	a := &args[0]
	switch {
	case a.Null:
		return nullOf(TypeInt), nil
	case a.Type == TypeBinary:
		return Value{Type: TypeInt, Int: int64(len(a.Bytes))}, nil
	}
	s, err := asString(a)
	if err != nil {
		return Value{}, err
	}
	return Value{Type: TypeInt, Int: int64(utf8.RuneCountInString(s))}, nil
}

// checkGetJSONObject: get_json_object(STRING, STRING) is a STRING; a
// BINARY document must be cast first, as for the : operator.
func checkGetJSONObject(args []Type) (Type, error) {
	return TypeString, checkArgs(args, argString)
}

// jsonPaths holds the parsed get_json_object paths.
var jsonPaths memo[*parsedJSONPath]

// parsedJSONPath is a parsed get_json_object path.
type parsedJSONPath struct {
	steps []PathStep
	ok    bool
	err   error
}

// evalGetJSONObject is get_json_object(json, path) as Spark's: names in
// the path match exactly; a path Spark does not parse, a missing field, a
// null field or invalid JSON is NULL. Wildcards are refused with an error.
func evalGetJSONObject(args []Value) (Value, error) {
	var buf [2]string
	s, null, err := stringArgs(args, len(args), buf[:0])
	if null || err != nil {
		return nullOf(TypeString), err
	}
	p := jsonPaths.get(s[1], func(src string) *parsedJSONPath {
		p := &parsedJSONPath{}
		p.steps, p.ok, p.err = parseGetJSONPath(src)
		return p
	})
	switch {
	case p.err != nil:
		return Value{}, p.err
	case !p.ok:
		return nullOf(TypeString), nil
	}
	out, ok := jsonExtract(stringBytes(s[0]), p.steps, true)
	if !ok {
		return nullOf(TypeString), nil
	}
	return stringValue(out), nil
}

// stringBytes returns the bytes of s without copying them, for readers that
// never write to them (the JSON scanner).
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// asMicros returns v, not NULL, as microseconds since the epoch: a
// TIMESTAMP as it is, a DATE at its midnight UTC, a STRING cast to
// TIMESTAMP.
func asMicros(v *Value) (int64, error) {
	switch v.Type {
	case TypeTimestamp:
		return v.Int, nil
	case TypeDate:
		return v.Int * 86_400_000_000, nil
	}
	t, err := castValue(*v, TypeTimestamp)
	if err != nil {
		return 0, fmt.Errorf("casting %s to TIMESTAMP: %w", v.Type.String(), err)
	}
	return t.Int, nil
}

// evalDateFormat is date_format(ts, fmt): ts formatted in UTC, the agent's
// session time zone, with Spark's datetime pattern fmt.
func evalDateFormat(args []Value) (Value, error) {
	if anyNull(args) {
		return nullOf(TypeString), nil
	}
	micros, err := asMicros(&args[0])
	if err != nil {
		return Value{}, err
	}
	pattern, err := asString(&args[1])
	if err != nil {
		return Value{}, err
	}
	f := dateFormats.get(pattern, compileDateFormat)
	if f.err != nil {
		return Value{}, fmt.Errorf("pattern %q: %w", pattern, f.err)
	}
	var buf [64]byte
	return stringValue(string(f.append(buf[:0], time.UnixMicro(micros).UTC()))), nil
}

// dateFormats holds the compiled date_format patterns.
var dateFormats memo[*dateFormat]

// dateFormat is a compiled Spark datetime pattern for formatting, or the
// error that the pattern has.
type dateFormat struct {
	elems []dateElem
	err   error
}

// dateElem is a pattern letter repeated n times, or the literal lit when
// letter is 0.
type dateElem struct {
	letter byte
	n      int
	lit    string
}

// dateLetterMax holds the most repetitions of each pattern letter Spark
// formats with.
var dateLetterMax = map[byte]int{
	'G': 4, 'y': 6, 'M': 4, 'L': 4, 'Q': 4, 'q': 4, 'd': 2, 'D': 3, 'E': 4, 'a': 1,
	'H': 2, 'h': 2, 'K': 2, 'k': 2, 'm': 2, 's': 2, 'S': 9, 'V': 2, 'z': 4, 'O': 4,
	'X': 5, 'x': 5, 'Z': 5,
}

// compileDateFormat compiles a Spark datetime pattern: the letters of
// dateLetterMax (text in English), text in single quotes (” is a quote),
// optional sections [...] (always printed) and other characters as
// literals. Week-based letters (Y, w, W, u, e, c), which Spark refuses
// since 3.0, and the letters Spark does not support are errors.
func compileDateFormat(p string) *dateFormat {
	f := &dateFormat{}
	fail := func(format string, a ...any) *dateFormat {
		f.elems, f.err = nil, fmt.Errorf(format, a...)
		return f
	}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case strings.HasPrefix(p[i:], "''"):
			f.elems = append(f.elems, dateElem{lit: "'"})
			i += 2
		case c == '\'':
			var lit strings.Builder
			j := i + 1
			for ; ; j++ {
				switch {
				case j >= len(p):
					return fail("unterminated quote at position %d", i+1)
				case p[j] != '\'':
					lit.WriteByte(p[j])
					continue
				case j+1 < len(p) && p[j+1] == '\'':
					lit.WriteByte('\'')
					j++
					continue
				}
				break
			}
			f.elems = append(f.elems, dateElem{lit: lit.String()})
			i = j + 1
		case c == '[' || c == ']':
			i++
		case c == '{' || c == '}' || c == '#':
			return fail("%q at position %d is reserved", c, i+1)
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			n := 1
			for i+n < len(p) && p[i+n] == c {
				n++
			}
			most, ok := dateLetterMax[c]
			switch {
			case strings.IndexByte("YwWuec", c) >= 0:
				return fail("%q at position %d: week-based patterns are not supported (as in Spark 3.0 and later)", c, i+1)
			case !ok:
				return fail("%q at position %d: unsupported pattern letter", c, i+1)
			case n > most, c == 'V' && n != 2, c == 'O' && n != 1 && n != 4:
				return fail("%q at position %d: wrong number of pattern letters", strings.Repeat(string(c), n), i+1)
			}
			f.elems = append(f.elems, dateElem{letter: c, n: n})
			i += n
		default:
			j := i + 1
			for j < len(p) && !strings.ContainsRune("'[]{}#", rune(p[j])) && !isASCIILetter(p[j]) {
				j++
			}
			f.elems = append(f.elems, dateElem{lit: p[i:j]})
			i = j
		}
	}
	return f
}

// isASCIILetter says whether c is an ASCII letter.
func isASCIILetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// append appends t, in UTC, formatted.
func (f *dateFormat) append(dst []byte, t time.Time) []byte {
	for _, e := range f.elems {
		n := e.n
		switch e.letter {
		case 0:
			dst = append(dst, e.lit...)
		case 'G':
			dst = append(dst, pick(t.Year() > 0, pick(n < 4, "AD", "Anno Domini"), pick(n < 4, "BC", "Before Christ"))...)
		case 'y':
			y := t.Year()
			if y <= 0 {
				y = 1 - y
			}
			if n == 2 {
				dst = appendPadded(dst, y%100, 2)
				break
			}
			if n >= 4 && y >= int(math.Pow10(n)) {
				dst = append(dst, '+')
			}
			dst = appendPadded(dst, y, n)
		case 'M', 'L':
			switch n {
			case 3:
				dst = append(dst, t.Month().String()[:3]...)
			case 4:
				dst = append(dst, t.Month().String()...)
			default:
				dst = appendPadded(dst, int(t.Month()), n)
			}
		case 'Q', 'q':
			q := (int(t.Month())-1)/3 + 1
			switch n {
			case 3:
				dst = append(dst, 'Q', byte('0'+q))
			case 4:
				dst = append(dst, [...]string{"1st", "2nd", "3rd", "4th"}[q-1]+" quarter"...)
			default:
				dst = appendPadded(dst, q, n)
			}
		case 'd':
			dst = appendPadded(dst, t.Day(), n)
		case 'D':
			dst = appendPadded(dst, t.YearDay(), n)
		case 'E':
			dst = append(dst, pick(n < 4, t.Weekday().String()[:3], t.Weekday().String())...)
		case 'a':
			dst = append(dst, pick(t.Hour() < 12, "AM", "PM")...)
		case 'H':
			dst = appendPadded(dst, t.Hour(), n)
		case 'k':
			dst = appendPadded(dst, pick(t.Hour() == 0, 24, t.Hour()), n)
		case 'h':
			dst = appendPadded(dst, pick(t.Hour()%12 == 0, 12, t.Hour()%12), n)
		case 'K':
			dst = appendPadded(dst, t.Hour()%12, n)
		case 'm':
			dst = appendPadded(dst, t.Minute(), n)
		case 's':
			dst = appendPadded(dst, t.Second(), n)
		case 'S':
			var buf [9]byte
			dst = append(dst, appendPadded(buf[:0], t.Nanosecond(), 9)[:n]...)
		case 'V':
			dst = append(dst, "UTC"...)
		case 'z':
			dst = append(dst, pick(n < 4, "UTC", "Coordinated Universal Time")...)
		case 'O':
			dst = append(dst, "GMT"...)
		case 'X':
			dst = append(dst, 'Z')
		case 'x':
			dst = append(dst, [...]string{"+00", "+0000", "+00:00", "+0000", "+00:00"}[n-1]...)
		case 'Z':
			dst = append(dst, [...]string{"+0000", "+0000", "+0000", "GMT", "Z"}[n-1]...)
		}
	}
	return dst
}

// pick is a if cond, else b.
func pick[T any](cond bool, a, b T) T {
	if cond {
		return a
	}
	return b
}

// appendPadded appends v, not negative, in decimal with at least width
// digits.
func appendPadded(dst []byte, v, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], int64(v), 10)
	for k := len(s); k < width; k++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}
