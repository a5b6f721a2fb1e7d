package fanout

import (
	"errors"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
)

// fanoutFailure returns the class of err, the end of an attempt of a
// fanout runner (runner's errors.go documents the classes): it fails on
// an error that restarting cannot fix ([runner.IsFatal]) and on a record
// fanout_by cannot route, and restarts from the logs on any other.
func fanoutFailure(err error) (runner.Failure, error) {
	var route *routeError
	if runner.IsFatal(err) || errors.As(err, &route) {
		return runner.Fail, err
	}
	return runner.Restart, err
}
