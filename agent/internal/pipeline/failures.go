package pipeline

import (
	"errors"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
)

// tableFailure returns the class of err, the end of an attempt of the
// table loop r: which class of runner.Failure (runner's errors.go
// documents the classes). A fanout runner's classifier is in package
// fanout, a Kafka sink's in kafkasink.
func (r *tableRunner) tableFailure(err error) (runner.Failure, error) {
	var evolved *decode.SchemaChangedError
	if errors.As(err, &evolved) {
		// Everything before the record that saw the new version is
		// committed: start again with its columns.
		r.log.Info("registry subject changed; the table restarts with its new columns", "subject", evolved.Subject,
			"schemaId", evolved.To)
		return runner.RestartNow, err
	}
	return runner.ClassOf(runner.FatalFor(&r.cfg.Table.ConnectorOptions.KafkaOptions, err)), err
}
