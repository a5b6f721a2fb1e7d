//go:build e2e

package e2e

import (
	"testing"
	"time"
)

// TestAnyColumnNames applies, with the real Terraform CLI, a pipeline
// whose JSON schema has names a plain Delta table cannot hold, produces
// records with those keys and reads the table back by the real names with
// delta-rs and DuckDB (the table uses Delta column mapping).
func TestAnyColumnNames(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	topic := uniqueName("e2e-names")
	dir := t.TempDir()
	tfPipeline{connection: "e2e-names", pipeline: "e2e-names", body: tfTable("names", topic, `value_transformer = {
          format       = "JSON"
          json_options = { schema = "id BIGINT, `+"`first name` STRING, `a.b` INT, `(cost)` DOUBLE"+`" }
        }`, "")}.write(t, dir)
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0")
	apply(t, dir, a)
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "1000", "--names")
	st := a.waitRows("e2e-names", 0, 1000, 2*time.Minute)
	t.Log(python(t, "check_names.py", st.Location, "--count", "1000"))
	planNoChanges(t, dir, a)
	destroy(t, dir, a)
}
