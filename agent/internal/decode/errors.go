package decode

import (
	"errors"
	"fmt"
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
// transformer cannot decode: the batch stops there.
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
