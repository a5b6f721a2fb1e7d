// Package runner holds what every runner of the agent shares: the
// supervisor that runs a runner's attempts (its state, backoff, stop and
// failing fetches), the classes of the failures that end an attempt, the
// settings a pipeline gives its runners, their timers, the discovery of
// new partitions and, in a cluster, which of them a runner may read
// (ownership.go), and calls made side by side (sidebyside.go). It sits beside the data flow (Kafka -> ingest/decode ->
// writers -> table or Kafka sink) rather than in it: the table loops in
// pipeline, the fanout runners in fanout, the Kafka sinks in kafkasink, and
// the Delta table writer, use it; it knows none of them.
package runner

import (
	"errors"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Every failure of a runner (a table loop, a fanout schema, a Kafka sink)
// falls in one of four classes, decided here and, for what only one kind
// of runner meets, in that runner's classifier (the failures.go of
// pipeline, fanout and kafkasink):
//
//   - Retry in place: a fetch that fails on a connection, a leader change or
//     another broker error is retried by its fetcher with backoff
//     ([kafka.Fetcher.Run]); the runner reports STARTING with the error
//     until the partition fetches again ([Supervisor.FetchFailing]). A
//     failed look-up while starting partitions found by discovery (a
//     [LookupError]) is tried again at the next discovery.
//   - Restart from the log: any other error ends the runner's attempt; the
//     [Supervisor] starts a new one after a backoff (1s doubling to 30s),
//     which resumes from what the table's log (the fanout's progress log,
//     the sink's consumer group) recorded, so nothing buffered is lost or
//     written twice. A record written with a new version of a registry
//     subject ([decode.SchemaChangedError]) restarts a table at once, with
//     its new columns ([RestartNow]).
//   - Fail: an error that restarting cannot fix ([IsFatal]: a [FatalError],
//     data loss under fail_on_data_loss, a re-created topic, a table that is
//     not a Delta table or needs unknown features, an incompatible schema
//     change, a FAILFAST record that does not decode, records Kafka cannot
//     give, a record fanout_by cannot route, a fenced Kafka sink) puts the
//     runner in FAILED with the error; applying it again starts it over.
//   - Stop: the runner's context ended (the manager stopped it); the runner
//     is STOPPED, after a final flush of what it buffered.

// Failure is the class of an error that ended a runner's attempt (see
// above): what its [Supervisor] does next.
type Failure int

const (
	// Restart starts a new attempt after the backoff.
	Restart Failure = iota
	// RestartNow starts a new attempt at once, unless the runner restarted
	// so within the last minute, when it waits the backoff: registry
	// replicas that disagree on a subject's latest version would make it
	// restart without end.
	RestartNow
	// Fail puts the runner in FAILED.
	Fail
)

// FatalError marks an error that retrying cannot fix (a bad schema, lost
// data); the runner goes to FAILED. [Fatal] makes one.
type FatalError struct{ err error }

// Fatal marks err as one that retrying cannot fix.
func Fatal(err error) error { return FatalError{err} }

// Error returns the message of the error it marks.
func (e FatalError) Error() string { return e.err.Error() }

// Unwrap returns the error it marks.
func (e FatalError) Unwrap() error { return e.err }

// LookupError marks a failed metadata or offset look-up while starting new
// partitions: discovery tries again at its next tick. [Lookup] makes one.
type LookupError struct{ err error }

// Lookup marks err as a failed look-up while starting new partitions.
func Lookup(err error) error { return LookupError{err} }

// Error returns the message of the error it marks.
func (e LookupError) Error() string { return e.err.Error() }

// Unwrap returns the error it marks.
func (e LookupError) Unwrap() error { return e.err }

// IsFatal reports whether err is one that restarting cannot fix: the
// table, or fanout schema, goes to FAILED. A record fanout_by cannot route
// is fatal too; the fanout's classifier says so (pipeline's failures.go).
func IsFatal(err error) bool {
	var fatal FatalError
	var dataLoss *kafka.DataLossError
	var notTable *table.NotTableError
	var recreated *kafka.TopicRecreatedError
	var unsupported *table.UnsupportedFeatureError
	var newerFormat *table.NewerFormatError
	var failFast *decode.RecordError
	return errors.As(err, &fatal) || errors.As(err, &dataLoss) || errors.As(err, &recreated) || errors.As(err, &notTable) ||
		errors.As(err, &unsupported) || errors.As(err, &newerFormat) || errors.Is(err, table.ErrSchemaChange) ||
		errors.Is(err, kafka.ErrUnsupportedRecords) || errors.As(err, &failFast)
}

// FatalFor reports whether err fails a runner reading with options ko
// (see [IsFatal]): a re-created topic does not when it goes on after data
// loss, but restarts it, to read the new topic.
func FatalFor(ko *spec.KafkaOptions, err error) bool {
	var recreated *kafka.TopicRecreatedError
	if !ko.FailsOnDataLoss() && errors.As(err, &recreated) {
		return false
	}
	return IsFatal(err)
}

// ClassOf returns the class of an error when fatal says whether it is
// fatal: [Fail], else [Restart].
func ClassOf(fatal bool) Failure {
	if fatal {
		return Fail
	}
	return Restart
}
