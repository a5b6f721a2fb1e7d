package decode

import (
	"bytes"
	"math"
	"math/bits"
	"strconv"
	"unsafe"
)

// str views b as a string without copying, for parsers that do not keep
// their input.
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// ParseInteger parses raw JSON text that is an integer number (no
// fraction or exponent) into an int64: false for other text and integers
// out of its range.
func ParseInteger(raw []byte) (int64, bool) {
	if len(raw) == 0 || !isIntegral(raw) || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	return parseInt(raw, math.MinInt64, math.MaxInt64)
}

// parseInt parses an integer literal (-?[0-9]+, as the JSON scanner
// validated it) that must lie in [lo, hi].
func parseInt(s []byte, lo, hi int64) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	d := s
	if neg {
		d = s[1:]
	}
	var v int64
	if len(d) == 0 || len(d) > 18 {
		// Long or empty: let strconv find the overflow.
		x, err := strconv.ParseInt(str(s), 10, 64)
		return x, err == nil && x >= lo && x <= hi
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, v >= lo && v <= hi
}

// shortInt reads the JSON integer at s[i], most integers of real records,
// in one pass: its value and end, when it has 1 to 18 digits, no leading
// zero and no fraction or exponent after them (what follows otherwise is
// the next token's, as for numberEnd). Otherwise end is 0, and the number
// is left to numberTokenEnd and parseInt ("-", "0123" and 19 digits are
// theirs to refuse or read).
func shortInt(s []byte, i int) (v int64, end int) {
	j := i
	if j < len(s) && s[j] == '-' {
		j++
	}
	start := j
	for ; j < len(s) && s[j]-'0' <= 9; j++ {
		v = v*10 + int64(s[j]-'0')
	}
	n := j - start
	if n == 0 || n > 18 || (n > 1 && s[start] == '0') ||
		(j < len(s) && (s[j] == '.' || s[j] == 'e' || s[j] == 'E')) {
		return 0, 0
	}
	if s[i] == '-' {
		v = -v
	}
	return v, j
}

// parseFloat parses a JSON number. A magnitude beyond the type's range is
// ±Inf, as Jackson returns it to Spark.
func parseFloat(s []byte, bitSize int) (float64, bool) {
	if f, ok := exactFloat(s, bitSize); ok {
		return f, true
	}
	f, err := strconv.ParseFloat(str(s), bitSize)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// exactFloat parses a JSON number whose significant digits and power of
// ten are both exact in the float type, most numbers of real records
// ("540.46" is 54046 / 10^2): one IEEE multiplication or division then
// rounds correctly, so the result is strconv's (Clinger's fast path, which
// strconv takes too, after a slower scan of the text). ok is false for
// other numbers, which strconv parses.
func exactFloat(s []byte, bitSize int) (f float64, ok bool) {
	neg, intPart, fracPart, exp, ok := numberParts(s)
	if !ok || len(intPart)+len(fracPart) > 19 {
		return 0, false // not a number, or m could overflow
	}
	var m uint64
	for _, c := range intPart {
		m = m*10 + uint64(c-'0')
	}
	for _, c := range fracPart {
		m = m*10 + uint64(c-'0')
	}
	exp -= len(fracPart)
	if bitSize == 32 {
		if m>>24 != 0 || exp < -10 || exp > 10 {
			return 0, false
		}
		f32 := float32(m)
		if exp < 0 {
			f32 /= float32pow10[-exp]
		} else {
			f32 *= float32pow10[exp]
		}
		f = float64(f32)
	} else {
		if m>>53 != 0 || exp < -22 || exp > 22 {
			return 0, false
		}
		f = float64(m)
		if exp < 0 {
			f /= float64pow10[-exp]
		} else {
			f *= float64pow10[exp]
		}
	}
	if neg {
		f = -f
	}
	return f, true
}

// float64pow10 and float32pow10 hold the powers of ten each float type
// holds exactly.
var (
	float64pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
		1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}
	float32pow10 = [...]float32{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10}
)

// appendJavaDouble appends f as Java's Double.toString writes it, the
// text Spark gives a STRING field that holds a JSON number with a fraction
// or an exponent: at least one digit after the point, and the computerized
// scientific notation ("1.0E-5", "1.23456789E7") outside [10^-3, 10^7).
// The digits are the shortest that round-trip, which Java 17 prints too
// but for rare values where it writes one more digit.
func appendJavaDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	if abs := math.Abs(f); abs == 0 || (abs >= 1e-3 && abs < 1e7) {
		n := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
		if bytes.IndexByte(dst[n:], '.') < 0 {
			dst = append(dst, '.', '0')
		}
		return dst
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d[.ddd]e±dd
	k := bytes.IndexByte(e, 'e')
	dst = append(dst, e[:k]...)
	if bytes.IndexByte(e[:k], '.') < 0 {
		dst = append(dst, '.', '0')
	}
	dst = append(dst, 'E')
	exp := e[k+1:]
	if exp[0] == '-' {
		dst = append(dst, '-')
	}
	exp = bytes.TrimLeft(exp[1:], "0")
	return append(dst, exp...)
}

// quotedDouble appends f as Java writes it, in double quotes: how Jackson
// writes NaN and the infinities when it writes JSON.
func quotedDouble(dst []byte, f float64) []byte {
	return append(appendJavaDouble(append(dst, '"'), f), '"')
}

// uint128 is an unsigned 128-bit integer, enough for 38 decimal digits.
type uint128 struct{ hi, lo uint64 }

// mulAdd returns u*10 + d.
func (u uint128) mulAdd(d uint64) uint128 {
	hi, lo := bits.Mul64(u.lo, 10)
	lo, c := bits.Add64(lo, d, 0)
	return uint128{u.hi*10 + hi + c, lo}
}

// less reports whether u < v.
func (u uint128) less(v uint128) bool {
	return u.hi < v.hi || (u.hi == v.hi && u.lo < v.lo)
}

// pow10 holds 10^0 .. 10^38.
var pow10 = func() (p [39]uint128) {
	p[0] = uint128{0, 1}
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1].mulAdd(0)
	}
	return p
}()

// maxExponent bounds a parsed exponent; any larger one over- or underflows
// every DECIMAL anyway, and the bound keeps the arithmetic from wrapping.
const maxExponent = 100_000

// numberParts splits decimal text ([+-]?digits[.digits][(e|E)[+-]?digits],
// at least one digit before the exponent) into its sign, the digits before
// and after the point and the exponent, bounded by maxExponent; ok is
// false for other text. parseDecimal and exactFloat read numbers through
// it.
func numberParts(s []byte) (neg bool, intPart, fracPart []byte, exp int, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	intStart := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart = s[intStart:i]
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		fracPart = s[fs:i]
	}
	if len(intPart)+len(fracPart) == 0 {
		return false, nil, nil, 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if exp < maxExponent {
				exp = exp*10 + int(s[i]-'0')
			}
			i++
		}
		if i == es {
			return false, nil, nil, 0, false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return false, nil, nil, 0, false
	}
	return neg, intPart, fracPart, exp, true
}

// parseDecimal parses decimal text as Java's BigDecimal does
// ([+-]?digits[.digits][(e|E)[+-]?digits], at least one mantissa digit) and
// returns its value scaled to scale and rounded HALF_UP: the magnitude of
// the unscaled value and its sign. ok is false when the text is not a number
// or the value needs more than precision digits.
func parseDecimal(s []byte, precision, scale int) (u uint128, neg, ok bool) {
	neg, intPart, fracPart, exp, ok := numberParts(s)
	if !ok {
		return u, false, false
	}
	// The value is digits(intPart ++ fracPart) * 10^(exp - len(fracPart));
	// walk its significant digits (leading zeros dropped).
	ds := digitSeq{intPart, fracPart}
	first := ds.firstNonZero()
	n := ds.len() - first
	if n == 0 {
		return u, neg, true // zero
	}
	shift := exp - len(fracPart) + scale
	keep := n + shift // digits of the unscaled value before rounding
	if keep > precision {
		return u, neg, false
	}
	for k := 0; k < min(keep, n); k++ {
		u = u.mulAdd(uint64(ds.at(first + k)))
	}
	for k := n; k < keep; k++ {
		u = u.mulAdd(0)
	}
	if keep < n && keep >= 0 && ds.at(first+keep) >= 5 {
		// HALF_UP: the first dropped digit decides, away from zero.
		u.lo, u.hi = addCarry(u.lo, u.hi)
	}
	if !u.less(pow10[precision]) {
		return u, neg, false
	}
	return u, neg, true
}

// addCarry returns (hi, lo) + 1 as (lo, hi).
func addCarry(lo, hi uint64) (uint64, uint64) {
	lo, c := bits.Add64(lo, 1, 0)
	return lo, hi + c
}

// digitSeq is a digit string split in two parts, around a decimal point.
type digitSeq struct{ a, b []byte }

func (d digitSeq) len() int { return len(d.a) + len(d.b) }

func (d digitSeq) at(i int) byte {
	if i < len(d.a) {
		return d.a[i] - '0'
	}
	return d.b[i-len(d.a)] - '0'
}

func (d digitSeq) firstNonZero() int {
	i := 0
	for i < d.len() && d.at(i) == 0 {
		i++
	}
	return i
}

// int64Of returns the signed value of a magnitude that fits in 63 bits.
func int64Of(u uint128, neg bool) int64 {
	v := int64(u.lo)
	if neg {
		return -v
	}
	return v
}

// putDecimal writes the two's-complement big-endian form of the signed
// magnitude u into dst, which must hold it.
func putDecimal(dst []byte, u uint128, neg bool) {
	if neg {
		// Two's complement: invert and add one.
		u.hi, u.lo = ^u.hi, ^u.lo
		u.lo, u.hi = addCarry(u.lo, u.hi)
	}
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = byte(u.lo)
		u.lo = u.lo>>8 | u.hi<<56
		if neg {
			u.hi = uint64(int64(u.hi) >> 8)
		} else {
			u.hi >>= 8
		}
	}
}

// isIntegral reports whether a JSON number has neither fraction nor
// exponent.
func isIntegral(text []byte) bool {
	for _, c := range text {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}
