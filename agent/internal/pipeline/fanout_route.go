package pipeline

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/expr"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// routeFunc evaluates a fanout_by expression on a raw record: its STRING
// result, or null for NULL, or a runtime error of the expression.
type routeFunc func(*expr.Record) (name string, null bool, err error)

// router names the table of each record: one per fanout runner, used by its
// goroutine only. It converts records into the expression's reused record.
type router struct {
	route routeFunc
	rec   expr.Record
}

// table returns the lower-case name of r's table, or a [*routeError].
func (rt *router) table(r *decode.Record) (string, error) {
	e := &rt.rec
	e.Topic, e.Partition, e.Offset = r.Topic, r.Partition, r.Offset
	e.Timestamp, e.TimestampType, e.Key, e.Value = r.Timestamp, r.TimestampType, r.Key, r.Value
	e.Headers = e.Headers[:0]
	for _, h := range r.Headers {
		e.Headers = append(e.Headers, expr.Header{Key: h.Key, Value: h.Value})
	}
	if r.Timestamp.UnixMilli() < 0 {
		e.Timestamp = time.Time{} // Kafka's -1: no timestamp, NULL
	}
	name, null, err := rt.route(e)
	e.Key, e.Value = nil, nil // do not keep the batch's memory
	switch {
	case err != nil:
		return "", newRouteError(r, fmt.Errorf("fanout_by failed: %w", err))
	case null:
		return "", newRouteError(r, fmt.Errorf("fanout_by returned NULL"))
	}
	if err := spec.CheckRoutedName(name); err != nil {
		return "", newRouteError(r, err)
	}
	return strings.ToLower(name), nil
}

// routeError is a record that has no valid table name.
type routeError struct {
	// record names the record: topic[partition]@offset.
	record string
	err    error
}

// newRouteError returns the routeError of r, which it does not keep.
func newRouteError(r *decode.Record, err error) *routeError {
	return &routeError{record: fmt.Sprintf("%s[%d]@%d", r.Topic, r.Partition, r.Offset), err: err}
}

// Error names the record and says why it has no table.
func (e *routeError) Error() string {
	return fmt.Sprintf("record %s cannot be routed: %v", e.record, e.err)
}

// Unwrap returns why.
func (e *routeError) Unwrap() error { return e.err }

// fanoutErrorsColumns are the columns of [spec.FanoutErrorsTable]: the raw
// record (its key, its value and the fields of the source metadata column)
// and why it could not be routed.
var fanoutErrorsColumns = slices.Concat(
	[]schema.Field{
		{Name: "key", Type: &schema.Type{Kind: schema.Binary}, Nullable: true},
		{Name: "value", Type: &schema.Type{Kind: schema.Binary}, Nullable: true},
	},
	spec.MetadataType.Fields, // written by decode.WriteMetadata
	[]schema.Field{{Name: "error", Type: &schema.Type{Kind: schema.String}, Nullable: true}},
)

// deadLetters builds the rows of [spec.FanoutErrorsTable].
type deadLetters struct {
	b *rows.Builder
}

func newDeadLetters() (*deadLetters, error) {
	b, err := rows.NewBuilder(fanoutErrorsColumns)
	if err != nil {
		return nil, fmt.Errorf("the columns of %s: %w", spec.FanoutErrorsTable, err)
	}
	return &deadLetters{b: b}, nil
}

// batch returns a row per record of recs with the error of the same index.
// It aliases the builder's buffers and the records' bytes, as
// [decode.Decoder.Decode]'s batches do.
func (d *deadLetters) batch(recs []decode.Record, errs []string) (decode.Batch, error) {
	b := d.b
	b.Reset()
	for i := range recs {
		r := &recs[i]
		b.BeginRow()
		for f, v := range [][]byte{r.Key, r.Value} {
			b.Field(f)
			if v == nil {
				b.Null()
			} else {
				b.Bytes(v)
			}
		}
		decode.WriteMetadata(b, 2, r)
		b.Field(8)
		b.Bytes([]byte(errs[i]))
		if err := b.EndRow(); err != nil {
			return decode.Batch{}, fmt.Errorf("a row of %s: %w", spec.FanoutErrorsTable, err)
		}
	}
	return decode.Batch{Columns: b.Columns(), Rows: b.Rows()}, nil
}
