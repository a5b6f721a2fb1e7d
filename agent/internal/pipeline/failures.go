package pipeline

import (
	"errors"
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The classifiers of the runners here (a fanout runner's is in the fanout
// package): which class of runner.Failure
// ends an attempt of each (runner's errors.go documents the classes).

// missingTopicError is the error of a Kafka sink's session that could not
// find an output topic: after [sinkMissingTopicTries] in a row, the sink
// fails.
type missingTopicError struct{ error }

// Unwrap returns the error.
func (e missingTopicError) Unwrap() error { return e.error }

// fatalFor reports whether err fails a runner reading with options ko
// (see [runner.IsFatal]): a re-created topic does not when it goes on after data
// loss, but restarts it, to read the new topic.
func fatalFor(ko *spec.KafkaOptions, err error) bool {
	var recreated *kafka.TopicRecreatedError
	if !ko.FailsOnDataLoss() && errors.As(err, &recreated) {
		return false
	}
	return runner.IsFatal(err)
}

// classOf returns the class of err when fatal says whether it is fatal.
func classOf(fatal bool) runner.Failure {
	if fatal {
		return runner.Fail
	}
	return runner.Restart
}

// tableFailure returns the class of err, the end of an attempt of the
// table loop r.
func (r *tableRunner) tableFailure(err error) (runner.Failure, error) {
	var evolved *decode.SchemaChangedError
	if errors.As(err, &evolved) {
		// Everything before the record that saw the new version is
		// committed: start again with its columns.
		r.log.Info("registry subject changed; the table restarts with its new columns", "subject", evolved.Subject,
			"schemaId", evolved.To)
		return runner.RestartNow, err
	}
	return classOf(fatalFor(&r.cfg.Table.ConnectorOptions.KafkaOptions, err)), err
}

// sinkFailure returns the class of err, the end of a session of the Kafka
// sink r, and the error reworded with the fix where it fails the sink.
// Used by the sink's goroutine only (it counts the sessions in a row that
// missed an output topic).
func (r *sinkRunner) sinkFailure(err error) (runner.Failure, error) {
	var mt missingTopicError
	if errors.As(err, &mt) {
		r.missing++
	} else {
		r.missing = 0
	}
	switch {
	case r.missing >= sinkMissingTopicTries:
		return runner.Fail, fmt.Errorf("%w; tried %d times: create the topic, or route the rows elsewhere (topic, "+
			"table_topic_mapping), then apply the sink again", err, r.missing)
	case errors.Is(err, kafka.ErrFenced):
		return runner.Fail, fmt.Errorf("fenced by another agent running kafka sink %q (transactional id %q): this one stops; "+
			"run each sink on one agent only: %w", r.spec.Name, r.spec.TxnID(), err)
	case r.spec.Source != nil:
		return classOf(fatalFor(r.spec.Source, err)), err
	}
	return classOf(runner.IsFatal(err)), err
}
