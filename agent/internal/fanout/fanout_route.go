package fanout

import (
	"fmt"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// RouteFunc evaluates a fanout_by expression on a raw record: its STRING
// result, or null for NULL, or a runtime error of the expression.
type RouteFunc func(*record.Record) (name string, null bool, err error)

// NewRoute makes a RouteFunc of a fanout schema's fanout_by expression. A
// RouteFunc is used by one goroutine at a time, as a compiled expression
// is, so a run makes one for each partition it routes.
type NewRoute func() (RouteFunc, error)

// router names the table of each record of one partition: one per
// partition a run reads, used by the goroutine that relays the
// partition's batches to the run.
type router struct {
	route RouteFunc
	// skipTombstones says a record without a value has no table and is
	// skipped: the tombstone that follows a delete in a changelog stream
	// routed by the default route, which reads the source table from the
	// value (see [skipsTombstones]).
	skipTombstones bool
	// index holds the index in names of each table of the batch being
	// routed; reused from batch to batch.
	index map[string]int32
	// tables maps the names the route returned that are valid table names
	// to those tables' names, in lower case: a name is checked and lowered
	// once, not at each of its records, while there are few.
	tables map[string]string
}

// maxRoutedNames bounds a router's tables: a route that returns more
// distinct names has each checked at each record past it.
const maxRoutedNames = 4096

// What a routed batch holds, for a record that has no table, in place of
// the index of its table's name: skipped for one no table takes, and from
// unroutable down, unroutable-k for one that cannot be routed, whose
// error is the batch's k-th.
const (
	skipped    int32 = -1
	unroutable int32 = -2
)

// routedBatch is a fetched batch with the table of each of its records
// named, by the router of its partition.
type routedBatch struct {
	*ingest.SharedBatch
	// names lists the batch's tables in the order of their first record.
	names []string
	// at holds, for each record of the batch, the index of its table in
	// names, or skipped, or unroutable-k (see above).
	at []int32
	// errs holds why each record that cannot be routed has no table, in
	// the order of the records.
	errs []*routeError
}

// routeBatch names the table of every record of b. It routes the whole
// batch, past the offsets the run has routed too: which of them the run
// takes is the run's to say (see [fanoutRun.add]), and a record it does
// not take is neither written nor failed for.
func (rt *router) routeBatch(b *ingest.SharedBatch) *routedBatch {
	rb := &routedBatch{SharedBatch: b, at: make([]int32, len(b.Records))}
	clear(rt.index)
	for i := range b.Records {
		name, skip, why := rt.table(&b.Records[i])
		switch {
		case skip:
			rb.at[i] = skipped
		case why != nil:
			rb.at[i] = unroutable - int32(len(rb.errs))
			rb.errs = append(rb.errs, why)
		default:
			k, ok := rt.index[name]
			if !ok {
				k = int32(len(rb.names))
				rt.index[name] = k
				rb.names = append(rb.names, name)
			}
			rb.at[i] = k
		}
	}
	return rb
}

// skipsTombstones reports whether the fanout schema f skips the records
// without a value: its value is a changelog format and it routes by the
// default route (neither fanout_by nor table_id_fields), which names a
// record's table after the source table its value names. A tombstone has
// none; the delete event before it carries the row.
func skipsTombstones(f *spec.FanoutSchema) bool {
	fo := &f.FanoutOptions
	return fo.FanoutBy == "" && len(fo.TableIDFields) == 0 && f.ConnectorOptions.KafkaOptions.ValueTransformer.Changelog()
}

// table returns the lower-case name of r's table, or skip true for a
// record no table takes, or why it cannot be routed.
func (rt *router) table(r *record.Record) (name string, skip bool, why *routeError) {
	if rt.skipTombstones && r.Value == nil {
		return "", true, nil
	}
	name, null, err := rt.route(r)
	switch {
	case err != nil:
		return "", false, newRouteError(r, fmt.Errorf("fanout_by failed: %w", err))
	case null:
		return "", false, newRouteError(r, fmt.Errorf("fanout_by returned NULL"))
	}
	if t, ok := rt.tables[name]; ok {
		return t, false, nil
	}
	if err := spec.CheckRoutedName(name); err != nil {
		return "", false, newRouteError(r, err)
	}
	t := strings.ToLower(name)
	if rt.tables != nil && len(rt.tables) < maxRoutedNames {
		// A copy: the name may be part of a larger string, such as the
		// record's value.
		k := strings.Clone(name)
		rt.tables[k] = strings.ToLower(k)
	}
	return t, false, nil
}

// routeError is a record that has no valid table name.
type routeError struct {
	// record names the record: topic[partition]@offset.
	record string
	err    error
}

// newRouteError returns the routeError of r, which it does not keep.
func newRouteError(r *record.Record, err error) *routeError {
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
var fanoutErrorsColumns = append(deltasink.RawRecordColumns("timestampType"),
	schema.Field{Name: "error", Type: &schema.Type{Kind: schema.String}, Nullable: true})
