package avro

import "math/bits"

// uint128 is an unsigned 128-bit integer, enough for 38 decimal digits.
type uint128 struct{ hi, lo uint64 }

// pow10 holds 10^0 .. 10^38.
var pow10 = func() (p [39]uint128) {
	p[0] = uint128{0, 1}
	for i := 1; i < len(p); i++ {
		hi, lo := bits.Mul64(p[i-1].lo, 10)
		p[i] = uint128{p[i-1].hi*10 + hi, lo}
	}
	return p
}()

// decimal writes v, an unscaled value as a big-endian two's-complement
// integer of any length (a bytes or fixed decimal), to n's DECIMAL column:
// an INT32 or INT64, or two's complement of n.width bytes.
func (d *Decoder) decimal(n *node, v []byte) bool {
	if len(v) == 0 {
		return d.fail(n, "empty decimal")
	}
	neg := v[0]&0x80 != 0
	// Drop the bytes that only extend the sign.
	for len(v) > 1 && (v[0] == 0 && v[1]&0x80 == 0 || v[0] == 0xff && v[1]&0x80 != 0) {
		v = v[1:]
	}
	if len(v) > 16 {
		return d.fail(n, "decimal out of its column's precision")
	}
	var u uint128
	if neg {
		u = uint128{^uint64(0), ^uint64(0)}
	}
	for _, c := range v {
		u = uint128{u.hi<<8 | u.lo>>56, u.lo<<8 | uint64(c)}
	}
	m := u // the magnitude
	if neg {
		var c uint64
		m.lo, c = bits.Add64(^u.lo, 1, 0)
		m.hi = ^u.hi + c
	}
	if limit := pow10[n.precision]; m.hi > limit.hi || m.hi == limit.hi && m.lo >= limit.lo {
		return d.fail(n, "decimal out of its column's precision")
	}
	switch {
	case n.precision <= 9:
		d.b.Int32(int32(u.lo))
	case n.precision <= 18:
		d.b.Int64(int64(u.lo))
	default:
		buf := d.b.Alloc(n.width)
		fill := byte(0)
		if neg {
			fill = 0xff
		}
		pad := len(buf) - len(v)
		for i := range pad {
			buf[i] = fill
		}
		copy(buf[pad:], v)
		d.b.Bytes(buf)
	}
	return true
}
