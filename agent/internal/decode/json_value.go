package decode

import (
	"math"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/sparktime"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// JSON value conversion: how the text of a JSON number, string, literal or
// nested value becomes a value of its column's type, as Spark's from_json
// converts what Jackson parsed. The JSON decoder (json.go) calls these once
// the scanner has found a value and its column.

// fromNumber writes a JSON number (its text) as type t; false if it does
// not fit.
func (d *jsonDecoder) fromNumber(t *jtype, text []byte) bool {
	if t.conv != ConvNone && t.conv != ConvDecimalBytes {
		return d.converted(t, text)
	}
	integral := isIntegral(text)
	switch t.kind {
	case schema.Byte, schema.Short, schema.Int, schema.Long:
		if !integral {
			return false
		}
		v, ok := parseInt(text, math.MinInt64, math.MaxInt64)
		return ok && d.integer(t, v)
	case schema.Float, schema.Double:
		bitSize := 64
		if t.kind == schema.Float {
			bitSize = 32
		}
		f, ok := parseFloat(text, bitSize)
		return ok && d.float(t, f)
	case schema.Decimal:
		return d.decimal(t, text)
	case schema.Timestamp:
		// Whole seconds since the epoch, as Spark reads an integer.
		v, ok := parseInt(text, math.MinInt64/1_000_000, math.MaxInt64/1_000_000)
		if ok && integral {
			d.b.Int64(v * 1_000_000)
		}
		return ok && integral
	}
	return false
}

// fromString writes the (unescaped) content of a JSON string as type t;
// false if it does not fit.
func (d *jsonDecoder) fromString(t *jtype, s []byte) bool {
	switch t.kind {
	case schema.Float, schema.Double:
		f, ok := d.specialFloat(s)
		return ok && d.float(t, f)
	case schema.Decimal:
		if t.conv == ConvDecimalBytes {
			return d.decimalBytes(t, s)
		}
		return d.decimal(t, s)
	case schema.Binary:
		return d.base64(s)
	case schema.Date:
		var days int64
		var ok bool
		if d.dates != nil {
			var t sparktime.Time
			t, ok = d.dates.Parse(s)
			days = t.Days
		} else {
			days, ok = sparktime.ParseDate(s)
		}
		ok = ok && days >= math.MinInt32 && days <= math.MaxInt32
		if ok {
			d.b.Int32(int32(days))
		}
		return ok
	case schema.Timestamp:
		var t sparktime.Time
		var ok bool
		switch {
		case d.timestamps != nil:
			t, ok = d.timestamps.Parse(s)
		case d.sqlTimestamps && !sqlTimestamp(s):
		default:
			t, ok = sparktime.ParseTimestamp(s)
		}
		if ok {
			d.b.Int64(t.UnixMicros())
		}
		return ok
	case schema.TimestampNTZ:
		// Spark's timestampNTZFormat, not timestampFormat, applies.
		t, ok := sparktime.ParseTimestampNTZ(s)
		if ok {
			d.b.Int64(t.UnixMicros())
		}
		return ok
	}
	return false
}

// isInteger reports whether k is one of the integer types.
func isInteger(k schema.Kind) bool {
	return k == schema.Byte || k == schema.Short || k == schema.Int || k == schema.Long
}

// integer writes v as integer type t; false if it is out of t's range.
func (d *jsonDecoder) integer(t *jtype, v int64) bool {
	switch t.kind {
	case schema.Long:
		d.b.Int64(v)
		return true
	case schema.Byte:
		if v < math.MinInt8 || v > math.MaxInt8 {
			return false
		}
	case schema.Short:
		if v < math.MinInt16 || v > math.MaxInt16 {
			return false
		}
	default:
		if v < math.MinInt32 || v > math.MaxInt32 {
			return false
		}
	}
	d.b.Int32(int32(v))
	return true
}

// float writes f as a FLOAT or DOUBLE.
func (d *jsonDecoder) float(t *jtype, f float64) bool {
	if t.kind == schema.Float {
		d.b.Float(float32(f))
	} else {
		d.b.Double(f)
	}
	return true
}

// decimal writes decimal text as t's unscaled value.
func (d *jsonDecoder) decimal(t *jtype, text []byte) bool {
	u, neg, ok := parseDecimal(text, t.precision, t.scale)
	if ok {
		d.unscaled(t, u, neg)
	}
	return ok
}

// unscaled writes the unscaled value u (negated when neg), which fits t's
// precision, as DECIMAL t: an INT32, an INT64 or t.size bytes of two's
// complement, as the precision says.
func (d *jsonDecoder) unscaled(t *jtype, u uint128, neg bool) {
	switch {
	case t.precision <= 9:
		d.b.Int32(int32(int64Of(u, neg)))
	case t.precision <= 18:
		d.b.Int64(int64Of(u, neg))
	default:
		buf := d.b.Alloc(t.size)
		putDecimal(buf, u, neg)
		d.b.Bytes(buf)
	}
}

// base64 writes standard base64 as BINARY, read the way Jackson's MIME
// variant (Spark's) reads it: groups of four characters, the last one or
// two of a group may be '=' padding, which is required; whitespace and
// control characters are skipped before a group but refused inside one
// ("AQ\nID" is not base64); a group may follow a padded one, and the bits
// padding drops are not checked.
func (d *jsonDecoder) base64(s []byte) bool {
	buf := d.b.Alloc(len(s) / 4 * 3)
	n := 0
	for i := 0; ; i += 4 {
		for i < len(s) && s[i] <= ' ' {
			i++
		}
		if i == len(s) {
			break
		}
		if len(s)-i < 4 {
			return false
		}
		a, b, c, e := base64Values[s[i]], base64Values[s[i+1]], base64Values[s[i+2]], base64Values[s[i+3]]
		if a < 0 || b < 0 {
			return false
		}
		v := uint32(a)<<18 | uint32(b)<<12 | uint32(max(c, 0))<<6 | uint32(max(e, 0))
		switch {
		case c >= 0 && e >= 0:
			buf[n], buf[n+1], buf[n+2] = byte(v>>16), byte(v>>8), byte(v)
			n += 3
		case c >= 0 && e == base64Pad:
			buf[n], buf[n+1] = byte(v>>16), byte(v>>8)
			n += 2
		case c == base64Pad && e == base64Pad:
			buf[n] = byte(v >> 16)
			n++
		default:
			return false
		}
	}
	d.b.Bytes(buf[:n])
	return true
}

// base64Pad is the value base64Values gives '='.
const base64Pad = -2

// base64Values maps a byte to its value in the standard base64 alphabet,
// base64Pad for '=' and -1 for the others.
var base64Values = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" {
		t[c] = int8(i)
	}
	t['='] = base64Pad
	return t
}()

// specialFloat parses the strings Spark accepts for FLOAT and DOUBLE
// values that JSON numbers cannot express, when allowNonNumericNumbers is
// on.
func (d *jsonDecoder) specialFloat(s []byte) (float64, bool) {
	if !d.nonNumeric {
		return 0, false
	}
	switch string(s) {
	case "NaN":
		return math.NaN(), true
	case "Infinity", "+Infinity", "+INF":
		return math.Inf(1), true
	case "-Infinity", "-INF":
		return math.Inf(-1), true
	}
	return 0, false
}

// number returns the text Spark gives a STRING field that holds the JSON
// number text: an integer as written ("-0" is "0"), any other number as
// Java writes the double it parses to.
func (d *jsonDecoder) number(text []byte) []byte {
	if isIntegral(text) {
		if string(text) == "-0" {
			return text[1:]
		}
		return text
	}
	f, _ := parseFloat(text, 64)
	if math.IsInf(f, 0) {
		// Jackson writes these numbers as strings.
		return quotedDouble(d.b.Alloc(12)[:0], f)
	}
	return appendJavaDouble(d.b.Alloc(24)[:0], f)
}

// reserialize appends a validated JSON object or array to dst as Spark
// gives it to a STRING field: written again by Jackson, without the
// whitespace between tokens, strings with their escapes resolved and
// written back with Jackson's escapes, numbers as [jsonDecoder.number]
// writes them.
func (d *jsonDecoder) reserialize(dst, v []byte) []byte {
	for i := 0; i < len(v); {
		c := v[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"' || c == '\'':
			j := i + 1
			for v[j] != c {
				if v[j] == '\\' {
					j++
				}
				j++
			}
			d.scratch = jsontext.AppendUnescaped(d.scratch[:0], v[i+1:j])
			dst = jsontext.AppendQuoted(dst, d.scratch)
			i = j + 1
		case c == 'N' || c == 'I' || c == '+' || (c == '-' && i+1 < len(v) && v[i+1] == 'I'):
			n := 1
			for _, nn := range nonNumbers {
				if len(v)-i >= len(nn.text) && string(v[i:i+len(nn.text)]) == nn.text {
					dst = quotedDouble(dst, nn.value)
					n = len(nn.text)
					break
				}
			}
			i += n
		case c == '-' || (c >= '0' && c <= '9'):
			end := max(numberEnd(v, i), i+1)
			dst = append(dst, d.number(v[i:end])...)
			i = end
		default: // punctuation, true, false, null
			dst = append(dst, c)
			i++
		}
	}
	return dst
}
