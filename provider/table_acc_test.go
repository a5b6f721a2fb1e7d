package provider_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// tableData is the address of the tributary_table data source of
// TestAccTableDataSource.
const tableData = "data.tributary_table.t"

// TestAccTableDataSource reads a table of a pipeline whose value has a
// fixed JSON schema: its location and state at once, and its columns, with
// their types, once the first records are committed; the same columns show
// in tributary_pipeline_status. A table the pipeline does not have fails
// on destination_table.
func TestAccTableDataSource(t *testing.T) {
	a := sharedAgent(t)
	f := newPipelineFixture(t, a, "1s")
	createTopic(t, f.topic, 1)
	if err := os.WriteFile(f.schemaFile, []byte("id BIGINT, user STRING"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := func(table string) string {
		return f.config() + `
data "tributary_table" "t" {
  pipeline_name     = tributary_pipeline.p.name
  destination_table = ` + hclString(table) + `
}
`
	}
	// The table's columns: the key, the value's fields, the metadata
	// column and _corrupt_record, all nullable.
	wantColumns := [][2]string{{"key", "STRING"}, {"id", "BIGINT"}, {"user", "STRING"}, {"_kafka", "STRUCT<"}, {"_corrupt_record", "BINARY"}}
	columns := func(addr, prefix string) resource.TestCheckFunc {
		checks := []resource.TestCheckFunc{resource.TestCheckResourceAttr(addr, prefix+"columns.#", fmt.Sprint(len(wantColumns)))}
		for i, c := range wantColumns {
			p := fmt.Sprintf("%scolumns.%d.", prefix, i)
			checks = append(checks,
				resource.TestCheckResourceAttr(addr, p+"name", c[0]),
				resource.TestCheckResourceAttrWith(addr, p+"type", func(v string) error {
					if !strings.HasPrefix(v, c[1]) {
						return fmt.Errorf("column %s has type %q, want %s", c[0], v, c[1])
					}
					return nil
				}),
				resource.TestCheckResourceAttr(addr, p+"nullable", "true"))
		}
		return resource.ComposeAggregateTestCheckFunc(checks...)
	}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// Table names compare case-insensitively, as in the pipeline.
				Config: config(strings.ToUpper(f.table)),
				Check: resource.ComposeAggregateTestCheckFunc(
					f.running(),
					resource.TestCheckResourceAttr(tableData, "state", spec.StateRunning),
					resource.TestCheckResourceAttrPair(tableData, "location", statusData, "tables.0.location"),
				),
			},
			{
				PreConfig: func() {
					produce(t, f.topic, `{"id":1,"user":"a"}`)
					a.waitRows(t, f.pipeline, 1)
				},
				Config: config(f.table),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrWith(tableData, "version", atLeast(0)),
					columns(tableData, ""),
					columns(statusData, "tables.0."),
				),
			},
			{
				Config:   config("nope"),
				PlanOnly: true,
				ExpectError: messageRE("Table not found", `destination_table = "nope"`,
					fmt.Sprintf("Pipeline %q has no table \"nope\"; its tables are `%s`.", f.pipeline, f.table)),
			},
		},
	})
}

// TestAccTableInferred applies a pipeline whose value columns are inferred,
// in a mode written as Auto Loader's alias: the apply leaves no diff (the
// alias is kept as written), and tributary_table shows the columns the
// first records gave and those a later record added.
func TestAccTableInferred(t *testing.T) {
	a := sharedAgent(t)
	f := newPipelineFixture(t, a, "1s")
	createTopic(t, f.topic, 1)
	produce(t, f.topic, `{"id":1,"user":"a"}`)
	config := a.providerHCL() + connectionHCL(f.conn, kafkaBootstrap()) + pipelineHCL(map[string]string{
		"name":            hclString(f.pipeline),
		"connection_name": "tributary_connection.c.name",
		"flush_interval":  hclString(f.flush),
	}, tableHCL(f.table, `
        topics          = [`+hclString(f.topic)+`]
        starting_offset = "earliest"
        value_transformer = {
          format       = "JSON"
          json_options = { schema_evolution_mode = "addNewColumns", schema_hints = "id BIGINT, score DOUBLE" }
        }`, "")) + `
data "tributary_table" "t" {
  pipeline_name     = tributary_pipeline.p.name
  destination_table = ` + hclString(f.table) + `
}
`
	const opts = "table.0.connector_options.kafka_options.value_transformer.json_options."
	column := func(i int, name, typ string) resource.TestCheckFunc {
		return resource.ComposeAggregateTestCheckFunc(
			resource.TestCheckResourceAttr(tableData, fmt.Sprintf("columns.%d.name", i), name),
			resource.TestCheckResourceAttr(tableData, fmt.Sprintf("columns.%d.type", i), typ),
		)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("tributary_pipeline.p", opts+"schema_evolution_mode", "addNewColumns"),
					resource.TestCheckResourceAttr("tributary_pipeline.p", opts+"infer_records_per_partition", "50"),
					resource.TestCheckResourceAttr("tributary_pipeline.p", opts+"string_type_inference", "true"),
				),
			},
			{
				PreConfig: func() {
					a.waitRows(t, f.pipeline, 1)
					produce(t, f.topic, `{"id":2,"user":"b","extra":true}`)
					a.waitRows(t, f.pipeline, 2)
				},
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					column(0, "key", "BINARY"),
					column(1, "id", "BIGINT"),
					column(2, "user", "STRING"),
					column(3, "score", "DOUBLE"), // a hint no record has shown yet
					column(4, "extra", "BOOLEAN"),
				),
			},
		},
	})
}
