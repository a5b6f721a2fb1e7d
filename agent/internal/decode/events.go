package decode

import (
	"context"
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// A changelog value (DEBEZIUM_JSON, CANAL_JSON) is a change event whose row
// images are JSON objects: package changelog reads the envelope, and the
// images are decoded here, by the JSON decoder of the value's columns
// (declared or inferred). This file is the seam between the two: a
// [Decoder] built with [NewChangelog] hands each value to the
// [ChangeEvents] that package changelog made from the [Image], and writes
// the rows it gives. Package changelog imports this one, never the
// reverse.

// ErrBadEvent marks a value that is not a change event of its format: a
// malformed event stops the table unless kafka_options.ignore_errors leaves
// it out (see [RecordError]). The error of [ChangeEvents.Scan] wraps it.
var ErrBadEvent = fmt.Errorf("%w: not a change event", errBadInput)

// Operations of changelog rows, the values of _op.
const (
	OpInsert = 'c'
	OpUpdate = 'u'
	OpDelete = 'd'
	OpRead   = 'r'
)

// opText holds the _op value of each operation byte.
var opText = [256][]byte{OpInsert: []byte("c"), OpUpdate: []byte("u"), OpDelete: []byte("d"), OpRead: []byte("r")}

// OpText returns the _op value of operation op (OpInsert...), nil for a
// byte that is none.
func OpText(op byte) []byte { return opText[op] }

// ChangeEvents reads the change events of a changelog value into rows. A
// Decoder calls Scan once per record, then Row for each row it gives.
type ChangeEvents interface {
	// Scan reads the change event value (nil for a tombstone) and returns
	// how many rows it gives, zero or more; an error wrapping
	// [ErrBadEvent] when it is not an event of its format.
	Scan(value []byte) (int, error)
	// Row writes row j of the last Scan to the open row: its image, with
	// [Image.Decode], and _op and _source (those the table has). The
	// error is Image.Decode's.
	Row(ctx context.Context, j int) error
}

// Events is what package changelog plugs into the Decoder of a changelog
// layout (see [NewChangelog]).
type Events struct {
	// Key, when set, returns the decoder of the key given the one the
	// key's format has (package changelog unwraps Connect's
	// {"schema", "payload"} keys).
	Key func(key Part) Part
	// Value returns the reader of the value's change events, which writes
	// its rows with img.
	Value func(img *Image) (ChangeEvents, error)
}

// NewChangelog returns a Decoder for the columns of layout, whose value is
// a changelog format, as [New] does for other layouts: ev reads the change
// events, each of which gives zero or more rows.
func NewChangelog(layout *spec.Layout, sources *Sources, ev Events) (*Decoder, error) {
	return newDecoder(layout, sources, ev)
}

// Image writes the rows of the change events of a changelog value: the
// decoder of their row images into the value's columns, and the fields of
// _op and _source.
type Image struct {
	// B is the Builder of the Decoder's rows.
	B *rows.Builder
	// Value is the layout's value part, of a changelog format.
	Value *spec.Part
	// Op and Source are the top-level fields of _op and _source, -1 when
	// the table has none.
	Op, Source int
	// img decodes a row image into the value's columns.
	img Part
}

// Decode writes the columns of row image data, a JSON object (nil: every
// column null), as the value's columns take it. The error wraps
// errBadInput when the image does not fit them.
func (m *Image) Decode(ctx context.Context, data []byte) error { return m.img.Decode(ctx, data) }

// json returns the JSON decoder of the images and its compiled type, nil
// when the images are not decoded into columns.
func (m *Image) json() (*jsonDecoder, *jtype) {
	switch p := m.img.(type) {
	case *jsonPart:
		return &p.d, p.t
	case *inferredPart:
		return &p.d, p.t
	}
	return nil, nil
}

// ReadStringsLeniently makes the images' JSON strings fit columns of any
// type, as Canal writes every value as a string ("101", "1", "2024-01-02
// 03:04:05"): see [jsonDecoder.lenientString].
func (m *Image) ReadStringsLeniently() {
	if d, _ := m.json(); d != nil {
		d.lenient = true
	}
}

// Convert sets how the values of the images' top-level fields convert
// where their columns' types alone do not tell, by field name: a number of
// days, milli-, micro- or nanoseconds, or base64 decimal bytes, as a
// Debezium event's Connect schema says. Fields convs does not name convert
// as their types say.
func (m *Image) Convert(convs map[string]Conversion) {
	if _, t := m.json(); t != nil {
		for i, name := range t.names {
			t.fields[i].conv = convs[name]
		}
	}
}

// AddsColumns reports whether the value's columns are inferred and new
// fields become columns (schema_evolution_mode ADD_NEW_COLUMNS and its
// variants).
func (m *Image) AddsColumns() bool {
	p, ok := m.img.(*inferredPart)
	return ok && p.ev.addsColumns()
}

// TypeNewFields makes typeOf give the type of a new top-level field of the
// image being decoded, nil when the event says nothing of it and the
// field's values are inferred; only inferred columns have new fields.
func (m *Image) TypeNewFields(typeOf func(name string) *schema.Type) {
	if p, ok := m.img.(*inferredPart); ok {
		p.ev.typeOf = typeOf
	}
}

// AddColumn asks, when [Image.AddsColumns], for top-level column name of
// type typ, which the event declares (a DDL statement), unless the value
// has a column of that name ignoring case or the table another column
// named so: the chunk then ends with a [*NewColumnsError], as for a new
// field of a record.
func (m *Image) AddColumn(name string, typ *schema.Type) {
	p, ok := m.img.(*inferredPart)
	if !ok || !p.ev.addsColumns() || hasFold(p.t.names, name) || hasFold(p.ev.taken, name) {
		return
	}
	p.ev.ask(change{path: []step{{name: name}}, typ: typ, add: true, typed: true})
}

// imagePart returns the part that decodes the row images of changelog
// part sp: JSON into sp's columns, with the options
// [spec.Transformer.RowOptions] gives (inferred in ADD_NEW_COLUMNS unless
// json_options declares a schema).
func imagePart(sp *spec.Part) *spec.Part {
	p, tr := *sp, *sp.Transformer
	tr.JSONOptions = tr.RowOptions()
	p.Format, p.Transformer = spec.FormatJSON, &tr
	return &p
}
