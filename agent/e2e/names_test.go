//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestAnyColumnNames applies, with the real Terraform CLI, a pipeline
// whose JSON schema has names a plain Delta table cannot hold, produces
// records with those keys and reads the table back by the real names with
// delta-rs and DuckDB (the table uses Delta column mapping).
func TestAnyColumnNames(t *testing.T) {
	a := startAgent(t, t.TempDir())
	topic := uniqueName("e2e-names")
	dir := t.TempDir()
	main := fmt.Sprintf(`
terraform {
  required_providers {
    tributary = { source = "tributary-io/tributary" }
  }
}

provider "tributary" {}

resource "tributary_connection" "local" {
  name              = "e2e-names"
  bootstrap_servers = [%q]
}

resource "tributary_pipeline" "names" {
  name                = "e2e-names"
  connection_name     = tributary_connection.local.name
  destination_catalog = "main"
  destination_schema  = "e2e"
  flush_interval      = "1s"

  table {
    destination_table = "names"
    connector_options = {
      kafka_options = {
        topics           = [%q]
        starting_offset  = "earliest"
        value_transformer = {
          format       = "JSON"
          json_options = { schema = "id BIGINT, `+"`first name` STRING, `a.b` INT, `(cost)` DOUBLE"+`" }
        }
      }
    }
  }
}
`, env.bootstrap, topic)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0")
	terraform(t, dir, a, "apply", "-auto-approve", "-input=false", "-no-color")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "1000", "--names")
	st := a.waitRows("e2e-names", 0, 1000, 2*time.Minute)
	t.Log(python(t, "check_names.py", st.Location, "--count", "1000"))
	terraform(t, dir, a, "plan", "-detailed-exitcode", "-input=false", "-no-color")
	terraform(t, dir, a, "destroy", "-auto-approve", "-input=false", "-no-color")
}
