package pipeline

import (
	"errors"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The classifiers of the runners here: which class of runner.Failure
// ends an attempt of each (runner's errors.go documents the classes).

// isFatal reports whether err is one that restarting cannot fix
// ([runner.IsFatal]), or a record fanout_by cannot route.
func isFatal(err error) bool {
	var route *routeError
	return runner.IsFatal(err) || errors.As(err, &route)
}

// fatalFor reports whether err fails a runner reading with options ko
// ([runner.FatalFor]), or is a record fanout_by cannot route.
func fatalFor(ko *spec.KafkaOptions, err error) bool {
	var route *routeError
	return runner.FatalFor(ko, err) || errors.As(err, &route)
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
	return runner.ClassOf(fatalFor(&r.cfg.Table.ConnectorOptions.KafkaOptions, err)), err
}

// fanoutFailure returns the class of err, the end of an attempt of a
// fanout runner.
func fanoutFailure(err error) (runner.Failure, error) {
	return runner.ClassOf(isFatal(err)), err
}
