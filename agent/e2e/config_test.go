//go:build e2e

package e2e

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// tfPipeline is a Terraform configuration of one connection to the test
// broker and one pipeline, tributary_pipeline.this, that reads through it
// into main.e2e and flushes every second, and any resources after it.
type tfPipeline struct {
	// connection and pipeline are their names.
	connection, pipeline string
	// bootstrap is the connection's bootstrap server; "" means the test
	// broker's PLAINTEXT listener.
	bootstrap string
	// body is the rest of the pipeline's body: its table blocks, and any
	// attribute before them.
	body string
	// before is HCL between the provider block and the connection, such as
	// a variable; connectionBody is more attributes of the connection.
	before, connectionBody string
	// after is HCL after the pipeline, such as the fanout schemas of
	// tfFanout.
	after string
}

// write writes the configuration to dir/main.tf.
func (c tfPipeline) write(t *testing.T, dir string) {
	t.Helper()
	main := fmt.Sprintf(`
terraform {
  required_providers {
    tributary = { source = "tributary-io/tributary" }
  }
}

provider "tributary" {}
%s
resource "tributary_connection" "local" {
  name              = %q
  bootstrap_servers = [%q]
%s}

resource "tributary_pipeline" "this" {
  name                = %q
  connection_name     = tributary_connection.local.name
  destination_catalog = "main"
  destination_schema  = "e2e"
  flush_interval      = "1s"
%s}
%s`, c.before, c.connection, cmp.Or(c.bootstrap, env.bootstrap), c.connectionBody, c.pipeline, c.body, c.after)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeVar writes dir/terraform.tfvars, which Terraform reads in dir, to
// set the variable name to value. The tests run in parallel, so a variable
// is set there rather than as TF_VAR_<name>, which would need t.Setenv.
func writeVar(t *testing.T, dir, name, value string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "terraform.tfvars"), fmt.Appendf(nil, "%s = %q\n", name, value), 0o600); err != nil {
		t.Fatal(err)
	}
}

// apply runs terraform apply in dir and returns its output.
func apply(t *testing.T, dir string, a *agent) string {
	t.Helper()
	return terraform(t, dir, a, "apply", "-auto-approve", "-input=false", "-no-color")
}

// planNoChanges runs terraform plan in dir and fails the test unless it
// plans no change (with -detailed-exitcode, a change is exit code 2).
func planNoChanges(t *testing.T, dir string, a *agent) string {
	t.Helper()
	return terraform(t, dir, a, "plan", "-detailed-exitcode", "-input=false", "-no-color")
}

// destroy runs terraform destroy in dir.
func destroy(t *testing.T, dir string, a *agent) {
	t.Helper()
	terraform(t, dir, a, "destroy", "-auto-approve", "-input=false", "-no-color")
}

// kafkaMetadata is the table_configuration of a table block that keeps each
// record's Kafka metadata in the column _kafka.
const kafkaMetadata = `table_configuration = { source_metadata_column = "_kafka" }`

// tfTable returns a table block that reads topic from its earliest offset
// into the table name; transformers are the key_transformer and
// value_transformer attributes of its kafka_options, and more is the rest
// of the block, such as kafkaMetadata.
func tfTable(name, topic, transformers, more string) string {
	return fmt.Sprintf(`
  table {
    destination_table = %q
    connector_options = {
      kafka_options = {
        topics          = [%q]
        starting_offset = "earliest"
        %s
      }
    }
    %s
  }
`, name, topic, transformers, more)
}

// tfFanout returns a tributary_fanout_schema resource, name (also its
// name on the agent), of tributary_pipeline.this, that reads topic from
// its earliest offset and routes its records by fanoutBy to tables of
// main.<schema>; options is the rest of its fanout_options, such as
// on_invalid_route and transforms.
func tfFanout(name, schema, topic, fanoutBy, options string) string {
	return fmt.Sprintf(`
resource "tributary_fanout_schema" %q {
  name                = %q
  pipeline_name       = tributary_pipeline.this.name
  destination_catalog = "main"
  destination_schema  = %q
  connector_options = {
    kafka_options = {
      topics          = [%q]
      starting_offset = "earliest"
    }
  }
  fanout_options = {
    fanout_by = %q
%s
  }
}
`, name, name, schema, topic, fanoutBy, options)
}
