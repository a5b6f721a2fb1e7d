//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestVariantThroughTerraform applies, with the real Terraform CLI, a
// pipeline whose key and value are JSON without json_options, so each is a
// VARIANT column; produces tricky records (nested objects and arrays,
// unicode, integers beyond BIGINT, decimals, nulls, an object of 300 keys,
// 200-deep nesting, malformed JSON, empty and null values, a null key) and
// a bulk of plain ones; and reads the table back with delta-rs (protocol
// 3/7 with variantType, one row per record, the malformed bytes in
// _corrupt_record) and DuckDB (VARIANT columns whose JSON and extracted
// fields are the produced values). A second table reads the same topic
// with a json_options schema of VARIANT fields, which take the fields' JSON
// sub-values.
func TestVariantThroughTerraform(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	topic := uniqueName("e2e-variant")
	tableName := uniqueName("variants")
	pipeline := uniqueName("e2e-variant")
	dir := t.TempDir()
	tfPipeline{connection: uniqueName("e2e-local"), pipeline: pipeline, body: tfTable(tableName, topic, `key_transformer   = { format = "JSON" }
        value_transformer = { format = "JSON" }`, kafkaMetadata) +
		tfTable(tableName+"_fields", topic, `value_transformer = {
          format       = "JSON"
          json_options = { schema = "id BIGINT, tags VARIANT, user VARIANT" }
        }`, kafkaMetadata)}.write(t, dir)
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0", "--partitions", "1")
	apply(t, dir, a)

	manifest := filepath.Join(dir, "manifest.jsonl")
	const tricky, bulk, corrupt = 21, 2000, 4
	python(t, "variant_records.py", "produce", "--bootstrap", env.bootstrap, "--topic", topic,
		"--manifest", manifest, "--bulk", fmt.Sprint(bulk))
	st := a.waitRows(pipeline, 0, tricky+bulk, 2*time.Minute)
	if st.CorruptRecords != corrupt {
		t.Errorf("status reports %d corrupt records, want %d", st.CorruptRecords, corrupt)
	}
	t.Log(python(t, "variant_records.py", "check", st.Location, "--manifest", manifest))
	// Not objects: the malformed ones, the array and the scalars (null
	// included); not the object with trailing text, whose first value
	// from_json reads, as Spark does.
	const notObjects = corrupt - 1 + 5
	fields := a.waitRows(pipeline, 1, tricky+bulk, 2*time.Minute)
	if fields.CorruptRecords != notObjects {
		t.Errorf("the table with VARIANT fields reports %d corrupt records, want %d", fields.CorruptRecords, notObjects)
	}
	t.Log(python(t, "variant_records.py", "check-fields", fields.Location, "--manifest", manifest, "--columns", "tags,user"))
	planNoChanges(t, dir, a)
	destroy(t, dir, a)
}
