//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJSONPipelineThroughTerraform applies a pipeline with a JSON schema and
// a metadata column with the real Terraform CLI, produces 10,000 records
// (10 of them malformed) with Confluent's Python client, and reads the table
// back with delta-rs, DuckDB and pyarrow: exactly 10,000 rows, the 10 bad
// ones in _corrupt_record, every value as produced.
func TestJSONPipelineThroughTerraform(t *testing.T) {
	t.Parallel()
	jsonThroughTerraform(t, startAgent(t, t.TempDir()), "")
}

// TestJSONPipelineOnS3 is TestJSONPipelineThroughTerraform with the
// pipeline's storage_location on the S3-compatible server, under a root the
// agent allows with --warehouse-allow.
func TestJSONPipelineOnS3(t *testing.T) {
	t.Parallel()
	root := storeRoot(t, "s3")
	dataDir := t.TempDir()
	a := startAgentOn(t, dataDir, filepath.Join(dataDir, "warehouse"), "--warehouse-allow", root)
	location, _, _ := strings.Cut(root, "?")
	jsonThroughTerraform(t, a, location+"/lake")
}

// jsonThroughTerraform runs the JSON pipeline test on agent a, with the
// pipeline's storage_location ("" for none).
func jsonThroughTerraform(t *testing.T, a *agent, storageLocation string) {
	topic := uniqueName("e2e-json")
	tableName := uniqueName("events")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "events.ddl"), []byte(
		"id BIGINT NOT NULL COMMENT 'event id',\nname STRING,\namount DOUBLE,\nts TIMESTAMP,\ntags ARRAY<STRING>\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tfPipeline{connection: "e2e-local", pipeline: "e2e-json", body: fmt.Sprintf("  storage_location = %q\n", storageLocation) +
		tfTable(tableName, topic, `key_transformer = { format = "STRING" }
        value_transformer = {
          format       = "JSON"
          json_options = { schema_file_path = "events.ddl" }
        }`, kafkaMetadata)}.write(t, dir)

	// The topic exists before the pipeline starts reading it.
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0")
	apply(t, dir, a)

	var bad []string
	for i := 0; i < 10; i++ {
		bad = append(bad, fmt.Sprint(137+i*997))
	}
	malformed := strings.Join(bad, ",")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "10000",
		"--malformed", malformed, "--header")
	st := a.waitRows("e2e-json", 0, 10000, 2*time.Minute)
	if st.CorruptRecords != 10 {
		t.Errorf("status reports %d corrupt records, want 10", st.CorruptRecords)
	}

	// The offsets are mirrored to the consumer group after each commit, for
	// lag tools.
	group := "tributary.e2e-json.main.e2e." + tableName
	awaitGroupOffsets(t, group, 10000, 30*time.Second)

	out := python(t, "check_table.py", st.Location, "--count", "10000", "--malformed", malformed,
		"--values", "--metadata", "_kafka", "--exactly-once", "--no-orphans")
	t.Log(out)

	plan := planNoChanges(t, dir, a)
	t.Log(plan)
	// Ingestion moved on since the apply; what drift detection (Terraform
	// Cloud's, a refresh-only plan) sees must still be nothing.
	terraform(t, dir, a, "plan", "-refresh-only", "-detailed-exitcode", "-input=false", "-no-color")
	destroy(t, dir, a)
	checkTable(t, st.Location, "--count", "10000") // destroy keeps the table
}
