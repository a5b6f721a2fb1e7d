// Package decode turns Kafka records into the Parquet rows of a destination
// table. The key and the value each become a BINARY column, a STRING column,
// a VARIANT column of JSON parsed as Spark's parse_json does, or the fields
// of a schema: JSON parsed as Spark's from_json does in
// PERMISSIVE mode, plain Avro or Protobuf of an inline or file schema, or
// Avro or Protobuf in Confluent's wire format whose writer schemas come from
// a schema registry (see [Resolve]). A value may also be a change event
// (Debezium or Canal JSON), which gives zero or more rows with _op and
// _source: package changelog reads those envelopes and builds the decoders
// of such tables (see [NewChangelog]). An optional struct column carries the record's metadata,
// optional top-level columns chosen pieces of it (metacols.go), and
// `_corrupt_record` the raw bytes of a key or value
// that did not decode. Each format has its own part decoder (part.go), and
// the Avro and Protobuf wire formats their own packages.
package decode

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Stats counts what one Decode call saw.
type Stats struct {
	// Corrupt is the number of records whose key or value did not decode
	// (their _corrupt_record is set): JSON that is malformed, is not an
	// object or holds a value that does not fit its field; Avro or
	// Protobuf that is not a datum or message of its schema, or, from a
	// registry, lacks the framing or names an unknown schema.
	Corrupt int
	// Filtered is the number of records that gave no row because they
	// carry none: change events of tables canal_options leaves out,
	// Debezium truncate, message and heartbeat events, and tombstones of
	// changelog formats without json_options.empty_value_as_delete.
	Filtered int
}

// Options configures a Decoder beyond its table layout.
type Options struct {
	// SkipBad is kafka_options.ignore_errors: a record whose key or value
	// does not decode gets no row and is listed in [Batch.Bad], instead of
	// keeping its row with its bytes in _corrupt_record or, in FAILFAST
	// mode or for a malformed change event, stopping the batch.
	SkipBad bool
	// WholeChunk makes a chunk whose records ask for new columns go
	// through every record and return one [*NewColumnsError] that asks
	// for all of them, with no rows, instead of stopping at the first
	// record that asks: for sampling, whose columns take the types of
	// every sampled record together (see [schema.Unify]).
	WholeChunk bool
}

// BadRecord is a record that gave no row because its key or value does
// not decode ([Options.SkipBad]).
type BadRecord struct {
	// Record is the record's index in the records Decode got.
	Record int
	// Err says which side failed and why.
	Err error
}

// Batch is what one Decode call built, column by column: usually a row per
// record, but a change event gives zero or more rows, and a record listed
// in Bad none.
type Batch struct {
	// Columns holds, per leaf column of [Decoder.Schema] in column index
	// order, the values of every row, as [rows.Builder.Columns] returns
	// them: what a Parquet column writer takes.
	Columns [][]parquet.Value
	// Rows is the number of rows.
	Rows int
	// RowRecord holds, per row, the index of its record in the records
	// Decode got, in increasing order; nil when the rows are the records
	// one to one (Rows is their number).
	RowRecord []int32
	// Bad lists the records left out because they do not decode, in
	// order ([Options.SkipBad]).
	Bad []BadRecord
	Stats
}

// Decoder decodes records into rows of one table layout. It reuses its
// buffers from one Decode call to the next and is not safe for concurrent
// use; use one per goroutine.
type Decoder struct {
	b *rows.Builder
	// key and value decode the two sides of a record.
	key, value Part
	// keyFailFast and valueFailFast say that a record whose side fails to
	// decode stops the batch with a [*RecordError] instead of going to
	// _corrupt_record.
	keyFailFast, valueFailFast bool
	// meta, op and corrupt are the field indexes of the metadata, _op and
	// _corrupt_record columns, -1 when absent.
	meta, op, corrupt int
	// change reads the change events of a changelog value (DEBEZIUM_JSON,
	// CANAL_JSON), each into zero or more rows; nil for other values.
	change ChangeEvents
	// mark is where the rows of a record that gives several begin.
	mark rows.Mark
	// inferred holds the key's and the value's part when its columns are
	// inferred, nil otherwise; adds says one of them adds columns as
	// records ask (not FAIL_ON_NEW_COLUMNS), and stops that a chunk then
	// stops at the first record that asks (see [Decoder.Decode]): unless
	// the options ask for the whole chunk.
	inferred [2]*inferredPart
	adds     bool
	stops    bool
	opts     Options
	// rowRecord and bad back the Batch's RowRecord and Bad; spread says
	// a record of the batch gave other than one row.
	rowRecord []int32
	bad       []BadRecord
	spread    bool
	// metaCols writes the metadata columns.
	metaCols metaColumns
	// decoded counts the records Decode calls went through, the record a
	// chunk stopped at included: what tests read to see that no record is
	// decoded twice.
	decoded int
	// parsed holds, during DecodeParsed, each record's value encoded as a
	// VARIANT already, and current the one of the record being decoded.
	parsed  []variant.Encoded
	current variant.Encoded
}

// New returns a Decoder for the columns of layout, in layout.Columns()
// order. Columns parsed from JSON are nullable there whatever their declared
// nullability (Spark's from_json makes them nullable too); a NOT NULL field
// that ends up null makes the record corrupt instead. A part whose schema
// comes from a schema registry needs its [Source] in sources, as [Resolve]
// returns them; sources is nil when no part does. New reports the formats it
// cannot decode, schemas Parquet cannot represent and schemas that do not
// parse. A layout whose value is a changelog format needs the change-event
// reader that package changelog plugs in with [NewChangelog]: New refuses
// it.
func New(layout *spec.Layout, sources *Sources) (*Decoder, error) {
	if tr := layout.Value.Transformer; tr.Changelog() {
		return nil, fmt.Errorf("value: format %s is a changelog format, whose decoder package changelog builds", tr.Format)
	}
	return newDecoder(layout, sources, Events{})
}

// newDecoder is [New] with the change-event reader ev of a changelog
// layout.
func newDecoder(layout *spec.Layout, sources *Sources, ev Events) (*Decoder, error) {
	cols := layout.Columns()
	b, err := rows.NewBuilder(cols)
	if err != nil {
		return nil, fmt.Errorf("building the table schema: %w", err)
	}
	d := &Decoder{b: b, meta: -1, op: -1, corrupt: -1}
	next := 0
	value := &layout.Value
	if value.Transformer.Changelog() {
		value = imagePart(value)
	}
	// The rescue columns of inferred parts and _corrupt_record end the
	// row, right after the metadata columns, followed only by the derived
	// partition columns, which the table writer fills.
	tail := layout.Derived()
	for _, p := range []*spec.Part{&layout.Key, value} {
		if p.Rescue != "" {
			tail++
		}
	}
	if layout.CorruptRecord {
		tail++
	}
	rescue := len(cols) - tail
	d.metaCols = newMetaColumns(rescue, layout.Meta)
	for i, side := range []struct {
		p        *Part
		failFast *bool
		spec     *spec.Part
		name     string
	}{{&d.key, &d.keyFailFast, &layout.Key, "key"}, {&d.value, &d.valueFailFast, value, "value"}} {
		if side.spec.Inferred() {
			r := -1
			if side.spec.Rescue != "" {
				r, rescue = rescue, rescue+1
			}
			var taken []string
			for j, c := range cols {
				if j < next || j >= next+side.spec.Width() {
					taken = append(taken, c.Name)
				}
			}
			ip, err := newInferredPart(b, next, r, side.spec, taken)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", side.name, err)
			}
			d.inferred[i], *side.p = ip, ip
			d.adds = d.adds || ip.ev.addsColumns() && ip.ev.mode != spec.SchemaEvolutionFailOnNewColumns
			d.stops = d.adds
			next += side.spec.Width()
			continue
		}
		p, err := newPart(b, next, side.spec, sources.of(side.name), droppedFields(layout, i == 0))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", side.name, err)
		}
		*side.p = p
		next += side.spec.Width()
		*side.failFast = side.spec.Transformer.Mode() == spec.ParseModeFailFast
	}
	if ev.Key != nil {
		d.key = ev.Key(d.key)
	}
	source := -1
	if layout.Op {
		d.op, next = next, next+1
	}
	if layout.Source {
		source, next = next, next+1
	}
	if layout.Value.Transformer.Changelog() {
		if ev.Value == nil {
			return nil, fmt.Errorf("value: format %s is a changelog format, and no change-event reader was given", layout.Value.Transformer.Format)
		}
		img := &Image{B: b, Value: &layout.Value, Op: d.op, Source: source, img: d.value}
		if d.change, err = ev.Value(img); err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
	}
	if layout.MetadataColumn != "" {
		d.meta = next
	}
	if layout.CorruptRecord {
		d.corrupt = rescue
	}
	return d, nil
}

// SetOptions sets the options of the Decode calls that follow.
func (d *Decoder) SetOptions(o Options) { d.opts, d.stops = o, d.adds && !o.WholeChunk }

// Retained estimates the bytes the Decoder keeps from one Decode to the
// next: the column buffers of the rows it decodes, which grow to the
// largest chunk. Its scratch is not counted: single values (a string being
// unescaped), and a VARIANT encoder's recent dictionaries, at most 256 KiB
// and mostly far less.
func (d *Decoder) Retained() int64 {
	return d.b.Retained() + int64(cap(d.rowRecord))*int64(unsafe.Sizeof(int32(0)))
}

// Schema returns the Parquet schema of the rows Decode produces.
func (d *Decoder) Schema() *parquet.Schema { return d.b.Schema() }

// Decode decodes recs into a batch of one row per record, except that a
// change event gives zero or more rows, with the same key columns, and a
// null value of a table with json_options.empty_value_as_delete a row with
// _op "d" (other rows of a JSON value have _op "c"); [Batch.RowRecord]
// then maps rows to records. In PERMISSIVE
// mode a record never fails to decode: bytes that do not decode go to
// _corrupt_record (when both key and value are corrupt, the value's bytes),
// with the affected fields null. A side in FAILFAST mode stops the batch at
// the first record it cannot decode with a [*RecordError], as does a value
// that is not a change event of its changelog format. With
// [Options.SkipBad], such a record gets no row (none of a change event's)
// in either mode and is listed in [Batch.Bad] instead.
//
// The batch aliases the decoder's buffers and the records' Key, Value and
// header bytes: it is valid until the next Decode call, and only while the
// records' bytes are unchanged. Write it (or copy it) before then.
//
// Other errors stop the batch too: a [*SchemaChangedError] when a record
// was written with a newer version of a registry subject, whose columns the
// table does not have yet; an error of the registry itself (unreachable,
// refusing the credentials), which says nothing about the record; a
// [*NewColumnsError] when a record of an inferred side needs columns the
// table lacks; or, a bug, a row that does not match the schema. ctx bounds
// registry look-ups.
//
// A [*NewColumnsError] comes with the batch of the records before the one
// that asked ([NewColumnsError.Record]), whose rows are valid in the
// current columns: the caller writes them, adds the columns, and decodes
// the records from that one on with a decoder of the new columns, so that
// each record is decoded once (the one that asked twice, as its first
// decoding stopped part way). In FAIL_ON_NEW_COLUMNS the decoder goes
// through the whole chunk instead, for the error to name every new column
// of it, and the batch has no rows.
func (d *Decoder) Decode(ctx context.Context, recs []record.Record) (Batch, error) {
	d.parsed = nil
	return d.decode(ctx, recs)
}

// DecodeParsed is Decode for records whose values a caller parsed
// already, as VARIANT values, to read something of them first (a fanout
// its route): values[i] holds the value of recs[i] encoded, or nothing
// (nil Metadata) when it was not. The Decoder writes an encoded value as
// it is, rather than parsing the text again, when its value is a VARIANT
// column; otherwise it decodes as Decode does. The values' bytes, as the
// records', must stay unchanged until the batch is written.
func (d *Decoder) DecodeParsed(ctx context.Context, recs []record.Record, values []variant.Encoded) (Batch, error) {
	if len(values) != len(recs) {
		return Batch{}, fmt.Errorf("decoding %d records with %d values parsed", len(recs), len(values))
	}
	d.parsed = nil
	if _, ok := d.value.(*variantPart); ok {
		d.parsed = values
	}
	defer func() { d.parsed, d.current = nil, variant.Encoded{} }()
	return d.decode(ctx, recs)
}

// decode decodes recs, as Decode says.
func (d *Decoder) decode(ctx context.Context, recs []record.Record) (Batch, error) {
	var st Stats
	d.b.Reset()
	d.rowRecord, d.bad, d.spread = d.rowRecord[:0], d.bad[:0], false
	for _, p := range d.inferred {
		if p != nil {
			p.begin()
		}
	}
	for i := range recs {
		stop, err := d.record(ctx, recs, i, &st)
		if err != nil {
			d.decoded += i + 1
			return Batch{}, err
		}
		if stop {
			d.decoded += i + 1
			return d.batch(st), d.newColumns(recs)
		}
	}
	d.decoded += len(recs)
	if nc := d.newColumns(recs); nc != nil {
		return Batch{}, nc
	}
	return d.batch(st), nil
}

// batch returns the rows built since Decode began, with their stats.
func (d *Decoder) batch(st Stats) Batch {
	batch := Batch{Columns: d.b.Columns(), Rows: d.b.Rows(), Stats: st}
	if len(d.bad) > 0 {
		batch.Bad = d.bad
	}
	if d.spread {
		batch.RowRecord = d.rowRecord
	}
	return batch
}

// newColumns returns the [*NewColumnsError] of the columns the records of
// recs asked for, the key's when both sides asked; nil when none did. It
// readies the inferred parts for the next chunk.
func (d *Decoder) newColumns(recs []record.Record) error {
	var nc *NewColumnsError
	for i, p := range d.inferred {
		if p == nil {
			continue
		}
		if e := p.end(recs, [2]string{"key", "value"}[i]); e != nil && nc == nil {
			nc = e
		}
	}
	if nc == nil {
		return nil
	}
	return nc
}

// asked reports whether an inferred part that adds columns as records ask
// was asked for one in this chunk: since Decode stops at the first record
// that asks, the record being decoded did.
func (d *Decoder) asked() bool {
	if !d.stops {
		return false
	}
	for _, p := range d.inferred {
		if p != nil && len(p.ev.changes) > 0 {
			return true
		}
	}
	return false
}

// record decodes recs[i] into its rows: one, or for a change event zero
// or more; with [Options.SkipBad] and a side that does not decode, none.
// stop says the record asked for new columns (see [Decoder.Decode]): it
// then has no rows and no stats.
func (d *Decoder) record(ctx context.Context, recs []record.Record, i int, st *Stats) (stop bool, err error) {
	r := &recs[i]
	if d.parsed != nil {
		d.current = d.parsed[i]
	}
	var marks [2]int
	for j, p := range d.inferred {
		if p != nil {
			marks[j] = p.at(i)
		}
	}
	n := 1
	if d.change != nil {
		if n, err = d.change.Scan(r.Value); err != nil {
			if err := d.fail(r, "value", err, true); err != nil {
				return false, err
			}
			d.leaveOut(i, marks, fmt.Errorf("the value does not decode: %w", err))
			return false, nil
		}
		if n == 0 {
			if d.asked() {
				return true, nil
			}
			st.Filtered++
			d.spread = true
			return false, nil
		}
		d.spread = d.spread || n > 1
	}
	first := len(d.rowRecord)
	if n > 1 && (d.opts.SkipBad || d.stops) {
		d.b.Mark(&d.mark)
	}
	corrupt := false
	for j := range n {
		bad, err := d.row(ctx, r, j, j == n-1)
		switch {
		case errors.Is(err, errStop):
			if j > 0 {
				d.b.Rewind(&d.mark)
				d.rowRecord = d.rowRecord[:first]
			}
			return true, nil
		case err != nil:
			return false, err
		}
		if bad != nil && d.opts.SkipBad {
			if j > 0 {
				d.b.Rewind(&d.mark)
				d.rowRecord = d.rowRecord[:first]
			} else {
				d.b.DiscardRow()
			}
			d.leaveOut(i, marks, bad)
			return false, nil
		}
		corrupt = corrupt || bad != nil
		d.rowRecord = append(d.rowRecord, int32(i))
	}
	if corrupt {
		st.Corrupt++
	}
	return false, nil
}

// errStop is what row returns when the record asked for new columns: its
// rows are dropped, and the chunk stops before it.
var errStop = errors.New("the record asks for new columns")

// row writes row j of record r: its key, row j of its value (the value
// itself when it is not a change event), and the columns after them. It
// returns the error of a side that does not decode, nil when both did;
// with [Options.SkipBad] the row is then left open for the caller to drop.
// err stops the batch; on the record's last row, errStop when the record
// asked for new columns, its row dropped.
func (d *Decoder) row(ctx context.Context, r *record.Record, j int, last bool) (bad, err error) {
	d.b.BeginRow()
	var raw []byte
	if e := d.key.Decode(ctx, r.Key); e != nil {
		if err := d.fail(r, "key", e, d.keyFailFast); err != nil {
			return nil, err
		}
		raw, bad = r.Key, fmt.Errorf("the key does not decode: %w", e)
	}
	var e error
	if d.change != nil {
		e = d.change.Row(ctx, j)
	} else {
		if d.current.Metadata != nil {
			d.value.(*variantPart).write(d.current)
		} else {
			e = d.value.Decode(ctx, r.Value)
		}
		if d.op >= 0 {
			// json_options.empty_value_as_delete on a JSON value.
			d.b.Field(d.op)
			if r.Value == nil {
				d.b.Bytes(OpText(OpDelete))
			} else {
				d.b.Bytes(OpText(OpInsert))
			}
		}
	}
	if e != nil {
		if err := d.fail(r, "value", e, d.valueFailFast); err != nil {
			return nil, err
		}
		raw, bad = r.Value, fmt.Errorf("the value does not decode: %w", e)
	}
	if bad != nil && d.opts.SkipBad {
		return bad, nil
	}
	if last && d.asked() {
		d.b.DiscardRow()
		return nil, errStop
	}
	if d.meta >= 0 {
		d.metadata(r)
	}
	d.metaCols.write(d.b, r)
	if d.corrupt >= 0 {
		d.b.Field(d.corrupt)
		if bad != nil {
			d.b.Bytes(raw)
		} else {
			d.b.Null()
		}
	}
	if err := d.b.EndRow(); err != nil {
		return nil, fmt.Errorf("decoding %s[%d]@%d: %w", r.Topic, r.Partition, r.Offset, err)
	}
	return bad, nil
}

// leaveOut lists record i, which gets no row, in the batch's Bad, and
// forgets the columns its inferred sides asked for since marks.
func (d *Decoder) leaveOut(i int, marks [2]int, err error) {
	for j, p := range d.inferred {
		if p != nil {
			p.drop(marks[j])
		}
	}
	d.bad = append(d.bad, BadRecord{Record: i, Err: err})
	d.spread = true
}

// fail handles the error of one side of record r: nil when the record
// stays, with its bytes in _corrupt_record, or goes, with
// [Options.SkipBad]; else the error that stops the batch.
func (d *Decoder) fail(r *record.Record, side string, err error, failFast bool) error {
	switch {
	case !errors.Is(err, errBadInput):
		return fmt.Errorf("decoding the %s of %s[%d]@%d: %w", side, r.Topic, r.Partition, r.Offset, err)
	case failFast && !d.opts.SkipBad:
		return &RecordError{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Side: side, Err: err}
	}
	return nil
}

// validUTF8 returns s, or a copy with each run of bytes that is not valid
// UTF-8 replaced by U+FFFD, as Java's decoder does when Spark turns the
// bytes into a String (see [jsontext.InvalidLen]).
func validUTF8(b *rows.Builder, s []byte) []byte {
	if utf8.Valid(s) {
		return s
	}
	return jsontext.AppendValidUTF8(b.Alloc(3 * len(s))[:0], s)
}

// metadata writes the source metadata struct of r.
func (d *Decoder) metadata(r *record.Record) {
	b := d.b
	b.Field(d.meta)
	b.BeginStruct()
	WriteMetadata(b, 0, r)
	b.EndStruct()
}

// WriteMetadata writes r's source metadata, the fields of
// [spec.MetadataType] in their order (topic, partition, offset, timestamp,
// timestampType, headers), to the fields first to first+5 of b's current
// row or struct, as the metadata column holds them. The values alias r's
// strings and header values.
func WriteMetadata(b *rows.Builder, first int, r *record.Record) {
	b.Field(first)
	b.Bytes(bytesOf(r.Topic))
	b.Field(first + 1)
	b.Int32(r.Partition)
	b.Field(first + 2)
	b.Int64(r.Offset)
	b.Field(first + 3)
	writeTimestamp(b, r)
	b.Field(first + 4)
	b.Int32(int32(r.TimestampType))
	b.Field(first + 5)
	writeHeaders(b, r.Headers)
}

// bytesOf views s as bytes without copying; the Builder never writes to
// them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
