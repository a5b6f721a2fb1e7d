package variant

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
)

// Decimal limits of the VARIANT decimal4, decimal8 and decimal16 types.
const (
	maxDecimal4Precision  = 9
	maxDecimal8Precision  = 18
	maxDecimal16Precision = 38
)

// number checks the JSON number at pos and returns where it ends and its
// kind: tokInteger, tokFraction or tokExponent (see writeNumber).
func (e *Encoder) number(pos int) (int, tokenKind, error) {
	in := e.in
	if in[pos] == '-' {
		pos++
	}
	switch {
	case pos < len(in) && in[pos] == '0':
		pos++
	case pos < len(in) && isDigit(in[pos]):
		pos = digits(in, pos)
	default:
		return 0, 0, e.errorAt(pos, "invalid number, expected a digit")
	}
	kind := tokInteger
	if pos < len(in) && in[pos] == '.' {
		end := digits(in, pos+1)
		if end == pos+1 {
			return 0, 0, e.errorAt(end, "invalid number, expected a digit after '.'")
		}
		pos, kind = end, tokFraction
	}
	if pos < len(in) && (in[pos] == 'e' || in[pos] == 'E') {
		pos++
		if pos < len(in) && (in[pos] == '+' || in[pos] == '-') {
			pos++
		}
		end := digits(in, pos)
		if end == pos {
			return 0, 0, e.errorAt(end, "invalid number, expected a digit in the exponent")
		}
		pos, kind = end, tokExponent
	}
	return pos, kind, nil
}

// writeNumber writes num, a JSON number of kind (see number), the way
// Spark's parse_json does:
//
//   - an integer that fits int64 becomes the smallest of int8/16/32/64;
//   - a number without exponent whose significant digits and digits after
//     the point each number at most 38 becomes a decimal, decimal4/8/16 by
//     the larger of the two counts (so 1.50 is decimal4 150 with scale 2,
//     and -0.0 is the decimal 0.0: a decimal has no negative zero);
//   - anything else (an exponent, more digits) becomes a double, ±Inf when
//     out of range (1e400).
func (e *Encoder) writeNumber(num []byte, kind tokenKind) {
	neg := num[0] == '-'
	digits := num
	if neg {
		digits = num[1:]
	}
	switch kind {
	case tokInteger:
		if v, ok := parseInt64(neg, digits); ok {
			e.integer(v)
			return
		}
		if e.decimal(neg, digits, nil) {
			return
		}
	case tokFraction:
		dot := bytes.IndexByte(digits, '.')
		if e.decimal(neg, digits[:dot], digits[dot+1:]) {
			return
		}
	}
	// Out-of-range values come back as ±Inf or ±0 with an error that only
	// says so; the JSON parser behind Spark gives the same values.
	f, _ := strconv.ParseFloat(view(num), 64)
	e.b.Double(f)
}

// digits returns where the run of decimal digits at pos in text ends.
func digits(text []byte, pos int) int {
	for pos < len(text) && isDigit(text[pos]) {
		pos++
	}
	return pos
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseInt64 returns the value of a JSON integer's digits (no leading zero
// but for 0 itself) and whether it fits int64.
func parseInt64(neg bool, digits []byte) (int64, bool) {
	if len(digits) > 19 {
		return 0, false
	}
	var u uint64 // 19 digits never overflow uint64
	for _, c := range digits {
		u = u*10 + uint64(c-'0')
	}
	switch {
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	case neg && u <= 1<<63:
		return int64(-u), true // -(1<<63) wraps to math.MinInt64
	}
	return 0, false
}

// integer writes v in the smallest integer type that holds it.
func (e *Encoder) integer(v int64) {
	switch {
	case v == int64(int8(v)):
		e.b.Int8(int8(v))
	case v == int64(int16(v)):
		e.b.Int16(int16(v))
	case v == int64(int32(v)):
		e.b.Int32(int32(v))
	default:
		e.b.Int64(v)
	}
}

// decimal writes intDigits.fracDigits as a decimal if its precision (count of
// significant digits; Spark counts 1 for zero, which picks the same type)
// and scale (count of fraction digits) are both at most 38, and reports
// whether it did. The type is the smallest whose
// precision covers both counts, as Spark's VariantBuilder.appendDecimal picks.
func (e *Encoder) decimal(neg bool, intDigits, fracDigits []byte) bool {
	scale := len(fracDigits)
	if scale > maxDecimal16Precision {
		return false
	}
	var hi, lo uint64 // the unscaled value, below 10^38 < 2^127
	precision := 0
	for _, part := range [2][]byte{intDigits, fracDigits} {
		for _, c := range part {
			if precision == 0 && c == '0' {
				continue // leading zeros are not significant
			}
			if precision++; precision > maxDecimal16Precision {
				return false
			}
			var carry uint64
			h, l := bits.Mul64(lo, 10)
			lo, carry = bits.Add64(l, uint64(c-'0'), 0)
			hi = hi*10 + h + carry
		}
	}
	if neg { // two's complement of the 128-bit value
		var borrow uint64
		lo, borrow = bits.Sub64(0, lo, 0)
		hi, _ = bits.Sub64(0, hi, borrow)
	}
	switch p := max(precision, scale); {
	case p <= maxDecimal4Precision:
		e.b.Decimal4(int32(lo), byte(scale))
	case p <= maxDecimal8Precision:
		e.b.Decimal8(int64(lo), byte(scale))
	default:
		var le [16]byte
		binary.LittleEndian.PutUint64(le[:8], lo)
		binary.LittleEndian.PutUint64(le[8:], hi)
		e.b.Decimal16(le, byte(scale))
	}
	return true
}
