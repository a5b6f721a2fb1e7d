package fanout

import (
	"fmt"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// RouteFunc evaluates a fanout_by expression on a raw record: its STRING
// result, or null for NULL, or a runtime error of the expression.
type RouteFunc func(*record.Record) (name string, null bool, err error)

// router names the table of each record: one per fanout runner, used by its
// goroutine only.
type router struct {
	route RouteFunc
	// skipTombstones says a record without a value has no table and is
	// skipped: the tombstone that follows a delete in a changelog stream
	// routed by the default route, which reads the source table from the
	// value (see [skipsTombstones]).
	skipTombstones bool
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
// record no table takes, or a [*routeError].
func (rt *router) table(r *record.Record) (name string, skip bool, err error) {
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
	if err := spec.CheckRoutedName(name); err != nil {
		return "", false, newRouteError(r, err)
	}
	return strings.ToLower(name), false, nil
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
