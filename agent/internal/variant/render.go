package variant

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
)

// ErrMalformed is wrapped by every error AppendJSON returns: the metadata
// and value binaries are not a VARIANT of the Parquet VariantEncoding
// specification (or one nested deeper than [MaxDepth]).
var ErrMalformed = errors.New("malformed VARIANT")

// Basic types of a value's first byte (its low two bits).
const (
	basicPrimitive = iota
	basicShortString
	basicObject
	basicArray
)

// Primitive type ids of the specification's primitive types table.
const (
	primNull = iota
	primTrue
	primFalse
	primInt8
	primInt16
	primInt32
	primInt64
	primDouble
	primDecimal4
	primDecimal8
	primDecimal16
	primDate
	primTimestamp
	primTimestampNTZ
	primFloat
	primBinary
	primString
	primTime
	primTimestampNanos
	primTimestampNTZNanos
	primUUID
)

// Layouts of the JSON strings AppendJSON writes for dates and times.
const (
	dateLayout   = "2006-01-02"
	tsLayout     = "2006-01-02T15:04:05.999999999Z"
	tsNTZLayout  = "2006-01-02T15:04:05.999999999"
	timeLayout   = "15:04:05.999999"
	maxScale     = 38
	microsPerDay = 86400 * 1e6
)

// AppendJSON appends the VARIANT of metadata and value, binaries of the
// Parquet VariantEncoding specification, to dst as compact JSON text and
// returns the extended buffer. It renders as Spark's to_json does, except
// where JSON has no form for a value:
//
//   - null, booleans and integers as themselves;
//   - decimals as numbers with exactly their scale's digits after the point
//     and no exponent (1.50 stays 1.50, unscaled 5 at scale 3 is 0.005);
//     a decimal of more than 38 digits, which the specification does not
//     support, is an error;
//   - doubles and floats as the shortest digits that read back the same,
//     always with an exponent (1.5e+00, 1e+21): a JSON reader, and
//     [Encoder] among them, takes them for doubles again rather than the
//     integers or decimals their plain forms would be; NaN and ±Inf,
//     which JSON numbers cannot hold, as the strings "NaN", "Infinity" and
//     "-Infinity", as the Kafka sink writes DOUBLE columns;
//   - strings and keys as JSON strings, escaped, each byte that is not
//     valid UTF-8 replaced with U+FFFD;
//   - dates as "2006-01-02"; timestamps as ISO-8601 strings in UTC with a
//     Z ("2006-01-02T15:04:05.123456Z", trailing zeros of the fraction
//     dropped, nanoseconds kept for the nanosecond types); timestamps
//     without time zone the same without the Z; times as "15:04:05.123456";
//   - binary as a JSON string of its standard base64, and a UUID as its
//     36-character hyphenated lowercase hex string;
//   - objects with their fields in the order the value lists them (sorted
//     by key, as the specification requires and [Encoder] writes), arrays
//     in order.
//
// AppendJSON never panics on malformed input: it checks every header,
// length and offset and returns an error wrapping [ErrMalformed] that names
// what is wrong, and dst with what it had appended so far. It refuses
// nesting deeper than [MaxDepth], an object whose keys are not unique and
// in increasing byte order (as the specification requires), and children
// of an object or array that overlap (so the text stays linear in the
// input's size). It allocates only when dst must grow.
func AppendJSON(dst, metadata, value []byte) ([]byte, error) {
	m, err := parseMetadata(metadata)
	if err != nil {
		return dst, fmt.Errorf("%w: metadata: %w", ErrMalformed, err)
	}
	r := renderer{meta: m}
	dst, n, err := r.value(dst, value, 0)
	if err != nil {
		return dst, fmt.Errorf("%w: value: %w", ErrMalformed, err)
	}
	if n != len(value) {
		return dst, fmt.Errorf("%w: value: %d bytes after the top-level value", ErrMalformed, len(value)-n)
	}
	return dst, nil
}

// metadata is a parsed metadata binary: its dictionary of keys.
type metadata struct {
	offSize int    // bytes per dictionary size and offset
	size    int    // number of keys
	offsets []byte // size+1 offsets of offSize bytes
	strings []byte // the keys, back to back
}

// parseMetadata checks a metadata binary's header and the room of its
// offsets; each key's offsets are checked when the key is used.
func parseMetadata(b []byte) (metadata, error) {
	if len(b) == 0 {
		return metadata{}, errors.New("empty")
	}
	if v := b[0] & 0x0f; v != 1 {
		return metadata{}, fmt.Errorf("version %d, want 1", v)
	}
	m := metadata{offSize: int(b[0]>>6) + 1}
	size, err := readUint(b[1:], m.offSize)
	if err != nil {
		return metadata{}, fmt.Errorf("dictionary size: %w", err)
	}
	m.size = size
	start := 1 + m.offSize
	end := uint64(start) + uint64(size+1)*uint64(m.offSize)
	if end > uint64(len(b)) {
		return metadata{}, fmt.Errorf("%d keys need %d bytes of offsets, the metadata has %d bytes", size, end-uint64(start), len(b)-start)
	}
	m.offsets, m.strings = b[start:end], b[end:]
	return m, nil
}

// key returns the dictionary's key id.
func (m *metadata) key(id int) ([]byte, error) {
	if id >= m.size {
		return nil, fmt.Errorf("field id %d, the dictionary has %d keys", id, m.size)
	}
	lo, _ := readUint(m.offsets[id*m.offSize:], m.offSize)
	hi, _ := readUint(m.offsets[(id+1)*m.offSize:], m.offSize)
	if lo > hi || hi > len(m.strings) {
		return nil, fmt.Errorf("key %d spans bytes %d to %d of %d", id, lo, hi, len(m.strings))
	}
	return m.strings[lo:hi], nil
}

// readUint reads an unsigned little-endian value of w (1 to 4) bytes.
func readUint(b []byte, w int) (int, error) {
	if len(b) < w {
		return 0, fmt.Errorf("%d bytes needed, %d left", w, len(b))
	}
	v := 0
	for i := w - 1; i >= 0; i-- {
		v = v<<8 | int(b[i])
	}
	return v, nil
}

// renderer writes the values of one VARIANT.
type renderer struct {
	meta metadata
}

// value appends the value at the start of b, depth containers deep, and
// returns how many bytes of b it took.
func (r *renderer) value(dst, b []byte, depth int) ([]byte, int, error) {
	if len(b) == 0 {
		return dst, 0, errors.New("a value of 0 bytes")
	}
	header := int(b[0] >> 2)
	switch b[0] & 3 {
	case basicPrimitive:
		return appendPrimitive(dst, b, header)
	case basicShortString:
		if 1+header > len(b) {
			return dst, 0, fmt.Errorf("a short string of %d bytes, %d left", header, len(b)-1)
		}
		return jsontext.AppendQuotedString(dst, view(b[1:1+header])), 1 + header, nil
	}
	if depth >= MaxDepth {
		return dst, 0, fmt.Errorf("nesting deeper than %d", MaxDepth)
	}
	return r.container(dst, b, header, depth+1)
}

// container appends the object or array at the start of b, whose
// value_header is header.
func (r *renderer) container(dst, b []byte, header, depth int) ([]byte, int, error) {
	object := b[0]&3 == basicObject
	offSize, idSize, large := header&3+1, 0, header>>2&1 == 1
	what, open, end := "array", byte('['), byte(']')
	if object {
		idSize, large = header>>2&3+1, header>>4&1 == 1
		what, open, end = "object", '{', '}'
	}
	countSize := 1
	if large {
		countSize = 4
	}
	n, err := readUint(b[1:], countSize)
	if err != nil {
		return dst, 0, fmt.Errorf("%s element count: %w", what, err)
	}
	ids := 1 + countSize
	offs := uint64(ids) + uint64(n)*uint64(idSize)
	fields := offs + uint64(n+1)*uint64(offSize)
	if fields > uint64(len(b)) {
		return dst, 0, fmt.Errorf("%s of %d elements: its ids and offsets need %d bytes, %d left", what, n, fields-1, len(b)-1)
	}
	size, _ := readUint(b[offs+uint64(n)*uint64(offSize):], offSize)
	if fields+uint64(size) > uint64(len(b)) {
		return dst, 0, fmt.Errorf("%s of %d elements: its values need %d bytes, %d left", what, n, size, uint64(len(b))-fields)
	}
	c := children{ids: b[ids:offs], idSize: idSize, offs: b[offs:fields], offSize: offSize, data: b[fields : fields+uint64(size)]}
	dst = append(dst, open)
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = r.child(dst, &c, i, object, depth); err != nil {
			return dst, 0, fmt.Errorf("%s element %d: %w", what, i, err)
		}
	}
	return append(dst, end), int(fields) + size, nil
}

// children are the elements of an object (with ids) or an array.
type children struct {
	ids, offs       []byte
	idSize, offSize int
	data            []byte // the values
	used            int    // bytes of data the elements so far took
	key             []byte // an object's key of the element before
}

// child appends element i of c, with its key when object.
func (r *renderer) child(dst []byte, c *children, i int, object bool, depth int) ([]byte, error) {
	if object {
		id, _ := readUint(c.ids[i*c.idSize:], c.idSize)
		key, err := r.meta.key(id)
		if err != nil {
			return dst, err
		}
		if i > 0 && bytes.Compare(c.key, key) >= 0 {
			return dst, fmt.Errorf("key %q after %q: the keys are not unique and in increasing order", key, c.key)
		}
		c.key = key
		dst = jsontext.AppendQuotedString(dst, view(key))
		dst = append(dst, ':')
	}
	off, _ := readUint(c.offs[i*c.offSize:], c.offSize)
	if off >= len(c.data) {
		return dst, fmt.Errorf("offset %d, the values have %d bytes", off, len(c.data))
	}
	dst, n, err := r.value(dst, c.data[off:], depth)
	if err != nil {
		return dst, err
	}
	if c.used += n; c.used > len(c.data) {
		return dst, fmt.Errorf("the elements overlap: they take over the %d bytes of the values", len(c.data))
	}
	return dst, nil
}

// primitiveSizes are the data bytes of the fixed-size primitive types.
var primitiveSizes = [...]int{
	primNull: 0, primTrue: 0, primFalse: 0, primInt8: 1, primInt16: 2, primInt32: 4, primInt64: 8,
	primDouble: 8, primDecimal4: 5, primDecimal8: 9, primDecimal16: 17, primDate: 4, primTimestamp: 8,
	primTimestampNTZ: 8, primFloat: 4, primBinary: 4, primString: 4, primTime: 8, primTimestampNanos: 8,
	primTimestampNTZNanos: 8, primUUID: 16,
}

// appendPrimitive appends the primitive value at the start of b, of type
// id typ, and returns how many bytes of b it took.
func appendPrimitive(dst, b []byte, typ int) ([]byte, int, error) {
	if typ >= len(primitiveSizes) {
		return dst, 0, fmt.Errorf("unknown primitive type %d", typ)
	}
	n := 1 + primitiveSizes[typ]
	if n > len(b) {
		return dst, 0, fmt.Errorf("primitive type %d needs %d bytes, %d left", typ, n-1, len(b)-1)
	}
	d := b[1:n]
	switch typ {
	case primBinary, primString:
		size := uint64(binary.LittleEndian.Uint32(d))
		if uint64(n)+size > uint64(len(b)) {
			return dst, 0, fmt.Errorf("primitive type %d of %d bytes, %d left", typ, size, len(b)-n)
		}
		s := b[n : n+int(size)]
		if typ == primString {
			return jsontext.AppendQuotedString(dst, view(s)), n + int(size), nil
		}
		return appendQuotedBase64(dst, s), n + int(size), nil
	case primDecimal4, primDecimal8, primDecimal16:
		dst, err := appendDecimal(dst, d)
		return dst, n, err
	case primTime:
		micros := int64(binary.LittleEndian.Uint64(d))
		if micros < 0 || micros >= microsPerDay {
			return dst, 0, fmt.Errorf("a time of %d microseconds, outside a day", micros)
		}
		return appendTime(dst, time.UnixMicro(micros), timeLayout), n, nil
	}
	return appendFixed(dst, d, typ), n, nil
}

// appendFixed appends a primitive of type typ, other than a decimal,
// binary, string or time, from its data d (of the type's size).
func appendFixed(dst, d []byte, typ int) []byte {
	le := binary.LittleEndian
	switch typ {
	case primNull:
		return append(dst, "null"...)
	case primTrue:
		return append(dst, "true"...)
	case primFalse:
		return append(dst, "false"...)
	case primInt8:
		return strconv.AppendInt(dst, int64(int8(d[0])), 10)
	case primInt16:
		return strconv.AppendInt(dst, int64(int16(le.Uint16(d))), 10)
	case primInt32:
		return strconv.AppendInt(dst, int64(int32(le.Uint32(d))), 10)
	case primInt64:
		return strconv.AppendInt(dst, int64(le.Uint64(d)), 10)
	case primDouble:
		return jsontext.AppendFloat(dst, math.Float64frombits(le.Uint64(d)), 'e', 64)
	case primFloat:
		return jsontext.AppendFloat(dst, float64(math.Float32frombits(le.Uint32(d))), 'e', 32)
	case primDate:
		return appendTime(dst, time.Unix(int64(int32(le.Uint32(d)))*86400, 0), dateLayout)
	case primTimestamp:
		return appendTime(dst, time.UnixMicro(int64(le.Uint64(d))), tsLayout)
	case primTimestampNTZ:
		return appendTime(dst, time.UnixMicro(int64(le.Uint64(d))), tsNTZLayout)
	case primTimestampNanos:
		return appendTime(dst, time.Unix(0, int64(le.Uint64(d))), tsLayout)
	case primTimestampNTZNanos:
		return appendTime(dst, time.Unix(0, int64(le.Uint64(d))), tsNTZLayout)
	}
	return appendUUID(dst, d)
}

// appendTime appends t in UTC as a JSON string of layout.
func appendTime(dst []byte, t time.Time, layout string) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, layout)
	return append(dst, '"')
}

// appendQuotedBase64 appends b as a JSON string of its standard base64.
func appendQuotedBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendUUID appends the 16 big-endian bytes d as a JSON string of the
// UUID's hyphenated lowercase hex.
func appendUUID(dst, d []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i, c := range d {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hex[c>>4], hex[c&15])
	}
	return append(dst, '"')
}

// appendDecimal appends a decimal4, decimal8 or decimal16 from its data d:
// the scale byte then the little-endian two's complement unscaled value.
func appendDecimal(dst, d []byte) ([]byte, error) {
	scale := int(d[0])
	if scale > maxScale {
		return dst, fmt.Errorf("decimal scale %d, over %d", scale, maxScale)
	}
	u := d[1:]
	var hi, lo uint64
	switch len(u) {
	case 4:
		lo = uint64(int64(int32(binary.LittleEndian.Uint32(u))))
	case 8:
		lo = binary.LittleEndian.Uint64(u)
	default:
		lo, hi = binary.LittleEndian.Uint64(u), binary.LittleEndian.Uint64(u[8:])
	}
	if len(u) < 16 && int64(lo) < 0 {
		hi = math.MaxUint64 // sign-extend to 128 bits
	}
	negative := int64(hi) < 0
	if negative {
		lo, hi = negate128(lo, hi)
	}
	var buf [40]byte // 2^128 has 39 digits
	digits := decimalDigits(&buf, lo, hi)
	if len(digits) > maxScale {
		return dst, fmt.Errorf("a decimal of %d digits, over %d", len(digits), maxScale)
	}
	if negative {
		dst = append(dst, '-')
	}
	return appendScaled(dst, digits, scale), nil
}

// negate128 returns the two's complement negation of the 128-bit lo, hi.
func negate128(lo, hi uint64) (uint64, uint64) {
	lo, borrow := bits.Sub64(0, lo, 0)
	hi, _ = bits.Sub64(0, hi, borrow)
	return lo, hi
}

// decimalDigits returns the decimal digits of the unsigned 128-bit lo, hi,
// none for 0, written at the end of buf.
func decimalDigits(buf *[40]byte, lo, hi uint64) []byte {
	i := len(buf)
	for hi != 0 || lo != 0 {
		var r uint64
		hi, r = hi/10, hi%10
		lo, r = bits.Div64(r, lo, 10)
		i--
		buf[i] = byte('0' + r)
	}
	return buf[i:]
}

// appendScaled appends the number of decimal digits divided by 10^scale,
// in plain decimal with scale digits after the point.
func appendScaled(dst, digits []byte, scale int) []byte {
	if len(digits) <= scale {
		dst = append(dst, '0')
		if scale > 0 {
			dst = append(dst, '.')
		}
		for range scale - len(digits) {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-scale]...)
	if scale > 0 {
		dst = append(dst, '.')
		dst = append(dst, digits[len(digits)-scale:]...)
	}
	return dst
}
