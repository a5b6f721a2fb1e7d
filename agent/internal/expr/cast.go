package expr

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/sparktime"
)

// typeNames are the type names cast and :: accept, with the aliases Spark
// accepts for them. FLOAT, SMALLINT, TINYINT, DECIMAL, TIMESTAMP_NTZ and
// the complex types are not supported: they are refused, not approximated.
var typeNames = map[string]Type{
	"STRING":    TypeString,
	"BINARY":    TypeBinary,
	"INT":       TypeInt,
	"INTEGER":   TypeInt,
	"BIGINT":    TypeBigInt,
	"LONG":      TypeBigInt,
	"DOUBLE":    TypeDouble,
	"BOOLEAN":   TypeBoolean,
	"DATE":      TypeDate,
	"TIMESTAMP": TypeTimestamp,
}

// supportedTypes lists the types a cast may name, for messages.
const supportedTypes = "STRING, BINARY, INT, BIGINT, DOUBLE, BOOLEAN, DATE, TIMESTAMP"

// String returns the SQL name of t.
func (t Type) String() string {
	switch t {
	case TypeNull:
		return "NULL"
	case TypeString:
		return "STRING"
	case TypeBinary:
		return "BINARY"
	case TypeBoolean:
		return "BOOLEAN"
	case TypeInt:
		return "INT"
	case TypeBigInt:
		return "BIGINT"
	case TypeDouble:
		return "DOUBLE"
	case TypeDate:
		return "DATE"
	case TypeTimestamp:
		return "TIMESTAMP"
	case TypeStringArray:
		return "ARRAY<STRING>"
	case TypeHeaders:
		return "ARRAY<STRUCT<key: STRING, value: BINARY>>"
	case TypeHeader:
		return "STRUCT<key: STRING, value: BINARY>"
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// article returns t's name with "a" or "an" before it.
func article(t Type) string {
	if t == TypeInt {
		return "an INT"
	}
	return "a " + t.String()
}

// isNumeric says t is INT, BIGINT or DOUBLE.
func isNumeric(t Type) bool { return t == TypeInt || t == TypeBigInt || t == TypeDouble }

// canCast says cast(x AS to) is allowed for x of type from under ANSI
// rules: anything but headers to STRING, STRING to anything, BINARY only
// from STRING, numbers among themselves and to and from BOOLEAN and
// TIMESTAMP (seconds since the epoch), DATE to and from TIMESTAMP.
func canCast(from, to Type) bool {
	if from == to || from == TypeNull || from == TypeString && to <= TypeTimestamp {
		return true
	}
	switch to {
	case TypeString:
		return from != TypeHeaders && from != TypeHeader
	case TypeInt, TypeBigInt, TypeDouble:
		return isNumeric(from) || from == TypeBoolean || from == TypeTimestamp
	case TypeBoolean:
		return isNumeric(from)
	case TypeDate:
		return from == TypeTimestamp
	case TypeTimestamp:
		return isNumeric(from) || from == TypeDate
	}
	return false
}

// nullOf returns the NULL of type t.
func nullOf(t Type) Value { return Value{Type: t, Null: true} }

// castValue converts v to type to as cast(v AS to) does under ANSI rules:
// an error when the value does not convert (try_cast turns it into NULL).
// NULL casts to NULL of any type. The error says what did not convert,
// without the expression (the caller adds it).
func castValue(v Value, to Type) (Value, error) {
	if v.Null {
		return nullOf(to), nil
	}
	if v.Type == to {
		return v, nil
	}
	if !canCast(v.Type, to) {
		return Value{}, fmt.Errorf("cannot cast %s to %s", v.Type, to)
	}
	switch to {
	case TypeString:
		return Value{Type: TypeString, Str: toString(v)}, nil
	case TypeBinary:
		return Value{Type: TypeBinary, Bytes: []byte(v.Str)}, nil
	case TypeBoolean:
		return castToBoolean(v)
	case TypeInt, TypeBigInt:
		return castToIntegral(v, to)
	case TypeDouble:
		return castToDouble(v)
	case TypeDate:
		if v.Type == TypeTimestamp {
			return Value{Type: TypeDate, Int: floorDiv(v.Int, microsPerDay)}, nil
		}
		return stringToDate(v.Str)
	default: // TypeTimestamp
		return castToTimestamp(v)
	}
}

const (
	microsPerSecond = 1_000_000
	microsPerDay    = 86_400 * microsPerSecond
)

// toString formats v as Spark casts it to STRING.
func toString(v Value) string {
	switch v.Type {
	case TypeString:
		return v.Str
	case TypeBinary:
		return string(v.Bytes)
	case TypeBoolean:
		return strconv.FormatBool(v.Bool)
	case TypeInt, TypeBigInt:
		return strconv.FormatInt(v.Int, 10)
	case TypeDouble:
		return formatDouble(v.Float)
	case TypeDate:
		return time.Unix(v.Int*86_400, 0).UTC().Format(time.DateOnly)
	case TypeTimestamp:
		return formatTimestamp(v.Int)
	case TypeStringArray:
		return "[" + strings.Join(v.Strs, ", ") + "]"
	}
	return ""
}

// formatDouble formats f as Java's Double.toString does, which Spark's
// cast to STRING uses: 1.0, 0.001, 1.0E7, 1.5E-4, NaN, Infinity.
func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0 && math.Signbit(f):
		return "-0.0"
	case f == 0:
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, 64)
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// formatTimestamp formats microseconds since the epoch as Spark casts a
// TIMESTAMP to STRING in UTC: yyyy-MM-dd HH:mm:ss and the fraction
// without trailing zeros, if any.
func formatTimestamp(us int64) string {
	s := time.UnixMicro(us).UTC().Format(time.DateTime)
	if frac := us - floorDiv(us, microsPerSecond)*microsPerSecond; frac != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%06d", frac), "0")
	}
	return s
}

// floorDiv divides rounding toward negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// trimSpace trims what Spark's casts from STRING trim: white space and
// control characters (bytes up to ' ').
func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

// notA is the error of a STRING that does not convert to t.
func notA(s string, t Type) error {
	return fmt.Errorf("%s is not %s", quote(s), article(t))
}

// quote shows a string value in a message.
func quote(s string) string {
	return "'" + strings.ReplaceAll(shorten(s), "'", "''") + "'"
}

// show shows a value in a message.
func show(v Value) string {
	switch {
	case v.Null:
		return "NULL"
	case v.Type == TypeString:
		return quote(v.Str)
	case v.Type == TypeBinary:
		return "X'" + strings.ToUpper(hex.EncodeToString(v.Bytes[:min(len(v.Bytes), 20)])) + "'"
	case v.Type == TypeDate:
		return "DATE '" + toString(v) + "'"
	case v.Type == TypeTimestamp:
		return "TIMESTAMP '" + toString(v) + "'"
	}
	return toString(v)
}

func castToBoolean(v Value) (Value, error) {
	switch v.Type {
	case TypeString:
		switch strings.ToLower(trimSpace(v.Str)) {
		case "t", "true", "y", "yes", "1":
			return Value{Type: TypeBoolean, Bool: true}, nil
		case "f", "false", "n", "no", "0":
			return Value{Type: TypeBoolean}, nil
		}
		return Value{}, notA(v.Str, TypeBoolean)
	case TypeDouble:
		return Value{Type: TypeBoolean, Bool: v.Float != 0}, nil
	}
	return Value{Type: TypeBoolean, Bool: v.Int != 0}, nil
}

// outOfRange is the error of a number that does not fit t.
func outOfRange(v Value, t Type) error {
	return fmt.Errorf("%s is out of the %s range", show(v), t)
}

func castToIntegral(v Value, to Type) (Value, error) {
	var n int64
	switch v.Type {
	case TypeString:
		var ok bool
		if n, ok = parseIntegral(trimSpace(v.Str)); !ok {
			return Value{}, notA(v.Str, to)
		}
	case TypeBoolean:
		if v.Bool {
			n = 1
		}
	case TypeDouble:
		f := math.Trunc(v.Float)
		if math.IsNaN(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			return Value{}, outOfRange(v, to)
		}
		n = int64(f)
	case TypeTimestamp:
		n = floorDiv(v.Int, microsPerSecond)
	default:
		n = v.Int
	}
	if to == TypeInt && (n < math.MinInt32 || n > math.MaxInt32) {
		return Value{}, outOfRange(v, to)
	}
	return Value{Type: to, Int: n}, nil
}

// parseIntegral parses trimmed text as Spark's UTF8String.toLong: a sign,
// digits, and an optional fraction that is dropped.
func parseIntegral(s string) (int64, bool) {
	digits, _, _ := strings.Cut(s, ".")
	frac := s[len(digits):]
	if frac != "" {
		frac = frac[1:]
	}
	for i := 0; i < len(frac); i++ {
		if frac[i] < '0' || frac[i] > '9' {
			return 0, false
		}
	}
	sign := ""
	if digits != "" && (digits[0] == '+' || digits[0] == '-') {
		sign, digits = digits[:1], digits[1:]
	}
	if digits == "" {
		return 0, frac != ""
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(sign+digits, 10, 64)
	return n, err == nil
}

func castToDouble(v Value) (Value, error) {
	switch v.Type {
	case TypeString:
		f, ok := parseDouble(trimSpace(v.Str))
		if !ok {
			return Value{}, notA(v.Str, TypeDouble)
		}
		return Value{Type: TypeDouble, Float: f}, nil
	case TypeBoolean:
		if v.Bool {
			return Value{Type: TypeDouble, Float: 1}, nil
		}
		return Value{Type: TypeDouble}, nil
	case TypeTimestamp:
		return Value{Type: TypeDouble, Float: float64(v.Int) / microsPerSecond}, nil
	}
	return Value{Type: TypeDouble, Float: float64(v.Int)}, nil
}

// parseDouble parses trimmed text as Spark casts it to DOUBLE: inf,
// infinity and nan in any case, else Java's Double.parseDouble (which
// takes a trailing d or f).
func parseDouble(s string) (float64, bool) {
	switch strings.ToLower(s) {
	case "inf", "+inf", "infinity", "+infinity":
		return math.Inf(1), true
	case "-inf", "-infinity":
		return math.Inf(-1), true
	case "nan":
		return math.NaN(), true
	}
	if n := len(s); n > 1 && strings.ContainsRune("dDfF", rune(s[n-1])) && !strings.HasPrefix(strings.ToLower(s), "0x") {
		s = s[:n-1]
	}
	if strings.ContainsAny(s, "_iInN") { // Go's own spellings of infinity and NaN, and 1_000
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil || math.IsInf(f, 0)
}

// stringToDate casts STRING to DATE as Spark does: yyyy[-[m]m[-[d]d]]
// with anything after a space or T.
func stringToDate(s string) (Value, error) {
	t := trimSpace(s)
	d, ok := sparktime.ParseDate([]byte(t))
	if ok && isSmallInteger(t) { // ParseDate's fallback for JSON: days since the epoch
		ok = false
	}
	if !ok {
		return Value{}, notA(s, TypeDate)
	}
	return Value{Type: TypeDate, Int: d}, nil
}

// isSmallInteger says s is a signed integer of other than 4 to 7 digits,
// which only ParseDate's days-since-the-epoch fallback reads.
func isSmallInteger(s string) bool {
	s = strings.TrimLeft(s, "+-")
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) < 4 || len(s) > 7
}

func castToTimestamp(v Value) (Value, error) {
	switch v.Type {
	case TypeString:
		t, ok := sparktime.ParseTimestamp([]byte(v.Str))
		if !ok {
			return Value{}, notA(v.Str, TypeTimestamp)
		}
		if t.Days >= math.MaxInt64/microsPerDay || t.Days <= math.MinInt64/microsPerDay { // UnixMicros would wrap
			return Value{}, outOfRange(v, TypeTimestamp)
		}
		return Value{Type: TypeTimestamp, Int: t.UnixMicros()}, nil
	case TypeDate:
		if v.Int > math.MaxInt64/microsPerDay || v.Int < math.MinInt64/microsPerDay {
			return Value{}, outOfRange(v, TypeTimestamp)
		}
		return Value{Type: TypeTimestamp, Int: v.Int * microsPerDay}, nil
	case TypeDouble:
		us := v.Float * microsPerSecond
		if math.IsNaN(us) || us < math.MinInt64 || us >= math.MaxInt64 {
			return Value{}, outOfRange(v, TypeTimestamp)
		}
		return Value{Type: TypeTimestamp, Int: int64(us)}, nil
	}
	if v.Int > math.MaxInt64/microsPerSecond || v.Int < math.MinInt64/microsPerSecond {
		return Value{}, outOfRange(v, TypeTimestamp)
	}
	return Value{Type: TypeTimestamp, Int: v.Int * microsPerSecond}, nil
}
