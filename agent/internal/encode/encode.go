// Package encode turns the rows a decoder built back into Kafka records,
// for a Kafka sink (spec.KafkaSink): [Rows] assembles a batch's columns
// into [Row]s, [Befores] adds the before images of their updates, an
// [Encoder] writes a row's key and its value as a Debezium
// or Canal change event or as a JSON object, a [Router] picks its topic and
// [Partition] its partition.
package encode

import (
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Row is one decoded row as the sink sees it.
type Row struct {
	// Op is the row's operation: 'c' (insert), 'u' (update), 'd'
	// (delete) or 'r' (snapshot read); 'c' for a table without _op.
	Op byte
	// DB and Table name the row's source table, from _source; "" when
	// the table has none (the sink uses the topic).
	DB, Table string
	// TS is when the change happened, from _source; zero when unknown.
	TS time.Time
	// Fields are the row image's columns: the parsed key and value
	// fields, or the value's single column, without _op, _source, the
	// metadata columns, rescue columns and _corrupt_record.
	Fields []schema.Field
	// Values are the Go values of Fields, one each: nil, bool, int32
	// (also BYTE and SHORT), int64, float32, float64, string, []byte,
	// time.Time (DATE at midnight UTC, TIMESTAMP in UTC, TIMESTAMP_NTZ
	// as UTC wall time), a decimal as its text with the column's scale
	// (a string), []any for an ARRAY, map[string]any for a STRUCT,
	// [][2]any of key and value pairs for a MAP, and json.RawMessage for
	// a VARIANT (the value's VARIANT column is the record's own JSON; a
	// table's row, which has no record, renders it with
	// variant.AppendJSON).
	Values []any
	// Before is the image before an update, in Fields order with the Go
	// types of Values; nil unless known ([Befores] reads it from the
	// update's Debezium or Canal event).
	Before []any
	// Key is the record key to write: the key's parsed fields as a JSON
	// object, or the source record's key when the key was not parsed.
	Key []byte
	// Headers and Topic are the source record's.
	Headers []record.Header
	Topic   string
}

// Encoder writes rows as Kafka records. Encoders are safe for concurrent
// use.
type Encoder interface {
	// Key returns the key of r's record.
	Key(r *Row) []byte
	// Value appends r's record value to dst and returns it; nil (with a
	// nil error) is a tombstone, a record without a value.
	Value(dst []byte, r *Row) ([]byte, error)
}

// New returns the encoder of s's value_format: [spec.SinkFormatDebeziumJSON]
// (also for an empty format), [spec.SinkFormatCanalJSON] or
// [spec.SinkFormatJSON]. s is valid.
func New(s *spec.KafkaSink) Encoder {
	o := options{
		changedOnly: on(s.KeepChangedFieldsOnly, false),
		schema:      on(s.IncludeSchema, false),
		fullTableID: on(s.FullTableID, false),
		now:         time.Now,
	}
	switch s.ValueFormat {
	case spec.SinkFormatCanalJSON:
		return &canal{o}
	case spec.SinkFormatJSON:
		return &plainJSON{o}
	}
	return &debezium{options: o}
}

// options are the sink attributes the encoders follow.
type options struct {
	// changedOnly is keep_changed_fields_only, schema include_schema,
	// fullTableID full_table_id.
	changedOnly, schema, fullTableID bool
	// now is the clock of the events' processing time.
	now func() time.Time
}

// Key returns r.Key: [Rows] made it.
func (options) Key(r *Row) []byte { return r.Key }

// table returns the table name an event of r carries: "<db>.<table>" with
// full_table_id, else the table; the source topic for a row without a
// source table.
func (o *options) table(r *Row) string {
	if o.fullTableID {
		return TableID(r)
	}
	if r.Table == "" {
		return r.Topic
	}
	return r.Table
}

// TableID returns r's full table id, "<db>.<table>" (the table alone when
// it has no database), or the source topic for a row without a source
// table.
func TableID(r *Row) string {
	switch {
	case r.Table == "":
		return r.Topic
	case r.DB == "":
		return r.Table
	}
	return r.DB + "." + r.Table
}

// on returns *b, def when b is nil.
func on(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// changed returns, for an update, the indexes of the fields whose value
// differs between r.Before and r.Values; nil when r has no before image.
func changed(r *Row) []int {
	if r.Before == nil {
		return nil
	}
	var idx []int
	for i := range r.Fields {
		if i >= len(r.Before) || !equalJSON(r.Fields[i].Type, r.Before[i], r.Values[i]) {
			idx = append(idx, i)
		}
	}
	return idx
}

// equalJSON reports whether a and b of type t have the same JSON text.
func equalJSON(t *schema.Type, a, b any) bool {
	x, errA := appendValue(nil, t, a, false)
	y, errB := appendValue(nil, t, b, false)
	return errA == nil && errB == nil && string(x) == string(y)
}
