package kafkasink

import (
	"errors"
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
)

// missingTopicError is the error of a Kafka sink's session that could not
// find an output topic: after [missingTopicTries] in a row, the sink
// fails.
type missingTopicError struct{ error }

// Unwrap returns the error.
func (e missingTopicError) Unwrap() error { return e.error }

// failure returns the class of err, the end of a session of the Kafka
// sink r, and the error reworded with the fix where it fails the sink.
// Used by the sink's goroutine only (it counts the sessions in a row that
// missed an output topic).
func (r *Runner) failure(err error) (runner.Failure, error) {
	var mt missingTopicError
	if errors.As(err, &mt) {
		r.missing++
	} else {
		r.missing = 0
	}
	switch {
	case r.missing >= missingTopicTries:
		return runner.Fail, fmt.Errorf("%w; tried %d times: create the topic, or route the rows elsewhere (topic, "+
			"table_topic_mapping), then apply the sink again", err, r.missing)
	case errors.Is(err, kafka.ErrFenced):
		return runner.Fail, fmt.Errorf("fenced by another agent running kafka sink %q (transactional id %q): this one stops; "+
			"run each sink on one agent only: %w", r.spec.Name, r.spec.TxnID(), err)
	case r.spec.Source != nil:
		return runner.ClassOf(runner.FatalFor(r.spec.Source, err)), err
	}
	return runner.ClassOf(runner.IsFatal(err)), err
}
