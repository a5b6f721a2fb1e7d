package provider_test

import "testing"

// TestAccPartitionByValidation checks, without an agent, that
// table_configuration.partition_by fails the plan on the entry at fault:
// its syntax, a column listed twice, a column that does not exist, a type
// that cannot partition, date() of a column that is no timestamp, and a
// fanout schema, whose tables cannot be partitioned.
func TestAccPartitionByValidation(t *testing.T) {
	topics := `topics = ["events"]
value_transformer = { format = "JSON", json_options = { schema = "id BIGINT, name STRING, at TIMESTAMP" } }` + "\n"
	withConfig := func(config string) string {
		return pipelineHCL(nil, tableHCL("events", topics, `table_configuration = { source_metadata_column = "_kafka"
  `+config+" }"))
	}
	const at = "table[0].table_configuration.partition_by"
	runValidationCases(t, []validationCase{
		{"syntax", withConfig(`partition_by = ["month(at)"]`), at + "[0]", `"month(at)" is not a partition column`},
		{"twice", withConfig(`partition_by = ["name", "name"]`), at + "[1]", `partition column "name" is already listed as partition_by[0]`},
		{"unknown column", withConfig(`partition_by = ["date(_kafka.time)"]`), at + "[0]", `the table has no column "_kafka.time"`},
		{"struct column", withConfig(`partition_by = ["name", "_kafka"]`), at + "[1]", `column "_kafka" is STRUCT<`},
		{"date of a string", withConfig(`partition_by = ["date(name)"]`), at + "[0]", `date() needs a TIMESTAMP or TIMESTAMP_NTZ column`},
		{"fanout", fanoutHCL(fanoutTopics, fanoutByType, `table_configuration = { partition_by = ["date(_kafka.timestamp)"] }`),
			"table_configuration.partition_by", "a fanout schema's tables cannot be partitioned yet"},
	})
}
