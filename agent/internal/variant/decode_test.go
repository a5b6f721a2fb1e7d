package variant_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"unicode/utf8"
)

// This file holds a small VARIANT decoder written from the specification for
// the tests, independent of the parquet-go code the encoder uses. Besides
// decoding, it checks what the encoder promises beyond a valid encoding: a
// sorted unique dictionary, the narrowest widths, the smallest numeric types.

// decimal is a decoded VARIANT decimal: unscaled / 10^scale.
type decimal struct {
	unscaled *big.Int
	scale    int
	size     int // 4, 8 or 16 bytes
}

// rat returns the decimal's exact value.
func (d decimal) rat() *big.Rat {
	return new(big.Rat).SetFrac(d.unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.scale)), nil))
}

// decodeVariant decodes a metadata and value pair into nil, bool, int64,
// decimal, float64, string, []any or map[string]any.
func decodeVariant(metadata, value []byte) (any, error) {
	dict, err := decodeMetadata(metadata)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	v, n, err := decodeValue(dict, value)
	if err != nil {
		return nil, err
	}
	if n != len(value) {
		return nil, fmt.Errorf("value has %d bytes after the top-level value", len(value)-n)
	}
	return v, nil
}

// width returns the narrowest byte width (1 to 4) of an unsigned value.
func width(v int) int {
	switch {
	case v <= 0xff:
		return 1
	case v <= 0xffff:
		return 2
	case v <= 0xffffff:
		return 3
	}
	return 4
}

// readUint reads a little-endian unsigned value of w bytes.
func readUint(b []byte, w int) (int, error) {
	if len(b) < w {
		return 0, fmt.Errorf("need %d bytes, have %d", w, len(b))
	}
	v := 0
	for i := w - 1; i >= 0; i-- {
		v = v<<8 | int(b[i])
	}
	return v, nil
}

func decodeMetadata(m []byte) ([]string, error) {
	if len(m) == 0 {
		return nil, fmt.Errorf("empty")
	}
	h := m[0]
	if h&0x0f != 1 {
		return nil, fmt.Errorf("version %d", h&0x0f)
	}
	if h&0x10 == 0 {
		return nil, fmt.Errorf("sorted_strings bit not set")
	}
	if h&0x20 != 0 {
		return nil, fmt.Errorf("reserved bit set")
	}
	w := int(h>>6) + 1
	n, err := readUint(m[1:], w)
	if err != nil {
		return nil, err
	}
	pos := 1 + w
	offsets := make([]int, n+1)
	for i := range offsets {
		if offsets[i], err = readUint(m[pos:], w); err != nil {
			return nil, err
		}
		pos += w
	}
	data := m[pos:]
	if offsets[0] != 0 || offsets[n] != len(data) {
		return nil, fmt.Errorf("offsets %d..%d do not span the %d string bytes", offsets[0], offsets[n], len(data))
	}
	if want := width(max(n, len(data))); w != want {
		return nil, fmt.Errorf("offset width %d, narrowest is %d", w, want)
	}
	dict := make([]string, n)
	for i := range dict {
		if offsets[i] > offsets[i+1] {
			return nil, fmt.Errorf("offsets decrease at %d", i)
		}
		s := data[offsets[i]:offsets[i+1]]
		if !utf8.Valid(s) {
			return nil, fmt.Errorf("key %d is not UTF-8", i)
		}
		if i > 0 && bytes.Compare([]byte(dict[i-1]), s) >= 0 {
			return nil, fmt.Errorf("keys %q and %q are not sorted and unique", dict[i-1], s)
		}
		dict[i] = string(s)
	}
	return dict, nil
}

// decodeValue decodes the value at the start of b and returns its length.
func decodeValue(dict []string, b []byte) (any, int, error) {
	if len(b) == 0 {
		return nil, 0, fmt.Errorf("missing value")
	}
	basic, h := b[0]&3, int(b[0]>>2)
	switch basic {
	case 0:
		return decodePrimitive(b[1:], h)
	case 1:
		if len(b) < 1+h {
			return nil, 0, fmt.Errorf("short string of %d bytes truncated", h)
		}
		return checkString(b[1 : 1+h]), 1 + h, nil
	case 2:
		return decodeObject(dict, b, h)
	default:
		return decodeArray(dict, b, h)
	}
}

// checkString returns s as a string, or an error value if not UTF-8.
func checkString(s []byte) any {
	if !utf8.Valid(s) {
		return fmt.Errorf("string %q is not UTF-8", s)
	}
	return string(s)
}

func decodePrimitive(b []byte, typ int) (any, int, error) {
	sizes := map[int]int{0: 0, 1: 0, 2: 0, 3: 1, 4: 2, 5: 4, 6: 8, 7: 8, 8: 5, 9: 9, 10: 17, 16: 4}
	size, ok := sizes[typ]
	if !ok {
		return nil, 0, fmt.Errorf("primitive type %d is not one the encoder writes", typ)
	}
	if len(b) < size {
		return nil, 0, fmt.Errorf("primitive type %d truncated", typ)
	}
	switch typ {
	case 0:
		return nil, 1, nil
	case 1, 2:
		return typ == 1, 1, nil
	case 3, 4, 5, 6:
		u, _ := readUint(b, size)
		v := int64(u) << (64 - 8*size) >> (64 - 8*size) // sign-extend
		if width := []int{3: 1, 4: 2, 5: 4, 6: 8}[typ]; width > 1 && v >= -1<<(8*width/2-1) && v < 1<<(8*width/2-1) {
			return nil, 0, fmt.Errorf("int%d %d fits a narrower int", 8*width, v)
		}
		return v, 1 + size, nil
	case 7:
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), 9, nil
	case 8, 9, 10:
		scale := int(b[0])
		le := b[1:size]
		be := make([]byte, len(le))
		for i := range le {
			be[len(le)-1-i] = le[i]
		}
		u := new(big.Int).SetBytes(be)
		if be[0]&0x80 != 0 { // negative: subtract 2^(8*len)
			u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(be))))
		}
		d := decimal{unscaled: u, scale: scale, size: len(le)}
		if p := max(precision(u), scale); p > 38 || (d.size == 8 && p <= 9) || (d.size == 16 && p <= 18) {
			return nil, 0, fmt.Errorf("decimal%d with precision %d and scale %d is not the smallest decimal", d.size, precision(u), scale)
		}
		return d, 1 + size, nil
	default: // 16: long string
		n := int(binary.LittleEndian.Uint32(b))
		if n < 64 {
			return nil, 0, fmt.Errorf("long string of %d bytes should be short", n)
		}
		if len(b) < 4+n {
			return nil, 0, fmt.Errorf("long string truncated")
		}
		return checkString(b[4 : 4+n]), 5 + n, nil
	}
}

// precision is the count of significant digits of |u|, 0 for zero.
func precision(u *big.Int) int {
	if u.Sign() == 0 {
		return 0
	}
	return len(new(big.Int).Abs(u).String())
}

// container reads the element count and returns it with the header length.
func container(b []byte, large bool) (n, pos int, err error) {
	if large {
		n, err = readUint(b[1:], 4)
		if err == nil && n <= 255 {
			err = fmt.Errorf("is_large set for %d elements", n)
		}
		return n, 5, err
	}
	if len(b) < 2 {
		return 0, 0, fmt.Errorf("truncated element count")
	}
	return int(b[1]), 2, nil
}

// children decodes the values at the given offsets and checks that they
// exactly tile the data after the header.
func children(dict []string, data []byte, offsets []int, offWidth int) ([]any, error) {
	end := offsets[len(offsets)-1]
	if end > len(data) {
		return nil, fmt.Errorf("last offset %d past the data", end)
	}
	if want := width(end); offWidth != want {
		return nil, fmt.Errorf("offset width %d, narrowest is %d", offWidth, want)
	}
	vals := make([]any, len(offsets)-1)
	covered := 0
	for i := range vals {
		v, n, err := decodeValue(dict, data[offsets[i]:end])
		if err != nil {
			return nil, err
		}
		if e, ok := v.(error); ok {
			return nil, e
		}
		vals[i] = v
		covered += n
	}
	if covered != end {
		return nil, fmt.Errorf("children cover %d of %d bytes", covered, end)
	}
	return vals, nil
}

func decodeObject(dict []string, b []byte, h int) (any, int, error) {
	offW, idW := h&3+1, (h>>2)&3+1
	n, pos, err := container(b, h&0x10 != 0)
	if err != nil {
		return nil, 0, err
	}
	ids := make([]int, n)
	maxID := 0
	for i := range ids {
		if ids[i], err = readUint(b[pos:], idW); err != nil {
			return nil, 0, err
		}
		if ids[i] >= len(dict) {
			return nil, 0, fmt.Errorf("field id %d past the dictionary", ids[i])
		}
		if i > 0 && dict[ids[i-1]] >= dict[ids[i]] {
			return nil, 0, fmt.Errorf("field ids not in key order")
		}
		maxID = max(maxID, ids[i])
		pos += idW
	}
	if idW != width(maxID) {
		return nil, 0, fmt.Errorf("field id width %d, narrowest is %d", idW, width(maxID))
	}
	offsets := make([]int, n+1)
	for i := range offsets {
		if offsets[i], err = readUint(b[pos:], offW); err != nil {
			return nil, 0, err
		}
		pos += offW
	}
	vals, err := children(dict, b[pos:], offsets, offW)
	if err != nil {
		return nil, 0, err
	}
	obj := make(map[string]any, n)
	for i, id := range ids {
		obj[dict[id]] = vals[i]
	}
	return obj, pos + offsets[n], nil
}

func decodeArray(dict []string, b []byte, h int) (any, int, error) {
	offW := h&3 + 1
	n, pos, err := container(b, h&0x4 != 0)
	if err != nil {
		return nil, 0, err
	}
	offsets := make([]int, n+1)
	for i := range offsets {
		if offsets[i], err = readUint(b[pos:], offW); err != nil {
			return nil, 0, err
		}
		if i > 0 && offsets[i] < offsets[i-1] {
			return nil, 0, fmt.Errorf("array offsets decrease")
		}
		pos += offW
	}
	vals, err := children(dict, b[pos:], offsets, offW)
	if err != nil {
		return nil, 0, err
	}
	return vals, pos + offsets[n], nil
}
