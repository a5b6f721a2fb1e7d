package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registry"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Every failure of a runner (a table loop, a fanout schema, a Kafka sink)
// falls in one of four classes, decided here and nowhere else:
//
//   - Retry in place: a fetch that fails on a connection, a leader change or
//     another broker error is retried by its fetcher with backoff
//     ([kafka.Fetcher.Run]); the runner reports STARTING with the error
//     until the partition fetches again ([supervisor.fetchFailing]). A
//     failed look-up while starting partitions found by discovery (a
//     [lookupError]) is tried again at the next discovery.
//   - Restart from the log: any other error ends the runner's attempt; the
//     [supervisor] starts a new one after a backoff (1s doubling to 30s),
//     which resumes from what the table's log (the fanout's progress log,
//     the sink's consumer group) recorded, so nothing buffered is lost or
//     written twice. A record written with a new version of a registry
//     subject ([decode.SchemaChangedError]) restarts a table at once, with
//     its new columns ([restartNow]).
//   - Fail: an error that restarting cannot fix ([isFatal]: a [fatalError],
//     data loss under fail_on_data_loss, a re-created topic, a table that is
//     not a Delta table or needs unknown features, an incompatible schema
//     change, a FAILFAST record that does not decode, records Kafka cannot
//     give, a record fanout_by cannot route, a fenced Kafka sink) puts the
//     runner in FAILED with the error; applying it again starts it over.
//   - Stop: the runner's context ended (the manager stopped it); the runner
//     is STOPPED, after a final flush of what it buffered.

// failure is the class of an error that ended a runner's attempt (see
// above): what its [supervisor] does next.
type failure int

const (
	// restart starts a new attempt after the backoff.
	restart failure = iota
	// restartNow starts a new attempt at once, unless the runner restarted
	// so within the last minute, when it waits the backoff: registry
	// replicas that disagree on a subject's latest version would make it
	// restart without end.
	restartNow
	// fail puts the runner in FAILED.
	fail
)

// fatalError marks an error that retrying cannot fix (a bad schema, lost
// data); the runner goes to FAILED.
type fatalError struct{ err error }

func (e fatalError) Error() string { return e.err.Error() }
func (e fatalError) Unwrap() error { return e.err }

// lookupError marks a failed metadata or offset look-up while starting new
// partitions: discovery tries again at its next tick.
type lookupError struct{ err error }

func (e lookupError) Error() string { return e.err.Error() }
func (e lookupError) Unwrap() error { return e.err }

// missingTopicError is the error of a Kafka sink's session that could not
// find an output topic: after [sinkMissingTopicTries] in a row, the sink
// fails.
type missingTopicError struct{ error }

// Unwrap returns the error.
func (e missingTopicError) Unwrap() error { return e.error }

// isFatal reports whether err is one that restarting cannot fix: the
// table, or fanout schema, goes to FAILED.
func isFatal(err error) bool {
	var fatal fatalError
	var dataLoss *kafka.DataLossError
	var notTable *table.NotTableError
	var recreated *kafka.TopicRecreatedError
	var unsupported *table.UnsupportedFeatureError
	var failFast *decode.RecordError
	var route *routeError
	return errors.As(err, &fatal) || errors.As(err, &dataLoss) || errors.As(err, &recreated) || errors.As(err, &notTable) ||
		errors.As(err, &unsupported) || errors.Is(err, table.ErrSchemaChange) || errors.Is(err, kafka.ErrUnsupportedRecords) ||
		errors.As(err, &failFast) || errors.As(err, &route)
}

// fatalFor reports whether err fails a runner reading with options ko
// (see isFatal): a re-created topic does not when it goes on after data
// loss, but restarts it, to read the new topic.
func fatalFor(ko *spec.KafkaOptions, err error) bool {
	var recreated *kafka.TopicRecreatedError
	if !ko.FailsOnDataLoss() && errors.As(err, &recreated) {
		return false
	}
	return isFatal(err)
}

// classOf returns the class of err when fatal says whether it is fatal.
func classOf(fatal bool) failure {
	if fatal {
		return fail
	}
	return restart
}

// tableFailure returns the class of err, the end of an attempt of the
// table loop r.
func (r *tableRunner) tableFailure(err error) (failure, error) {
	var evolved *decode.SchemaChangedError
	if errors.As(err, &evolved) {
		// Everything before the record that saw the new version is
		// committed: start again with its columns.
		r.log.Info("registry subject changed; the table restarts with its new columns", "subject", evolved.Subject,
			"schemaId", evolved.To)
		return restartNow, err
	}
	return classOf(fatalFor(&r.cfg.Table.ConnectorOptions.KafkaOptions, err)), err
}

// fanoutFailure returns the class of err, the end of an attempt of a
// fanout runner.
func fanoutFailure(err error) (failure, error) {
	return classOf(isFatal(err)), err
}

// sinkFailure returns the class of err, the end of a session of the Kafka
// sink r, and the error reworded with the fix where it fails the sink.
// Used by the sink's goroutine only (it counts the sessions in a row that
// missed an output topic).
func (r *sinkRunner) sinkFailure(err error) (failure, error) {
	var mt missingTopicError
	if errors.As(err, &mt) {
		r.missing++
	} else {
		r.missing = 0
	}
	switch {
	case r.missing >= sinkMissingTopicTries:
		return fail, fmt.Errorf("%w; tried %d times: create the topic, or route the rows elsewhere (topic, "+
			"table_topic_mapping), then apply the sink again", err, r.missing)
	case errors.Is(err, kafka.ErrFenced):
		return fail, fmt.Errorf("fenced by another agent running kafka sink %q (transactional id %q): this one stops; "+
			"run each sink on one agent only: %w", r.spec.Name, r.spec.TxnID(), err)
	case r.spec.Source != nil:
		return classOf(fatalFor(r.spec.Source, err)), err
	}
	return classOf(isFatal(err)), err
}

// decodeFailed returns what the loop does with the error of a decoded
// chunk. A record written with a newer version of a registry subject first
// commits what is buffered, so that the restart with the new columns goes
// on from there; a record a FAILFAST transformer cannot decode fails the
// table (the chunk's offsets stay uncommitted); a registry that cannot be
// reached, refuses the credentials or lost the subject restarts the table
// from its log, with backoff; anything else is a bug, which fails the table.
func (s *sink) decodeFailed(err error) error {
	var evolved *decode.SchemaChangedError
	var failFast *decode.RecordError
	switch {
	case errors.As(err, &evolved):
		if ferr := finalFlush(s.flush); ferr != nil {
			return ferr
		}
		return err
	case errors.As(err, &failFast):
		return err
	case errors.Is(err, registry.ErrUnavailable), errors.Is(err, registry.ErrRefused), errors.Is(err, registry.ErrNotFound),
		errors.Is(err, context.DeadlineExceeded):
		// The registry's, not the records': ErrNotFound here is the
		// subject, gone while the table reads it.
		return err
	}
	return fatalError{err}
}
