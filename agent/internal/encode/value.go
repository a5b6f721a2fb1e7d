package encode

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// This file writes row values as JSON. Plain JSON follows Flink's JSON
// format: numbers and booleans as such, a DECIMAL as a number with its
// scale, DATE "yyyy-MM-dd", TIMESTAMP ISO-8601 in UTC with a Z,
// TIMESTAMP_NTZ ISO-8601 without a zone, BINARY base64. With connect set
// (a Debezium event with its schema) the values follow the Connect types
// [connectSchema] declares: DATE as days since the epoch
// (io.debezium.time.Date), TIMESTAMP_NTZ as microseconds
// (io.debezium.time.MicroTimestamp), DECIMAL as the base64 of its unscaled
// two's-complement big-endian bytes (org.apache.kafka.connect.data.Decimal).

// Layouts of time values in plain JSON.
const (
	dateLayout = "2006-01-02"
	tsLayout   = "2006-01-02T15:04:05.999999Z"
	ntzLayout  = "2006-01-02T15:04:05.999999"
)

// appendObject appends a JSON object of fields and their values, only the
// fields at idx when idx is not nil.
func appendObject(dst []byte, fields []schema.Field, values []any, idx []int, connect bool) ([]byte, error) {
	dst = append(dst, '{')
	n := 0
	write := func(i int) error {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = jsontext.AppendQuotedString(dst, fields[i].Name)
		dst = append(dst, ':')
		var err error
		if dst, err = appendValue(dst, fields[i].Type, values[i], connect); err != nil {
			return fmt.Errorf("field %q: %w", fields[i].Name, err)
		}
		return nil
	}
	if idx == nil {
		for i := range fields {
			if err := write(i); err != nil {
				return nil, err
			}
		}
	} else {
		for _, i := range idx {
			if err := write(i); err != nil {
				return nil, err
			}
		}
	}
	return append(dst, '}'), nil
}

// appendValue appends v, a value of type t as [Row.Values] holds them, as
// JSON.
func appendValue(dst []byte, t *schema.Type, v any, connect bool) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	switch x := v.(type) {
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case float32:
		return jsontext.AppendFloat(dst, float64(x), 'g', 32), nil
	case float64:
		return jsontext.AppendFloat(dst, x, 'g', 64), nil
	case string:
		switch t.Kind {
		case schema.Decimal:
			return appendDecimal(dst, t, x, connect)
		case schema.String:
			return jsontext.AppendQuotedString(dst, x), nil
		}
	case []byte:
		return appendBase64(dst, x), nil
	case time.Time:
		return appendTime(dst, t, x, connect), nil
	case json.RawMessage:
		if connect { // io.debezium.data.Json: the JSON as a string
			return jsontext.AppendQuotedString(dst, string(x)), nil
		}
		return append(dst, x...), nil
	case []any:
		if t.Kind != schema.Array {
			break
		}
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, t.Elem, e, connect); err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		if t.Kind != schema.Struct {
			break
		}
		values := make([]any, len(t.Fields))
		for i, f := range t.Fields {
			values[i] = x[f.Name]
		}
		return appendObject(dst, t.Fields, values, nil, connect)
	case [][2]any:
		if t.Kind != schema.Map {
			break
		}
		return appendMap(dst, t, x, connect)
	}
	return nil, fmt.Errorf("a %T is not a value of type %s", v, t)
}

// appendMap appends a MAP as a JSON object; a key that is not a string
// is written as its JSON text.
func appendMap(dst []byte, t *schema.Type, pairs [][2]any, connect bool) ([]byte, error) {
	dst = append(dst, '{')
	for i, kv := range pairs {
		if i > 0 {
			dst = append(dst, ',')
		}
		if s, ok := kv[0].(string); ok && t.Key.Kind != schema.Decimal {
			dst = jsontext.AppendQuotedString(dst, s)
		} else {
			k, err := appendValue(nil, t.Key, kv[0], connect)
			if err != nil {
				return nil, fmt.Errorf("map key: %w", err)
			}
			dst = jsontext.AppendQuotedString(dst, string(k))
		}
		dst = append(dst, ':')
		var err error
		if dst, err = appendValue(dst, t.Value, kv[1], connect); err != nil {
			return nil, fmt.Errorf("map value: %w", err)
		}
	}
	return append(dst, '}'), nil
}

// appendDecimal appends the decimal text s: as a number, or with connect
// as the base64 of its unscaled value's bytes.
func appendDecimal(dst []byte, t *schema.Type, s string, connect bool) ([]byte, error) {
	if !connect && atScale(s, t.Scale) {
		return append(dst, s...), nil
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%q is not a decimal", s)
	}
	if !connect {
		return append(dst, r.FloatString(t.Scale)...), nil
	}
	unscaled := new(big.Int).Mul(r.Num(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil))
	unscaled.Quo(unscaled, r.Denom())
	return appendBase64(dst, twosComplement(unscaled)), nil
}

// atScale reports whether s is already the text big.Rat's FloatString
// writes for it at scale, as the decimals of [Rows] are: an optional
// minus, an integer part without leading zeros and, for a scale above 0,
// a point and exactly scale digits; not a negative zero.
func atScale(s string, scale int) bool {
	if scale < 0 {
		return false
	}
	digits, neg := strings.CutPrefix(s, "-")
	point := len(digits) // the index of the point
	if scale > 0 {
		point = len(digits) - scale - 1
		if point < 0 || digits[point] != '.' {
			return false
		}
	}
	if point == 0 || point > 1 && digits[0] == '0' {
		return false
	}
	zero := true
	for i := range len(digits) {
		switch c := digits[i]; {
		case i == point:
		case c < '0' || c > '9':
			return false
		case c != '0':
			zero = false
		}
	}
	return !neg || !zero
}

// twosComplement returns the shortest two's-complement big-endian bytes
// of n, as Java's BigInteger.toByteArray does.
func twosComplement(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n-1 in bytes, inverted.
	m := new(big.Int).Neg(n)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	for i := range b {
		b[i] = ^b[i]
	}
	return b
}

// appendTime appends a DATE, TIMESTAMP or TIMESTAMP_NTZ value.
func appendTime(dst []byte, t *schema.Type, v time.Time, connect bool) []byte {
	v = v.UTC()
	switch {
	case t.Kind == schema.Date && connect:
		return strconv.AppendInt(dst, int64(math.Floor(float64(v.Unix())/86400)), 10)
	case t.Kind == schema.Date:
		return jsontext.AppendQuotedString(dst, v.Format(dateLayout))
	case t.Kind == schema.TimestampNTZ && connect:
		return strconv.AppendInt(dst, v.UnixMicro(), 10)
	case t.Kind == schema.TimestampNTZ:
		return jsontext.AppendQuotedString(dst, v.Format(ntzLayout))
	}
	return jsontext.AppendQuotedString(dst, v.Format(tsLayout))
}

// appendBase64 appends b as a JSON string of its standard base64.
func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}
