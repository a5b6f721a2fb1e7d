package provider_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The spec's size limits fail the plan, on their attribute, without an
// agent: a topic_pattern too long, and a schema file whose columns are
// more than a Parquet file can hold.
func TestAccPipelineLimits(t *testing.T) {
	cols := make([]string, spec.MaxLeafColumns)
	for i := range cols {
		cols[i] = fmt.Sprintf("c%d BIGINT", i)
	}
	wide := filepath.Join(t.TempDir(), "wide.ddl")
	if err := os.WriteFile(wide, []byte(strings.Join(cols, ",\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	one := func(kafka string) string { return pipelineHCL(nil, tableHCL("events", kafka, "")) }
	runValidationCases(t, []validationCase{
		{"topic_pattern too long", one(`topic_pattern = "` + strings.Repeat("a", spec.MaxTopicPatternLen+1) + `"`),
			kafkaPath + ".topic_pattern", "1025 bytes long, more than the maximum of 1024"},
		{"too many columns", one(`topics = ["events"]
      value_transformer = { format = "JSON", json_options = { schema_file_path = ` + hclString(wide) + ` } }`),
			valueJSON + ".schema_file_path", "more than Parquet's maximum of 65535"},
	})
}
