package decode

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// errBadInput marks the error of a key or value whose bytes cannot be
// decoded: the record is corrupt, not the table or the registry.
var errBadInput = errors.New("cannot decode")

// errBadJSON is the error of every JSON key or value that does not parse
// into its schema; one value, since PERMISSIVE tables may see many.
var errBadJSON = fmt.Errorf("%w: not a JSON object that fits the schema", errBadInput)

// badInput wraps err, about the bytes of a key or value, with errBadInput.
func badInput(err error) error { return fmt.Errorf("%w: %w", errBadInput, err) }

// RecordError is returned by [Decoder.Decode] for a record that a FAILFAST
// transformer cannot decode, or whose value is not a change event of its
// changelog format: the batch stops there (unless [Options.SkipBad]).
type RecordError struct {
	Topic     string
	Partition int32
	Offset    int64
	// Side is "key" or "value".
	Side string
	Err  error
}

// Error names the record and the cause.
func (e *RecordError) Error() string {
	if errors.Is(e.Err, ErrBadEvent) {
		return fmt.Sprintf("the %s of %s[%d]@%d is not a change event of its format: %v; "+
			"fix the data, or set kafka_options.ignore_errors = true to leave such records out of the table",
			e.Side, e.Topic, e.Partition, e.Offset, e.Err)
	}
	return fmt.Sprintf("the %s of %s[%d]@%d does not decode and parse_mode is FAILFAST: %v; "+
		"fix the data or the schema, or set parse_mode = \"PERMISSIVE\" to keep such records in _corrupt_record",
		e.Side, e.Topic, e.Partition, e.Offset, e.Err)
}

// Unwrap returns the cause.
func (e *RecordError) Unwrap() error { return e.Err }

// SchemaChangedError is returned by [Decoder.Decode] when a record was
// written with a newer version of the registry subject than the one the
// table started with, with columns the table does not have yet: the table
// commits what it has, and starts again with the new columns.
type SchemaChangedError struct {
	Subject string
	// From is the schema id the table started with, To the subject's
	// latest when the record came.
	From, To int
}

// Error says what changed.
func (e *SchemaChangedError) Error() string {
	return fmt.Sprintf("subject %q has a new version (schema id %d, was %d) with new columns", e.Subject, e.To, e.From)
}

// NewColumnsError is returned by [Decoder.Decode] for a record that, on an
// inferred side (json_options.schema_evolution_mode), has fields the
// table's columns lack, or, in ADD_NEW_COLUMNS_WITH_TYPE_WIDENING, values a
// column can take once widened. The batch returned with it holds the rows
// of the records before that one; decode the records from it on once the
// table has the new columns. In FAIL_ON_NEW_COLUMNS, and with
// [Options.WholeChunk], it names every new column of the chunk, which has
// no rows.
type NewColumnsError struct {
	// Side is "key" or "value".
	Side string
	// Record is the index, in the records Decode got, of the first record
	// that asks for a new column; Topic, Partition and Offset name it.
	Record    int
	Topic     string
	Partition int32
	Offset    int64
	// Fields are the side's columns the record needs (in
	// FAIL_ON_NEW_COLUMNS and with [Options.WholeChunk], the chunk): those it was decoded with, new
	// fields added at the end of their structs, widened types widened.
	// Columns are the paths of the columns added or widened.
	Fields  []schema.Field
	Columns []string
	// Fail says the side's mode is FAIL_ON_NEW_COLUMNS: the table stops
	// instead of adding the columns.
	Fail bool
	// changes are what the records ask, for Apply.
	changes []change
}

// Error names the new columns and the first record that has them.
func (e *NewColumnsError) Error() string {
	msg := fmt.Sprintf("the %s of %s[%d]@%d has new columns %s", e.Side, e.Topic, e.Partition, e.Offset, strings.Join(e.Columns, ", "))
	if e.Fail {
		msg += "; schema_evolution_mode is FAIL_ON_NEW_COLUMNS, so the table stops before that record: declare them in " +
			"json_options.schema_hints or choose another schema_evolution_mode, and apply again to resume from it"
	}
	return msg
}

// Apply returns the columns of the side once the record's new columns are
// added to fields, the side's current columns (which may already have
// more than those the chunk was decoded with), and whether they changed.
func (e *NewColumnsError) Apply(fields []schema.Field) ([]schema.Field, bool) {
	next, names := apply(fields, e.changes)
	return next, len(names) > 0
}
