package rows

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// Builder builds a batch of rows of one table schema, column by column. A
// decoder starts a row with [Builder.BeginRow], selects a top-level field
// with [Builder.Field], writes its value (a primitive, [Builder.Null], or a
// nested struct, list or map opened with BeginStruct/BeginList/BeginMap and
// closed with the matching End call), and finishes with [Builder.EndRow]:
//
//	b.Reset()
//	b.BeginRow()
//	b.Field(0); b.Int64(42)
//	b.Field(2); b.BeginList(); b.Bytes(a); b.Null(); b.EndList()
//	err := b.EndRow() // field 1 was not written: it reads as null
//	cols := b.Columns() // one []parquet.Value per leaf column, every row
//
// Fields of a struct may be written in any order; a field written twice keeps
// the last value; a field not written is null. Inside a list every write is
// the next element; inside a map writes alternate key, value, key, value.
//
// Values go straight to the batch's column buffers, where a Parquet column
// writer takes them as they are: each value carries its repetition level,
// definition level and column index, as [parquet.Schema.Deconstruct] sets
// them. The buffers are reused after [Builder.Reset]. Byte slices passed to
// [Builder.Bytes] are not copied; they must stay unchanged until the batch
// is written, and [Builder.Alloc] hands out arena bytes with the batch's
// lifetime. After warm-up a Builder allocates nothing per row.
//
// Misuse (a value of the wrong physical type, a null or a missing value in a
// NOT NULL field, unbalanced Begin/End) never panics: the Builder records the
// first error, ignores the rest of the row, and EndRow returns the error and
// drops the row, leaving the batch as it was before BeginRow. Every row in
// the batch is therefore well formed: values in column order, at least one
// per column, levels within the column's maximums, non-null values of the
// column's physical kind.
//
// A Builder is not safe for concurrent use; use one per goroutine.
type Builder struct {
	plan *plan
	cols [][]parquet.Value // the batch's values, per leaf column
	rows int               // the batch's complete rows
	buf  []byte            // the batch's bytes, see Alloc
	// open says a row is open: its values follow the column lengths in
	// marks[:len(cols)].
	open  bool
	stack []frame
	marks []int    // struct frames: column lengths when the struct began
	set   []uint64 // struct frames: bitsets of written fields
	err   error
}

// frame is one open struct, list or map.
type frame struct {
	n *node
	// kind is n's, kept here as the hot paths look at it on every value.
	kind schema.Kind
	// rep is the repetition level of the first value of each column in the
	// container; def the definition level of the present container.
	rep, def uint8
	// field is a struct's selected field, -1 when none is selected.
	field int
	// count is the number of list elements, or map keys plus values,
	// written so far.
	count int
	// marks and set index the struct's slices in Builder.marks and
	// Builder.set.
	marks, set int
}

// NewBuilder returns a Builder for rows of a table with the given columns;
// the error is the one [Schema] reports.
func NewBuilder(fields []schema.Field) (*Builder, error) {
	p, err := compile(fields)
	if err != nil {
		return nil, err
	}
	return &Builder{plan: p, cols: make([][]parquet.Value, len(p.leaves))}, nil
}

// Schema returns the Parquet schema of the rows, as [Schema] builds it.
func (b *Builder) Schema() *parquet.Schema { return b.plan.schema }

// Reset starts a new batch: it drops the rows built since the previous
// Reset, reclaims the arena behind the byte slices Alloc handed out, and
// abandons an open row.
func (b *Builder) Reset() {
	b.abandon()
	for i := range b.cols {
		b.cols[i] = b.cols[i][:0]
	}
	b.rows = 0
	b.buf = b.buf[:0]
}

// Retained estimates the bytes the Builder keeps from one batch to the
// next: its column buffers and its arena, at their capacity.
func (b *Builder) Retained() int64 {
	n := int64(cap(b.buf))
	for _, col := range b.cols {
		n += int64(cap(col)) * int64(unsafe.Sizeof(parquet.Value{}))
	}
	return n
}

// Columns returns the batch's values, one slice per leaf column in column
// index order, each holding the values of every complete row in row order.
// They alias the Builder's buffers: valid until the next Reset, and not to
// be modified.
func (b *Builder) Columns() [][]parquet.Value { return b.cols }

// Rows returns the number of complete rows in the batch.
func (b *Builder) Rows() int { return b.rows }

// Alloc returns n bytes from the batch arena, valid until the next
// [Builder.Reset]; decoders use it for values they must build (an unescaped
// string, a decimal's bytes) before passing them to [Builder.Bytes].
func (b *Builder) Alloc(n int) []byte {
	if len(b.buf)+n > cap(b.buf) {
		// Earlier slices keep the old array alive; the new one is reused
		// after Reset.
		b.buf = make([]byte, 0, max(2*cap(b.buf), n, 4096))
	}
	i := len(b.buf)
	b.buf = b.buf[:i+n]
	return b.buf[i : i+n : i+n]
}

// BeginRow starts a row, abandoning a row left open.
func (b *Builder) BeginRow() {
	b.abandon()
	b.open = true
	b.pushRoot()
}

// DiscardRow drops the open row, if any, leaving the batch as it was
// before BeginRow: a decoder calls it for a record that gets no row after
// all.
func (b *Builder) DiscardRow() { b.abandon() }

// Mark is a position in a batch between rows, to go back to with
// [Builder.Rewind].
type Mark struct {
	rows int
	lens []int
}

// Mark records in m the end of the batch's complete rows; call it with no
// row open.
func (b *Builder) Mark(m *Mark) {
	m.rows, m.lens = b.rows, m.lens[:0]
	for _, c := range b.cols {
		m.lens = append(m.lens, len(c))
	}
}

// Rewind drops the rows completed since m was marked, and the open row: a
// decoder calls it when a record that gives several rows turns out to give
// none. The bytes the dropped rows took from Alloc are not reclaimed.
func (b *Builder) Rewind(m *Mark) {
	b.abandon()
	for i := range b.cols {
		b.cols[i] = b.cols[i][:m.lens[i]]
	}
	b.rows = m.rows
}

// abandon drops the open row, if any: its values and its error.
func (b *Builder) abandon() {
	if b.open {
		for i := range b.cols {
			b.cols[i] = b.cols[i][:b.marks[i]]
		}
	}
	b.open = false
	b.stack, b.marks, b.set = b.stack[:0], b.marks[:0], b.set[:0]
	b.err = nil
}

// EndRow closes the row, which joins the batch. It returns the first misuse
// recorded since BeginRow instead, and the row is dropped.
func (b *Builder) EndRow() error {
	switch {
	case b.err != nil:
	case !b.open:
		b.fail(errors.New("EndRow without BeginRow"))
	case len(b.stack) > 1:
		b.fail(fmt.Errorf("EndRow with %s still open", b.top().n.name))
	default:
		b.endStruct()
	}
	if err := b.err; err != nil {
		b.abandon()
		return err
	}
	b.open = false
	b.stack, b.marks, b.set = b.stack[:0], b.marks[:0], b.set[:0]
	b.rows++
	return nil
}

// DiscardFields drops whatever was written to the top-level fields [from,
// to) of the open row and returns the cursor to the row's top level, closing
// any open containers. The fields read as null unless written again. A
// decoder calls it when the bytes that feed those fields turn out to be
// malformed halfway through.
func (b *Builder) DiscardFields(from, to int) {
	if len(b.stack) == 0 || from < 0 || to > len(b.plan.root.children) || from > to {
		b.fail(fmt.Errorf("DiscardFields(%d, %d) outside the open row's %d fields", from, to, len(b.plan.root.children)))
		return
	}
	root := &b.stack[0]
	b.stack = b.stack[:1]
	b.marks = b.marks[:len(b.cols)]
	b.set = b.set[:words(len(b.plan.root.children))]
	root.field = -1
	for i := from; i < to; i++ {
		n := b.plan.root.children[i]
		for c := n.lo; c < n.hi; c++ {
			b.cols[c] = b.cols[c][:b.marks[c]]
		}
		b.set[i/64] &^= 1 << (i % 64)
	}
}

// Field selects field i (in declared order) of the open struct as the
// target of the next write.
func (b *Builder) Field(i int) {
	if b.err != nil {
		return
	}
	f := b.top()
	if f == nil || f.kind != schema.Struct {
		b.fail(errors.New("Field called outside a struct"))
		return
	}
	if i < 0 || i >= len(f.n.children) {
		b.fail(fmt.Errorf("%s has no field %d", f.n.name, i))
		return
	}
	f.field = i
}

// Null writes a null at the current position; the position must be
// nullable (an optional field, a list element or a map value).
func (b *Builder) Null() {
	n, rep, def, ok := b.next()
	if !ok {
		return
	}
	if !n.optional {
		b.fail(fmt.Errorf("%s is NOT NULL but was written a null", n.name))
		return
	}
	b.nulls(n, rep, def)
}

// nulls writes a null for every leaf column of n.
func (b *Builder) nulls(n *node, rep, def uint8) {
	for c := n.lo; c < n.hi; c++ {
		b.append(c, parquet.Value{}, rep, def)
	}
}

// Bool writes a BOOLEAN value.
func (b *Builder) Bool(v bool) { b.leaf(parquet.Boolean, parquet.BooleanValue(v)) }

// Int32 writes a TINYINT, SMALLINT, INT or DATE (days since 1970-01-01)
// value, or the unscaled value of a DECIMAL with precision up to 9.
func (b *Builder) Int32(v int32) { b.leaf(parquet.Int32, parquet.Int32Value(v)) }

// Int64 writes a BIGINT, TIMESTAMP or TIMESTAMP_NTZ (microseconds since
// 1970-01-01T00:00:00) value, or the unscaled value of a DECIMAL with
// precision 10 to 18.
func (b *Builder) Int64(v int64) { b.leaf(parquet.Int64, parquet.Int64Value(v)) }

// Float writes a FLOAT value.
func (b *Builder) Float(v float32) { b.leaf(parquet.Float, parquet.FloatValue(v)) }

// Double writes a DOUBLE value.
func (b *Builder) Double(v float64) { b.leaf(parquet.Double, parquet.DoubleValue(v)) }

// Bytes writes a STRING (UTF-8) or BINARY value, or the unscaled value of a
// DECIMAL with precision above 18 as a big-endian two's-complement integer
// of exactly [DecimalBytes](precision) bytes. v is not copied.
func (b *Builder) Bytes(v []byte) {
	n, rep, _, ok := b.next()
	if !ok {
		return
	}
	switch {
	case n.children == nil && n.phys == parquet.ByteArray:
		b.put(n, rep, parquet.ByteArrayValue(v))
	case n.children == nil && n.phys == parquet.FixedLenByteArray && len(v) == n.size:
		b.put(n, rep, parquet.FixedLenByteArrayValue(v))
	default:
		b.mismatch(n, fmt.Sprintf("%d bytes", len(v)))
	}
}

// Variant writes a VARIANT value: its encoded metadata and value, as the
// Parquet variant encoding defines them. Neither slice is copied nor
// checked. A null VARIANT is written with [Builder.Null].
func (b *Builder) Variant(metadata, value []byte) {
	n, rep, _, ok := b.next()
	if !ok {
		return
	}
	if n.typ.Kind != schema.Variant {
		b.mismatch(n, "VARIANT")
		return
	}
	b.append(n.lo, parquet.ByteArrayValue(metadata), rep, n.def)
	b.append(n.lo+1, parquet.ByteArrayValue(value), rep, n.def)
}

// leaf writes a value of physical kind k at the current position.
func (b *Builder) leaf(k parquet.Kind, v parquet.Value) {
	n, rep, _, ok := b.next()
	if !ok {
		return
	}
	if n.children != nil || n.phys != k {
		b.mismatch(n, k.String())
		return
	}
	b.put(n, rep, v)
}

// put appends the present leaf value v of n.
func (b *Builder) put(n *node, rep uint8, v parquet.Value) {
	b.append(n.lo, v, rep, n.def)
}

// append appends v to column c at the given levels. The levels are set on
// the appended copy, in place: setting them on v first and then copying it
// costs a store-forwarding stall per value, a third of the decoding time.
func (b *Builder) append(c int, v parquet.Value, rep, def uint8) {
	col := append(b.cols[c], v)
	p := &col[len(col)-1]
	p.SetRepetitionLevel(int(rep))
	p.SetDefinitionLevel(int(def))
	p.SetColumnIndex(c)
	b.cols[c] = col
}

// mismatch records a write of the wrong kind of value to n.
func (b *Builder) mismatch(n *node, got string) {
	b.fail(fmt.Errorf("%s of type %s cannot hold a %s value", n.name, kindName(n.typ.Kind), got))
}

// BeginStruct opens a STRUCT value at the current position; select its
// fields with [Builder.Field] and close it with [Builder.EndStruct].
func (b *Builder) BeginStruct() {
	n, rep, _, ok := b.container(schema.Struct)
	if !ok {
		return
	}
	f := frame{n: n, kind: schema.Struct, rep: rep, def: n.def, field: -1, marks: len(b.marks), set: len(b.set)}
	for c := n.lo; c < n.hi; c++ {
		b.marks = append(b.marks, len(b.cols[c]))
	}
	b.push(f)
}

// pushRoot opens the row's root struct.
func (b *Builder) pushRoot() {
	for _, c := range b.cols {
		b.marks = append(b.marks, len(c))
	}
	b.push(frame{n: b.plan.root, kind: schema.Struct, field: -1, set: len(b.set)})
}

// push opens struct frame f, with no field written yet.
func (b *Builder) push(f frame) {
	for range words(len(f.n.children)) {
		b.set = append(b.set, 0)
	}
	b.stack = append(b.stack, f)
}

// words returns how many uint64 hold n bits.
func words(n int) int { return (n + 63) / 64 }

// EndStruct closes the open STRUCT; its fields that were not written are
// null.
func (b *Builder) EndStruct() {
	if b.err == nil && b.open && len(b.stack) == 1 {
		b.fail(errors.New("EndStruct would close the row itself; call EndRow"))
		return
	}
	b.endStruct()
}

// endStruct closes the open struct, the row's root included.
func (b *Builder) endStruct() {
	f, ok := b.pop(schema.Struct)
	if !ok {
		return
	}
	for i, c := range f.n.children {
		if b.set[f.set+i/64]&(1<<(i%64)) != 0 {
			continue
		}
		if !c.optional {
			b.fail(fmt.Errorf("%s is NOT NULL but was not written", c.name))
			return
		}
		b.nulls(c, f.rep, f.def)
	}
	b.marks = b.marks[:f.marks]
	b.set = b.set[:f.set]
}

// BeginList opens an ARRAY value at the current position; every write until
// [Builder.EndList] is the next element.
func (b *Builder) BeginList() {
	n, rep, _, ok := b.container(schema.Array)
	if ok {
		b.stack = append(b.stack, frame{n: n, kind: schema.Array, rep: rep, def: n.def, field: -1})
	}
}

// EndList closes the open ARRAY.
func (b *Builder) EndList() {
	if f, ok := b.pop(schema.Array); ok && f.count == 0 {
		b.nulls(f.n, f.rep, f.def) // an empty list: one value per column at the list's level
	}
}

// BeginMap opens a MAP value at the current position; writes until
// [Builder.EndMap] alternate between a key (never null) and its value.
func (b *Builder) BeginMap() {
	n, rep, _, ok := b.container(schema.Map)
	if ok {
		b.stack = append(b.stack, frame{n: n, kind: schema.Map, rep: rep, def: n.def, field: -1})
	}
}

// EndMap closes the open MAP.
func (b *Builder) EndMap() {
	f, ok := b.pop(schema.Map)
	switch {
	case !ok:
	case f.count%2 != 0:
		b.fail(fmt.Errorf("%s closed after a key without its value", f.n.name))
	case f.count == 0:
		b.nulls(f.n, f.rep, f.def)
	}
}

// container claims the current position for a container of kind k.
func (b *Builder) container(k schema.Kind) (*node, uint8, uint8, bool) {
	n, rep, def, ok := b.next()
	if ok && n.typ.Kind != k {
		b.mismatch(n, kindName(k))
		return nil, 0, 0, false
	}
	return n, rep, def, ok
}

// pop closes the innermost container, which must be of kind k, and returns
// its frame; ok is false after an error.
func (b *Builder) pop(k schema.Kind) (f frame, ok bool) {
	if b.err != nil {
		return f, false
	}
	top := b.top()
	if top == nil || top.kind != k {
		b.fail(fmt.Errorf("End of a %s without a matching Begin", kindName(k))) //nolint:staticcheck // End and Begin name the Builder's methods
		return f, false
	}
	f = *top
	b.stack = b.stack[:len(b.stack)-1]
	return f, true
}

// next claims the current position: the node written there, the repetition
// level of its first value per column, and the definition level of its
// parent. It consumes the position; ok is false after an error.
func (b *Builder) next() (n *node, rep, def uint8, ok bool) {
	if b.err != nil {
		return nil, 0, 0, false
	}
	f := b.top()
	if f == nil {
		b.fail(errors.New("value written outside a row"))
		return nil, 0, 0, false
	}
	switch f.kind {
	case schema.Struct:
		i := f.field
		if i < 0 {
			b.fail(fmt.Errorf("value written in %s without selecting a field", f.n.name))
			return nil, 0, 0, false
		}
		f.field = -1
		n = f.n.children[i]
		if w := &b.set[f.set+i/64]; *w&(1<<(i%64)) != 0 {
			// Written before: the last value wins.
			for c := n.lo; c < n.hi; c++ {
				b.cols[c] = b.cols[c][:b.marks[f.marks+c-f.n.lo]]
			}
		} else {
			*w |= 1 << (i % 64)
		}
		return n, f.rep, f.def, true
	case schema.Array:
		rep = f.rep
		if f.count > 0 {
			rep = f.n.rep
		}
		f.count++
		return f.n.children[0], rep, f.def + 1, true
	default: // schema.Map
		rep = f.rep
		if f.count > 1 {
			rep = f.n.rep
		}
		n = f.n.children[f.count%2]
		f.count++
		return n, rep, f.def + 1, true
	}
}

// top returns the innermost open frame, nil when no row is open.
func (b *Builder) top() *frame {
	if len(b.stack) == 0 {
		return nil
	}
	return &b.stack[len(b.stack)-1]
}

// fail records the row's first error.
func (b *Builder) fail(err error) {
	if b.err == nil {
		b.err = fmt.Errorf("building row: %w", err)
	}
}

// kindName names a type kind for error messages.
func kindName(k schema.Kind) string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind %d", k)
}

var kindNames = [...]string{
	schema.Boolean: "BOOLEAN", schema.Byte: "TINYINT", schema.Short: "SMALLINT",
	schema.Int: "INT", schema.Long: "BIGINT", schema.Float: "FLOAT", schema.Double: "DOUBLE",
	schema.Decimal: "DECIMAL", schema.String: "STRING", schema.Binary: "BINARY",
	schema.Date: "DATE", schema.Timestamp: "TIMESTAMP", schema.TimestampNTZ: "TIMESTAMP_NTZ",
	schema.Array: "ARRAY", schema.Map: "MAP", schema.Struct: "STRUCT", schema.Variant: "VARIANT",
}
