package runner_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// TestIsFatalNewerTableFormat: a table a newer agent wrote fails its
// pipeline's table at once, as a table feature this agent lacks does:
// retrying cannot help until the agent is upgraded.
func TestIsFatalNewerTableFormat(t *testing.T) {
	err := fmt.Errorf("opening the table: %w", &table.NewerFormatError{Dir: "/t", Format: "2"})
	if !runner.IsFatal(err) {
		t.Errorf("IsFatal(%v) = false", err)
	}
	if runner.IsFatal(errors.New("connection refused")) {
		t.Error("IsFatal of a passing error = true")
	}
}
