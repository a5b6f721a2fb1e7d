package decode

import (
	"encoding/base64"
	"math"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// The conversions of change events' row images: Canal writes every value
// as a JSON string, which lenientString reads as its column's type, and a
// Debezium Connect schema says how a number or string becomes a value of
// some types (a Conversion, which package changelog sets per column with
// [Image.Convert]).

// Conversion says how a JSON number or string becomes a value of its
// column where the column's type alone does not tell (jtype.conv): from a
// Debezium Connect schema.
type Conversion uint8

// The conversions.
const (
	// ConvNone: as the column's type says.
	ConvNone Conversion = iota
	// ConvDays: a number of days since the epoch (DATE).
	ConvDays
	// ConvMillis, ConvMicros, ConvNanos: a number of milli-, micro- or
	// nanoseconds since the epoch (TIMESTAMP, TIMESTAMP_NTZ).
	ConvMillis
	ConvMicros
	ConvNanos
	// ConvDecimalBytes: base64 of a two's-complement big-endian unscaled
	// value (DECIMAL).
	ConvDecimalBytes
)

// lenientString writes s, the contents of a JSON string of a Canal row
// image, as type t: false if it does not fit.
func (d *jsonDecoder) lenientString(t *jtype, s []byte) bool {
	switch t.kind {
	case schema.Boolean:
		switch string(s) {
		case "true", "TRUE", "True":
			d.b.Bool(true)
			return true
		case "false", "FALSE", "False":
			d.b.Bool(false)
			return true
		}
		// tinyint(1) and BIT hold any integer: not zero is true, as JDBC
		// and Debezium read them.
		n, ok := parseInt(s, math.MinInt64, math.MaxInt64)
		if !ok {
			return false
		}
		d.b.Bool(n != 0)
		return true
	case schema.Byte, schema.Short, schema.Int, schema.Long, schema.Float, schema.Double:
		if numberEnd(s, 0) != len(s) || len(s) == 0 {
			return false
		}
		return d.fromNumber(t, s)
	case schema.Decimal:
		return d.decimal(t, s)
	case schema.Binary:
		// ISO-8859-1 text: each character is a byte.
		buf := d.b.Alloc(len(s))[:0]
		for _, r := range string(s) {
			if r > 0xff {
				return false
			}
			buf = append(buf, byte(r))
		}
		d.b.Bytes(buf)
		return true
	}
	return d.fromString(t, s)
}

// converted writes JSON number text as type t by conversion t.conv; false
// if it does not fit.
func (d *jsonDecoder) converted(t *jtype, text []byte) bool {
	if !isIntegral(text) {
		return false
	}
	v, ok := parseInt(text, math.MinInt64, math.MaxInt64)
	if !ok {
		return false
	}
	switch {
	case t.conv == ConvDays && t.kind == schema.Date:
		if v < math.MinInt32 || v > math.MaxInt32 {
			return false
		}
		d.b.Int32(int32(v))
		return true
	case t.kind != schema.Timestamp && t.kind != schema.TimestampNTZ:
		return false
	case t.conv == ConvMillis:
		if v < math.MinInt64/1000 || v > math.MaxInt64/1000 {
			return false
		}
		v *= 1000
	case t.conv == ConvNanos:
		v /= 1000
	case t.conv != ConvMicros:
		return false
	}
	d.b.Int64(v)
	return true
}

// decimalBytes writes base64 text of a two's-complement big-endian
// unscaled value as DECIMAL t; false if it does not fit t's precision.
func (d *jsonDecoder) decimalBytes(t *jtype, s []byte) bool {
	buf := d.b.Alloc(len(s))
	n, err := base64.StdEncoding.Decode(buf, s)
	if err != nil || n == 0 || n > 16 {
		return false
	}
	raw := buf[:n]
	neg := raw[0]&0x80 != 0
	var u uint128
	for _, c := range raw {
		if neg {
			c = ^c
		}
		u = uint128{u.hi<<8 | u.lo>>56, u.lo<<8 | uint64(c)}
	}
	if neg {
		u.lo, u.hi = addCarry(u.lo, u.hi) // magnitude of ^x is x+1
	}
	if !u.less(pow10[t.precision]) {
		return false
	}
	d.unscaled(t, u, neg)
	return true
}
