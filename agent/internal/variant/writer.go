package variant

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"

	pv "github.com/parquet-go/parquet-go/variant"
)

// writer writes one VARIANT value in the binary encoding of the Parquet
// VARIANT spec, the bytes parquet-go's variant.Builder writes, with each
// object field given by its id in the dictionary rather than by its name:
// the Encoder knows the ids from its first pass, so no key is looked up
// while the value is written. Containers are written as their children
// come; a container's header goes in front of its children when it closes.
// The zero value is ready to use; reset keeps the buffers.
type writer struct {
	buf    []byte
	frames []frame
	// fields and elems hold the children of the open objects and arrays,
	// each container's after those of the containers around it.
	fields []field
	elems  []int
	// slots and moved are sortFields' scratch for objects of many fields.
	slots []int32
	moved []field
}

// frame is an open container: where its children start in buf, and where
// its own entries start in fields or elems.
type frame struct {
	object bool
	start  int
	base   int
}

// field is one field of an open object: its id and where its value starts
// in buf.
type field struct {
	id, start int
}

// duplicateKeyError is what endObject returns for an object that has a key
// twice; id is the key's.
type duplicateKeyError struct{ id int }

func (e duplicateKeyError) Error() string { return "duplicate object field" }

// errTooLarge is what endObject and endArray return for a container whose
// children take more than the 4 GiB its offsets can reach.
var errTooLarge = errors.New("a container's content exceeds the 4 GiB a VARIANT offset reaches")

// reset empties the writer for the next value.
func (w *writer) reset() {
	w.buf, w.frames, w.fields, w.elems = w.buf[:0], w.frames[:0], w.fields[:0], w.elems[:0]
}

// value starts a value: an element of the innermost open array is
// recorded where it starts. An object's field was recorded by field.
func (w *writer) value() {
	if n := len(w.frames); n > 0 && !w.frames[n-1].object {
		w.elems = append(w.elems, len(w.buf))
	}
}

// primitive writes the header of a primitive value of type p.
func (w *writer) primitive(p pv.PrimitiveType) {
	w.value()
	w.buf = append(w.buf, header(pv.BasicPrimitive, byte(p)))
}

// header is a value's first byte: its basic type and its type-specific
// bits.
func header(basic pv.BasicType, bits byte) byte { return byte(basic) | bits<<2 }

// Null writes a null.
func (w *writer) Null() { w.primitive(pv.PrimitiveNull) }

// Bool writes a boolean.
func (w *writer) Bool(v bool) {
	if v {
		w.primitive(pv.PrimitiveTrue)
	} else {
		w.primitive(pv.PrimitiveFalse)
	}
}

// Int8 writes an 8-bit integer.
func (w *writer) Int8(v int8) {
	w.primitive(pv.PrimitiveInt8)
	w.buf = append(w.buf, byte(v))
}

// Int16 writes a 16-bit integer.
func (w *writer) Int16(v int16) {
	w.primitive(pv.PrimitiveInt16)
	w.buf = binary.LittleEndian.AppendUint16(w.buf, uint16(v))
}

// Int32 writes a 32-bit integer.
func (w *writer) Int32(v int32) {
	w.primitive(pv.PrimitiveInt32)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(v))
}

// Int64 writes a 64-bit integer.
func (w *writer) Int64(v int64) {
	w.primitive(pv.PrimitiveInt64)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(v))
}

// Double writes a double.
func (w *writer) Double(v float64) {
	w.primitive(pv.PrimitiveDouble)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(v))
}

// Decimal4 writes a decimal of at most 9 digits.
func (w *writer) Decimal4(unscaled int32, scale byte) {
	w.primitive(pv.PrimitiveDecimal4)
	w.buf = binary.LittleEndian.AppendUint32(append(w.buf, scale), uint32(unscaled))
}

// Decimal8 writes a decimal of at most 18 digits.
func (w *writer) Decimal8(unscaled int64, scale byte) {
	w.primitive(pv.PrimitiveDecimal8)
	w.buf = binary.LittleEndian.AppendUint64(append(w.buf, scale), uint64(unscaled))
}

// Decimal16 writes a decimal of at most 38 digits, its unscaled value in
// little-endian two's complement.
func (w *writer) Decimal16(unscaled [16]byte, scale byte) {
	w.primitive(pv.PrimitiveDecimal16)
	w.buf = append(append(w.buf, scale), unscaled[:]...)
}

// String writes a string: a short string of up to 63 bytes, else a
// primitive string. A string of a Kafka record is shorter than the 4 GiB
// the encoding holds.
func (w *writer) String(s []byte) {
	w.value()
	if len(s) <= 63 {
		w.buf = append(w.buf, header(pv.BasicShortString, byte(len(s))))
	} else {
		w.buf = binary.LittleEndian.AppendUint32(append(w.buf, header(pv.BasicPrimitive, byte(pv.PrimitiveString))), uint32(len(s)))
	}
	w.buf = append(w.buf, s...)
}

// beginObject opens an object.
func (w *writer) beginObject() {
	w.value()
	w.frames = append(w.frames, frame{object: true, start: len(w.buf), base: len(w.fields)})
}

// field names the next value of the innermost open object by its key's id.
func (w *writer) field(id int) {
	w.fields = append(w.fields, field{id: id, start: len(w.buf)})
}

// endObject closes the innermost open object. Its header lists the fields
// in the order of their ids, which is the order of their keys (the
// dictionary is sorted); their values stay in the order they came.
func (w *writer) endObject() error {
	f := w.frames[len(w.frames)-1]
	fields := w.fields[f.base:]
	w.sortFields(fields)
	maxID := -1
	for i := range fields {
		if fields[i].id == maxID {
			return duplicateKeyError{id: maxID}
		}
		maxID = fields[i].id
	}
	size := len(w.buf) - f.start
	if uint64(size) > math.MaxUint32 {
		return errTooLarge
	}
	idSize, offSize := width(max(maxID, 0)), width(size)
	countSize, large := 1, byte(0)
	if len(fields) > 255 {
		countSize, large = 4, 1
	}
	n := len(fields)
	h := w.close(f, 1+countSize+n*idSize+(n+1)*offSize)
	h[0] = header(pv.BasicObject, byte(offSize-1)|byte(idSize-1)<<2|large<<4)
	at := putUint(h, 1, n, countSize)
	for i := range fields {
		at = putUint(h, at, fields[i].id, idSize)
	}
	for i := range fields {
		at = putUint(h, at, fields[i].start-f.start, offSize)
	}
	putUint(h, at, size, offSize)
	w.fields = w.fields[:f.base]
	return nil
}

// sortFields sorts an object's fields by id: by insertion for the few
// fields most objects have. More fields whose largest id is below four
// times their count (a record's top-level object, say) go into a slot per
// id and are read back in id order; other large objects are sorted by
// comparison. A key the object has twice falls back to the sort, which
// puts the two equal ids next to each other for endObject to report.
func (w *writer) sortFields(fields []field) {
	if len(fields) <= 12 {
		insertionSort(fields)
		return
	}
	maxID := 0
	for i := range fields {
		maxID = max(maxID, fields[i].id)
	}
	if maxID >= 4*len(fields) {
		slices.SortFunc(fields, func(a, b field) int { return a.id - b.id })
		return
	}
	w.slots = slices.Grow(w.slots[:0], maxID+1)[:maxID+1]
	for i := range w.slots {
		w.slots[i] = -1
	}
	for i := range fields {
		if w.slots[fields[i].id] >= 0 {
			slices.SortFunc(fields, func(a, b field) int { return a.id - b.id })
			return
		}
		w.slots[fields[i].id] = int32(i)
	}
	w.moved = append(w.moved[:0], fields...)
	k := 0
	for _, i := range w.slots {
		if i >= 0 {
			fields[k] = w.moved[i]
			k++
		}
	}
}

// insertionSort sorts a few fields by id.
func insertionSort(fields []field) {
	for i := 1; i < len(fields); i++ {
		for j := i; j > 0 && fields[j].id < fields[j-1].id; j-- {
			fields[j], fields[j-1] = fields[j-1], fields[j]
		}
	}
}

// beginArray opens an array.
func (w *writer) beginArray() {
	w.value()
	w.frames = append(w.frames, frame{start: len(w.buf), base: len(w.elems)})
}

// endArray closes the innermost open array.
func (w *writer) endArray() error {
	f := w.frames[len(w.frames)-1]
	elems := w.elems[f.base:]
	size := len(w.buf) - f.start
	if uint64(size) > math.MaxUint32 {
		return errTooLarge
	}
	offSize := width(size)
	countSize, large := 1, byte(0)
	if len(elems) > 255 {
		countSize, large = 4, 1
	}
	n := len(elems)
	h := w.close(f, 1+countSize+(n+1)*offSize)
	h[0] = header(pv.BasicArray, byte(offSize-1)|large<<2)
	at := putUint(h, 1, n, countSize)
	for _, start := range elems {
		at = putUint(h, at, start-f.start, offSize)
	}
	putUint(h, at, size, offSize)
	w.elems = w.elems[:f.base]
	return nil
}

// close pops container f and moves its children to leave n bytes for its
// header in front of them, which it returns for the caller to fill.
func (w *writer) close(f frame, n int) []byte {
	end := len(w.buf)
	w.buf = slices.Grow(w.buf, n)[:end+n]
	copy(w.buf[f.start+n:], w.buf[f.start:end])
	w.frames = w.frames[:len(w.frames)-1]
	return w.buf[f.start : f.start+n]
}

// width is the bytes, 1 to 4, that an offset or id of at most v takes.
func width(v int) int {
	switch {
	case v <= 0xFF:
		return 1
	case v <= 0xFFFF:
		return 2
	case v <= 0xFFFFFF:
		return 3
	}
	return 4
}

// appendMetadata appends to dst the metadata of a sorted dictionary, the
// bytes parquet-go's variant.MetadataBuilder writes for it: version 1, the
// sorted_strings bit, the narrowest offsets that fit, and the keys, each of
// spans (in order) locating one in keys.
func appendMetadata(dst, keys []byte, spans []keySpan) []byte {
	n := len(spans)
	size := width(max(len(keys), n))
	dst = append(dst, 1|1<<4|byte(size-1)<<6)
	dst = appendUint(dst, n, size)
	off := 0
	for _, s := range spans {
		dst = appendUint(dst, off, size)
		off += s.end - s.start
	}
	dst = appendUint(dst, off, size)
	for _, s := range spans {
		dst = append(dst, keys[s.start:s.end]...)
	}
	return dst
}

// putUint stores v in the n (1 to 4) little-endian bytes of h at at, and
// returns where they end.
func putUint(h []byte, at, v, n int) int {
	switch n {
	case 1:
		h[at] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(h[at:], uint16(v))
	case 3:
		h[at], h[at+1], h[at+2] = byte(v), byte(v>>8), byte(v>>16)
	default:
		binary.LittleEndian.PutUint32(h[at:], uint32(v))
	}
	return at + n
}

// appendUint appends v in n (1 to 4) little-endian bytes (see putUint).
func appendUint(dst []byte, v, n int) []byte {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)[:at+n]
	putUint(dst, at, v, n)
	return dst
}
