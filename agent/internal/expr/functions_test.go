package expr

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// Values for the tables.
func str(s string) Value            { return stringValue(s) }
func i32(n int64) Value             { return Value{Type: TypeInt, Int: n} }
func i64(n int64) Value             { return Value{Type: TypeBigInt, Int: n} }
func bin(b string) Value            { return Value{Type: TypeBinary, Bytes: []byte(b)} }
func arr(s ...string) Value         { return Value{Type: TypeStringArray, Strs: s} }
func dbl(f float64) Value           { return Value{Type: TypeDouble, Float: f} }
func nullLit() Value                { return nullOf(TypeNull) }
func hdrs(h ...record.Header) Value { return Value{Type: TypeHeaders, Headers: h} }
func tsv(t time.Time) Value         { return Value{Type: TypeTimestamp, Int: t.UnixMicro()} }
func datev(days int64) Value        { return Value{Type: TypeDate, Int: days} }
func hdr(k, v string) record.Header { return record.Header{Key: k, Value: []byte(v)} }
func boolv(b bool) Value            { return Value{Type: TypeBoolean, Bool: b} }
func strNull(t Type) Value          { return nullOf(t) }
func hdrv(h record.Header) Value    { return Value{Type: TypeHeader, Header: h} }
func types(args []Value) []Type {
	ts := make([]Type, len(args))
	for i, a := range args {
		ts[i] = a.Type
	}
	return ts
}

// call checks and evaluates function fn on args as the compiler will: the
// argument count, check, then eval. checkErr is check's error, evalErr
// eval's.
func call(t *testing.T, fn string, args ...Value) (v Value, checkErr, evalErr error) {
	t.Helper()
	f := functions[fn]
	if f == nil {
		t.Fatalf("function %s is not registered", fn)
	}
	if len(args) < f.minArgs || (f.maxArgs >= 0 && len(args) > f.maxArgs) {
		t.Fatalf("%s takes %d to %d arguments, the test passes %d", fn, f.minArgs, f.maxArgs, len(args))
	}
	typ, err := f.check(types(args))
	if err != nil {
		return Value{}, fmt.Errorf("%s: %w", fn, err), nil // as the compiler reports it
	}
	v, err = f.eval(args)
	if err == nil && v.Type != typ {
		t.Errorf("%s: eval returned type %s, check said %s", fn, v.Type.String(), typ.String())
	}
	return v, nil, err
}

// castWorks says whether castValue is implemented (it is a stub until the
// core's casts land); tests of implicit casts skip without it.
func castWorks() bool {
	_, err := castValue(Value{Type: TypeInt, Int: 1}, TypeString)
	return err == nil
}

// fnTest is one call and what it should give: want, or a check error
// containing checkErr, or an eval error containing evalErr.
type fnTest struct {
	fn       string
	args     []Value
	want     Value
	checkErr string
	evalErr  string
	// needsCast marks a test of an implicit cast (castValue).
	needsCast bool
}

func runFnTests(t *testing.T, tests []fnTest) {
	t.Helper()
	for _, tt := range tests {
		var sb strings.Builder
		for i, a := range tt.args {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(showValue(a))
		}
		name := tt.fn + "(" + sb.String() + ")"
		t.Run(name, func(t *testing.T) {
			if tt.needsCast && !castWorks() {
				t.Skip("castValue is not implemented yet")
			}
			got, checkErr, evalErr := call(t, tt.fn, tt.args...)
			switch {
			case tt.checkErr != "":
				if checkErr == nil || !strings.Contains(checkErr.Error(), tt.checkErr) {
					t.Fatalf("check error %v, want one containing %q", checkErr, tt.checkErr)
				}
			case checkErr != nil:
				t.Fatalf("check error %v", checkErr)
			case tt.evalErr != "":
				if evalErr == nil || !strings.Contains(evalErr.Error(), tt.evalErr) {
					t.Fatalf("eval error %v (result %s), want one containing %q", evalErr, showValue(got), tt.evalErr)
				}
			case evalErr != nil:
				t.Fatalf("eval error %v", evalErr)
			case !reflect.DeepEqual(got, tt.want):
				t.Fatalf("got %s, want %s", showValue(got), showValue(tt.want))
			}
		})
	}
}

// showValue prints a value for test names and failures.
func showValue(v Value) string {
	var s string
	switch v.Type {
	case TypeString:
		s = "'" + v.Str + "'"
	case TypeBinary:
		s = "X'" + string(v.Bytes) + "'"
	case TypeStringArray:
		s = "[" + strings.Join(v.Strs, "|") + "]"
	case TypeHeader:
		s = v.Header.Key + "=" + string(v.Header.Value)
	case TypeDouble:
		s = fmt.Sprintf("%g", v.Float)
	case TypeBoolean:
		s = fmt.Sprint(v.Bool)
	default:
		s = fmt.Sprintf("%s:%d", v.Type.String(), v.Int)
	}
	if v.Null {
		return "NULL:" + v.Type.String()
	}
	return s
}

func TestStringFunctions(t *testing.T) {
	runFnTests(t, []fnTest{
		{fn: "lower", args: []Value{str("HeLLo Été")}, want: str("hello été")},
		{fn: "lower", args: []Value{strNull(TypeString)}, want: strNull(TypeString)},
		{fn: "lower", args: []Value{nullLit()}, want: strNull(TypeString)},
		{fn: "lower", args: []Value{bin("A")}, checkErr: "lower: expects STRING, got BINARY as argument 1; cast it to STRING"},
		{fn: "lower", args: []Value{arr("A")}, checkErr: "got ARRAY<STRING> as argument 1"},
		{fn: "lower", args: []Value{i32(1)}, want: str("1"), needsCast: true},
		{fn: "upper", args: []Value{str("abc-é")}, want: str("ABC-É")},
		{fn: "upper", args: []Value{strNull(TypeString)}, want: strNull(TypeString)},
		{fn: "upper", args: []Value{hdrs()}, checkErr: "upper: expects STRING, got ARRAY<STRUCT<key: STRING, value: BINARY>>"},

		{fn: "trim", args: []Value{str("  a b  ")}, want: str("a b")},
		{fn: "trim", args: []Value{str("\ta\t")}, want: str("\ta\t")},
		{fn: "ltrim", args: []Value{str("  a  ")}, want: str("a  ")},
		{fn: "rtrim", args: []Value{str("  a  ")}, want: str("  a")},
		{fn: "trim", args: []Value{str("xy"), str("yxaxy")}, want: str("a")},
		{fn: "ltrim", args: []Value{str("xy"), str("yxaxy")}, want: str("axy")},
		{fn: "rtrim", args: []Value{str("xy"), str("yxaxy")}, want: str("yxa")},
		{fn: "trim", args: []Value{strNull(TypeString)}, want: strNull(TypeString)},
		{fn: "trim", args: []Value{nullLit(), str("a")}, want: strNull(TypeString)},
		{fn: "rtrim", args: []Value{str("a"), bin("a")}, checkErr: "rtrim: expects STRING, got BINARY as argument 2"},

		{fn: "length", args: []Value{str("héllo")}, want: i32(5)},
		{fn: "length", args: []Value{str("")}, want: i32(0)},
		{fn: "length", args: []Value{bin("héllo")}, want: i32(6)},
		{fn: "length", args: []Value{strNull(TypeBinary)}, want: strNull(TypeInt)},
		{fn: "length", args: []Value{arr()}, checkErr: "length: expects STRING or BINARY, got ARRAY<STRING>"},
		{fn: "length", args: []Value{i64(12345)}, want: i32(5), needsCast: true},

		{fn: "replace", args: []Value{str("a.b.c"), str(".")}, want: str("abc")},
		{fn: "replace", args: []Value{str("a.b.c"), str("."), str("_")}, want: str("a_b_c")},
		{fn: "replace", args: []Value{str("abc"), str(""), str("_")}, want: str("abc")},
		{fn: "replace", args: []Value{str("abc"), strNull(TypeString), str("_")}, want: strNull(TypeString)},
		{fn: "replace", args: []Value{str("abc"), str("b"), strNull(TypeString)}, want: strNull(TypeString)},
		{fn: "replace", args: []Value{str("abc"), bin("b")}, checkErr: "replace: expects STRING, got BINARY as argument 2"},
	})
}

func TestConcat(t *testing.T) {
	runFnTests(t, []fnTest{
		{fn: "concat", args: []Value{str("a"), str("b"), str("c")}, want: str("abc")},
		{fn: "concat", args: nil, want: str("")},
		{fn: "concat", args: []Value{str("a"), strNull(TypeString)}, want: strNull(TypeString)},
		{fn: "concat", args: []Value{nullLit(), str("a")}, want: strNull(TypeString)},
		{fn: "concat", args: []Value{str("a"), bin("b")}, checkErr: "concat: expects STRING, got BINARY as argument 2; cast it to STRING"},
		{fn: "concat", args: []Value{bin("a"), bin("b")}, want: bin("ab")},
		{fn: "concat", args: []Value{bin("a"), strNull(TypeBinary)}, want: strNull(TypeBinary)},
		{fn: "concat", args: []Value{bin("a"), str("b")}, checkErr: "concat: BINARY concatenates only with BINARY, got STRING as argument 2"},
		{fn: "concat", args: []Value{arr("a"), arr("b", "c")}, want: arr("a", "b", "c")},
		{fn: "concat", args: []Value{arr("a"), str("b")}, checkErr: "concat: an array concatenates only with arrays, got STRING as argument 2"},
		{fn: "concat", args: []Value{str("p-"), i32(7), str("-"), boolv(true)}, want: str("p-7-true"), needsCast: true},

		{fn: "concat_ws", args: []Value{str("-"), str("a"), str("b")}, want: str("a-b")},
		{fn: "concat_ws", args: []Value{str("-")}, want: str("")},
		{fn: "concat_ws", args: []Value{str("-"), str("a"), strNull(TypeString), str("b")}, want: str("a-b")},
		{fn: "concat_ws", args: []Value{str("-"), nullLit()}, want: str("")},
		{fn: "concat_ws", args: []Value{strNull(TypeString), str("a")}, want: strNull(TypeString)},
		{fn: "concat_ws", args: []Value{str(","), arr("a", "b"), str("c"), strNull(TypeStringArray), arr()}, want: str("a,b,c")},
		{fn: "concat_ws", args: []Value{str(","), str("a"), bin("b")}, checkErr: "concat_ws: expects STRING or ARRAY<STRING>, got BINARY as argument 3"},
		{fn: "concat_ws", args: []Value{arr(), str("a")}, checkErr: "concat_ws: expects STRING, got ARRAY<STRING> as argument 1"},
		{fn: "concat_ws", args: []Value{str("_"), str("t"), i32(3)}, want: str("t_3"), needsCast: true},
	})
}

func TestSubstring(t *testing.T) {
	s := str("Spark SQL")
	runFnTests(t, []fnTest{
		{fn: "substring", args: []Value{s, i32(5)}, want: str("k SQL")},
		{fn: "substring", args: []Value{s, i32(-3)}, want: str("SQL")},
		{fn: "substring", args: []Value{s, i32(5), i32(1)}, want: str("k")},
		{fn: "substr", args: []Value{s, i32(0), i32(2)}, want: str("Sp")},
		{fn: "substr", args: []Value{s, i32(1), i32(2)}, want: str("Sp")},
		{fn: "substring", args: []Value{s, i32(-3), i32(2)}, want: str("SQ")},
		{fn: "substring", args: []Value{s, i32(-20), i32(13)}, want: str("Sp")},
		{fn: "substring", args: []Value{s, i32(20)}, want: str("")},
		{fn: "substring", args: []Value{s, i32(2), i32(0)}, want: str("")},
		{fn: "substring", args: []Value{s, i32(2), i32(-1)}, want: str("")},
		{fn: "substring", args: []Value{s, i64(2), i64(3)}, want: str("par")},
		{fn: "substring", args: []Value{str("héllo"), i32(2), i32(2)}, want: str("él")},
		{fn: "substring", args: []Value{bin("héllo"), i32(2), i32(2)}, want: bin("é")},
		{fn: "substring", args: []Value{strNull(TypeString), i32(1)}, want: strNull(TypeString)},
		{fn: "substring", args: []Value{s, nullLit()}, want: strNull(TypeString)},
		{fn: "substring", args: []Value{strNull(TypeBinary), i32(1)}, want: strNull(TypeBinary)},
		{fn: "substring", args: []Value{s, str("1")}, checkErr: "substring: expects INT, got STRING as argument 2; cast it to INT"},
		{fn: "substring", args: []Value{s, i32(1), dbl(1)}, checkErr: "substring: expects INT, got DOUBLE as argument 3"},
		{fn: "substring", args: []Value{s, i64(1 << 40)}, evalErr: "out of the range of INT"},
		{fn: "substring", args: []Value{i64(12345), i32(2), i32(2)}, want: str("23"), needsCast: true},
	})
}

func TestRegexpFunctions(t *testing.T) {
	runFnTests(t, []fnTest{
		{fn: "regexp_replace", args: []Value{str("100-200"), str(`(\d+)`), str("num")}, want: str("num-num")},
		{fn: "regexp_replace", args: []Value{str("100-200"), str(`(\d+)-(\d+)`), str("$2-$1")}, want: str("200-100")},
		{fn: "regexp_replace", args: []Value{str("ab"), str(`(?P<x>a)`), str("[${x}]")}, want: str("[a]b")},
		{fn: "regexp_replace", args: []Value{str("ab"), str(`(a)`), str(`\$1`)}, want: str("$1b")},
		{fn: "regexp_replace", args: []Value{str("ab"), str(`(a)`), str("$10")}, want: str("a0b")},
		{fn: "regexp_replace", args: []Value{str("ab"), str(`(a)`), str("$2")}, evalErr: "no group 2"},
		{fn: "regexp_replace", args: []Value{str("ab"), str(`(a)`), str("$x")}, evalErr: "illegal group reference"},
		{fn: "regexp_replace", args: []Value{str("ab"), str(`(a)`), str(`x\`)}, evalErr: "escaped is missing"},
		{fn: "regexp_replace", args: []Value{str("ab"), str(`(a)`), str("${y}")}, evalErr: "no group with name {y}"},
		{fn: "regexp_replace", args: []Value{str("bb"), str(`(a)`), str("$9")}, want: str("bb")},
		{fn: "regexp_replace", args: []Value{str("aaa"), str("a"), str("b"), i32(2)}, want: str("abb")},
		{fn: "regexp_replace", args: []Value{str("aaa"), str("a"), str("b"), i32(4)}, want: str("aaa")},
		{fn: "regexp_replace", args: []Value{str("aaa"), str("a"), str("b"), i32(0)}, evalErr: "position must be positive"},
		{fn: "regexp_replace", args: []Value{str("a"), str(`(?<=a)b`), str("")}, evalErr: `the regular expression "(?<=a)b" is not supported`},
		{fn: "regexp_replace", args: []Value{strNull(TypeString), str("a"), str("b")}, want: strNull(TypeString)},
		{fn: "regexp_replace", args: []Value{str("a"), nullLit(), str("b")}, want: strNull(TypeString)},
		{fn: "regexp_replace", args: []Value{str("a"), str("a"), str("b"), str("1")}, checkErr: "regexp_replace: expects INT, got STRING as argument 4"},

		{fn: "regexp_extract", args: []Value{str("100-200"), str(`(\d+)-(\d+)`)}, want: str("100")},
		{fn: "regexp_extract", args: []Value{str("100-200"), str(`(\d+)-(\d+)`), i32(2)}, want: str("200")},
		{fn: "regexp_extract", args: []Value{str("100-200"), str(`(\d+)-(\d+)`), i32(0)}, want: str("100-200")},
		{fn: "regexp_extract", args: []Value{str("abc"), str(`(\d+)`)}, want: str("")},
		{fn: "regexp_extract", args: []Value{str("a"), str(`(a)|(b)`), i32(2)}, want: str("")},
		{fn: "regexp_extract", args: []Value{str("abc"), str(`\d+`)}, evalErr: "has 0 groups; the group index must be between 0 and 0, got 1"},
		{fn: "regexp_extract", args: []Value{str("abc"), str(`(a)`), i32(-1)}, evalErr: "got -1"},
		{fn: "regexp_extract", args: []Value{str("abc"), str(`a++`)}, evalErr: `"a++" is not supported`},
		{fn: "regexp_extract", args: []Value{strNull(TypeString), str(`(a)`)}, want: strNull(TypeString)},
		{fn: "regexp_extract", args: []Value{str("a"), bin("a")}, checkErr: "regexp_extract: expects STRING, got BINARY as argument 2"},

		{fn: "split", args: []Value{str("oneAtwoBthreeC"), str("[ABC]")}, want: arr("one", "two", "three", "")},
		{fn: "split", args: []Value{str("oneAtwoBthreeC"), str("[ABC]"), i32(2)}, want: arr("one", "twoBthreeC")},
		{fn: "split", args: []Value{str("oneAtwoBthreeC"), str("[ABC]"), i32(-1)}, want: arr("one", "two", "three", "")},
		{fn: "split", args: []Value{str("oneAtwoBthreeC"), str("[ABC]"), i32(0)}, want: arr("one", "two", "three", "")},
		{fn: "split", args: []Value{str("a,b"), str(","), i32(1)}, want: arr("a,b")},
		{fn: "split", args: []Value{str(",a,"), str(",")}, want: arr("", "a", "")},
		{fn: "split", args: []Value{str("abc"), str("")}, want: arr("a", "b", "c")},
		{fn: "split", args: []Value{str("abc"), str(""), i32(2)}, want: arr("a", "bc")},
		{fn: "split", args: []Value{str(""), str("")}, want: arr("")},
		{fn: "split", args: []Value{str(""), str(",")}, want: arr("")},
		{fn: "split", args: []Value{str("abc"), str("x*")}, want: arr("a", "b", "c", "")},
		{fn: "split", args: []Value{str("orders-eu-1"), str("-")}, want: arr("orders", "eu", "1")},
		{fn: "split", args: []Value{strNull(TypeString), str(",")}, want: strNull(TypeStringArray)},
		{fn: "split", args: []Value{str("a"), str("(")}, evalErr: `the regular expression "(" is not supported`},
		{fn: "split", args: []Value{str("a"), str(","), dbl(1)}, checkErr: "split: expects INT, got DOUBLE as argument 3"},
	})
}

func TestElementAt(t *testing.T) {
	h := hdrs(hdr("a", "1"), hdr("b", "2"))
	runFnTests(t, []fnTest{
		{fn: "element_at", args: []Value{arr("x", "y", "z"), i32(1)}, want: str("x")},
		{fn: "element_at", args: []Value{arr("x", "y", "z"), i32(3)}, want: str("z")},
		{fn: "element_at", args: []Value{arr("x", "y", "z"), i32(-1)}, want: str("z")},
		{fn: "element_at", args: []Value{arr("x", "y", "z"), i64(-3)}, want: str("x")},
		{fn: "element_at", args: []Value{arr("x", "y", "z"), i32(4)}, evalErr: "the index 4 is out of bounds: the array has 3 elements"},
		{fn: "element_at", args: []Value{arr("x", "y", "z"), i32(-4)}, evalErr: "the index -4 is out of bounds"},
		{fn: "element_at", args: []Value{arr("x", "y", "z"), i64(math.MinInt64)}, evalErr: "the index -9223372036854775808 is out of bounds"},
		{fn: "try_element_at", args: []Value{arr("x"), i64(math.MinInt64)}, want: strNull(TypeString)},
		{fn: "element_at", args: []Value{h, i64(math.MinInt64)}, evalErr: "out of bounds"},
		{fn: "element_at", args: []Value{arr("x"), i32(0)}, evalErr: "the index 0 is invalid"},
		{fn: "try_element_at", args: []Value{arr("x"), i32(2)}, want: strNull(TypeString)},
		{fn: "try_element_at", args: []Value{arr("x"), i32(0)}, evalErr: "the index 0 is invalid"},
		{fn: "element_at", args: []Value{strNull(TypeStringArray), i32(1)}, want: strNull(TypeString)},
		{fn: "element_at", args: []Value{arr("x"), nullLit()}, want: strNull(TypeString)},
		{fn: "element_at", args: []Value{h, i32(2)}, want: hdrv(hdr("b", "2"))},
		{fn: "element_at", args: []Value{h, i32(-2)}, want: hdrv(hdr("a", "1"))},
		{fn: "element_at", args: []Value{h, i32(3)}, evalErr: "out of bounds"},
		{fn: "element_at", args: []Value{strNull(TypeHeaders), i32(1)}, want: strNull(TypeHeader)},
		{fn: "element_at", args: []Value{str("x"), i32(1)}, checkErr: "element_at: expects an array (ARRAY<STRING> or headers), got STRING as argument 1"},
		{fn: "element_at", args: []Value{arr("x"), str("1")}, checkErr: "element_at: expects INT, got STRING as argument 2"},
	})
}

func TestDateFormat(t *testing.T) {
	ts := tsv(time.Date(2024, 3, 7, 15, 4, 5, 123456000, time.UTC))
	midnight := tsv(time.Date(2024, 12, 31, 0, 0, 9, 0, time.UTC))
	runFnTests(t, []fnTest{
		{fn: "date_format", args: []Value{ts, str("yyyy-MM-dd")}, want: str("2024-03-07")},
		{fn: "date_format", args: []Value{ts, str("yyyy-MM-dd HH:mm:ss.SSS")}, want: str("2024-03-07 15:04:05.123")},
		{fn: "date_format", args: []Value{ts, str("yyyyMMdd_HH")}, want: str("20240307_15")},
		{fn: "date_format", args: []Value{ts, str("yy/M/d")}, want: str("24/3/7")},
		{fn: "date_format", args: []Value{ts, str("MMM MMMM LLL")}, want: str("Mar March Mar")},
		{fn: "date_format", args: []Value{ts, str("E EEEE")}, want: str("Thu Thursday")},
		{fn: "date_format", args: []Value{ts, str("h:mm a, K k")}, want: str("3:04 PM, 3 15")},
		{fn: "date_format", args: []Value{midnight, str("hh a kk KK")}, want: str("12 AM 24 00")},
		{fn: "date_format", args: []Value{ts, str("D DDD Q QQ QQQ QQQQ")}, want: str("67 067 1 01 Q1 1st quarter")},
		{fn: "date_format", args: []Value{midnight, str("D")}, want: str("366")},
		{fn: "date_format", args: []Value{ts, str("SSSSSS S SSSSSSSSS")}, want: str("123456 1 123456000")},
		{fn: "date_format", args: []Value{ts, str("G GGGG y yyy yyyyy")}, want: str("AD Anno Domini 2024 2024 02024")},
		{fn: "date_format", args: []Value{ts, str("X XXX x xx xxx Z ZZZZ ZZZZZ z zzzz VV O")}, want: str("Z Z +00 +0000 +00:00 +0000 GMT Z UTC Coordinated Universal Time UTC GMT")},
		{fn: "date_format", args: []Value{ts, str("yyyy-MM-dd'T'HH:mm:ss'Z'")}, want: str("2024-03-07T15:04:05Z")},
		{fn: "date_format", args: []Value{ts, str("'year' yyyy, 'it''s' ''")}, want: str("year 2024, it's '")},
		{fn: "date_format", args: []Value{ts, str("yyyy[-MM]")}, want: str("2024-03")},
		{fn: "date_format", args: []Value{datev(19789), str("yyyy-MM-dd HH:mm")}, want: str("2024-03-07 00:00")},
		{fn: "date_format", args: []Value{tsv(time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC)), str("yyyy-MM-dd HH:mm:ss.SSSSSS")}, want: str("1969-12-31 23:59:59.999999")},
		{fn: "date_format", args: []Value{strNull(TypeTimestamp), str("yyyy")}, want: strNull(TypeString)},
		{fn: "date_format", args: []Value{ts, nullLit()}, want: strNull(TypeString)},
		{fn: "date_format", args: []Value{ts, str("YYYY")}, evalErr: `pattern "YYYY": 'Y' at position 1: week-based patterns are not supported`},
		{fn: "date_format", args: []Value{ts, str("yyyy-MM-dd 'T")}, evalErr: "unterminated quote at position 12"},
		{fn: "date_format", args: []Value{ts, str("MMMMM")}, evalErr: `"MMMMM" at position 1: wrong number of pattern letters`},
		{fn: "date_format", args: []Value{ts, str("yyyyyyy")}, evalErr: "wrong number of pattern letters"},
		{fn: "date_format", args: []Value{ts, str("aa")}, evalErr: "wrong number of pattern letters"},
		{fn: "date_format", args: []Value{ts, str("A")}, evalErr: "unsupported pattern letter"},
		{fn: "date_format", args: []Value{ts, str("{")}, evalErr: "is reserved"},
		{fn: "date_format", args: []Value{bin("x"), str("yyyy")}, checkErr: "date_format: expects TIMESTAMP, got BINARY as argument 1; cast it to TIMESTAMP"},
		{fn: "date_format", args: []Value{i64(1), str("yyyy")}, checkErr: "date_format: expects TIMESTAMP, got BIGINT"},
		{fn: "date_format", args: []Value{str("2024-03-07 15:04:05"), str("HH:mm")}, want: str("15:04"), needsCast: true},
	})
}

func TestGetJSONObject(t *testing.T) {
	doc := str(`{"a":{"b":[1,{"c":"x"}]},"A":2,"n":null,"arr":[null]}`)
	runFnTests(t, []fnTest{
		{fn: "get_json_object", args: []Value{doc, str("$.a.b[1].c")}, want: str("x")},
		{fn: "get_json_object", args: []Value{doc, str("$['a']['b'][0]")}, want: str("1")},
		{fn: "get_json_object", args: []Value{doc, str("$.a")}, want: str(`{"b":[1,{"c":"x"}]}`)},
		{fn: "get_json_object", args: []Value{doc, str("$.A")}, want: str("2")},
		{fn: "get_json_object", args: []Value{str(`{"A":2}`), str("$.a")}, want: strNull(TypeString)},
		{fn: "get_json_object", args: []Value{doc, str("$.n")}, want: strNull(TypeString)},
		{fn: "get_json_object", args: []Value{doc, str("$.arr[0]")}, want: str("null")},
		{fn: "get_json_object", args: []Value{doc, str("$.missing")}, want: strNull(TypeString)},
		{fn: "get_json_object", args: []Value{doc, str("a")}, want: strNull(TypeString)},
		{fn: "get_json_object", args: []Value{str("{bad"), str("$.a")}, want: strNull(TypeString)},
		{fn: "get_json_object", args: []Value{doc, str("$.a.b[*]")}, evalErr: `the path "$.a.b[*]" has a wildcard`},
		{fn: "get_json_object", args: []Value{strNull(TypeString), str("$.a")}, want: strNull(TypeString)},
		{fn: "get_json_object", args: []Value{doc, nullLit()}, want: strNull(TypeString)},
		{fn: "get_json_object", args: []Value{bin(`{}`), str("$.a")}, checkErr: "get_json_object: expects STRING, got BINARY as argument 1; cast it to STRING"},
	})
}

// TestGetJSONObjectPathCache checks that a path computed per record is
// parsed again when it changes.
func TestGetJSONObjectPathCache(t *testing.T) {
	doc := str(`{"a":1,"b":2}`)
	for _, p := range []string{"$.a", "$.b", "$.a", "$.b"} {
		v, _, err := call(t, "get_json_object", doc, str(p))
		want := map[string]string{"$.a": "1", "$.b": "2"}[p]
		if err != nil || v.Str != want {
			t.Fatalf("get_json_object(%s) = %v, %v; want %s", p, v, err, want)
		}
	}
}

// TestFunctionArgCounts checks the registered arities.
func TestFunctionArgCounts(t *testing.T) {
	for name, want := range map[string][2]int{
		"lower": {1, 1}, "upper": {1, 1}, "trim": {1, 2}, "ltrim": {1, 2}, "rtrim": {1, 2},
		"concat": {0, -1}, "concat_ws": {1, -1}, "substring": {2, 3}, "substr": {2, 3},
		"replace": {2, 3}, "regexp_replace": {3, 4}, "regexp_extract": {2, 3}, "split": {2, 3},
		"element_at": {2, 2}, "try_element_at": {2, 2}, "length": {1, 1}, "date_format": {2, 2},
		"get_json_object": {2, 2},
	} {
		f := functions[name]
		if f == nil {
			t.Errorf("%s is not registered", name)
			continue
		}
		if f.minArgs != want[0] || f.maxArgs != want[1] {
			t.Errorf("%s takes %d..%d arguments, want %d..%d", name, f.minArgs, f.maxArgs, want[0], want[1])
		}
	}
}

// TestMemoBound checks that patterns computed per record do not grow a
// memo without bound, and that what it holds stays right.
func TestMemoBound(t *testing.T) {
	var m memo[string]
	for i := range 3 * maxMemo {
		k := strings.Repeat("a", i)
		if got := m.get(k, strings.ToUpper); got != strings.ToUpper(k) {
			t.Fatalf("get(%q) = %q", k, got)
		}
	}
	if n := m.n.Load(); n > maxMemo {
		t.Errorf("the memo holds %d entries, more than %d", n, maxMemo)
	}
	calls := 0
	for range 3 {
		m.get("x", func(s string) string { calls++; return s })
	}
	if calls != 1 {
		t.Errorf("compiled %d times, want once", calls)
	}
}

// FuzzFunctions checks that the functions with the most arithmetic on
// their arguments (positions, group references, patterns) never panic and
// keep their invariants.
func FuzzFunctions(f *testing.F) {
	f.Add("héllo-wörld", `(\w+)-(\w+)`, `$2\$$1${x}`, int64(2), int64(-3))
	f.Add("", "", "", int64(0), int64(0))
	f.Add("a,b,,c,", ",", "$0", int64(-1), int64(1<<31))
	f.Add("2024", "yyyy-MM-dd'T'HH:mm:ss.SSS XXX", "''", int64(1), int64(9))
	f.Fuzz(func(t *testing.T, s, pattern, rep string, a, b int64) {
		// substring: a part of s, as long as asked at most.
		if v, err := functions["substring"].eval([]Value{str(s), i64(a), i64(b)}); err == nil && !strings.Contains(s, v.Str) {
			t.Fatalf("substring(%q, %d, %d) = %q, not a part of it", s, a, b, v.Str)
		}
		if v, err := functions["substring"].eval([]Value{bin(s), i64(a), i64(b)}); err == nil && !strings.Contains(s, string(v.Bytes)) {
			t.Fatalf("substring(X%q, %d, %d) = %q, not a part of it", s, a, b, v.Bytes)
		}
		// split: the parts and the separators make s again.
		if v, err := functions["split"].eval([]Value{str(s), str(pattern), i64(a)}); err == nil {
			if a > 0 && int64(len(v.Strs)) > a {
				t.Fatalf("split(%q, %q, %d) has %d parts", s, pattern, a, len(v.Strs))
			}
			if total := len(strings.Join(v.Strs, "")); total > len(s) {
				t.Fatalf("split(%q, %q, %d) = %q, longer than the input", s, pattern, a, v.Strs)
			}
		}
		_, _ = functions["regexp_replace"].eval([]Value{str(s), str(pattern), str(rep), i64(b)})
		_, _ = functions["regexp_extract"].eval([]Value{str(s), str(pattern), i64(a)})
		arr := Value{Type: TypeStringArray, Strs: strings.Split(s, ",")}
		if v, err := functions["element_at"].eval([]Value{arr, i64(a)}); err == nil && !strings.Contains(s, v.Str) {
			t.Fatalf("element_at(%q, %d) = %q", arr.Strs, a, v.Str)
		}
		_, _ = functions["date_format"].eval([]Value{{Type: TypeTimestamp, Int: a}, str(pattern)})
	})
}
