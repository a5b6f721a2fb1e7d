package provider_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// kafkaSinkHCL is a connection to the test broker and a sink of topic src
// to topic dst with the extra attributes.
func kafkaSinkHCL(a *testAgent, conn, name, src, dst, extra string) string {
	return a.providerHCL() + connectionHCL(conn, kafkaBootstrap()) + fmt.Sprintf(`
resource "tributary_kafka_sink" "s" {
  name            = %s
  connection_name = tributary_connection.c.name
  source = {
    topics          = [%s]
    starting_offset = "earliest"
    value_transformer = {
      format       = "JSON"
      json_options = { schema = "id BIGINT, name STRING" }
    }
  }
  topic        = %s
  value_format = "JSON"
  %s
  timeouts {
    create = "2m"
  }
}
`, hclString(name), hclString(src), hclString(dst), extra)
}

// TestAccKafkaSink creates an exactly-once sink, which writes the source's
// records, imports it, updates it in place, shows drift and a deletion
// behind Terraform's back, and destroys it.
func TestAccKafkaSink(t *testing.T) {
	a := sharedAgent(t)
	ctx := context.Background()
	conn, name, src, dst := uniqueName("conn"), uniqueName("sink"), uniqueName("src"), uniqueName("dst")
	createTopic(t, src, 1)
	createTopic(t, dst, 1)
	produce(t, src, `{"id":1,"name":"a"}`, `{"id":2,"name":"b"}`, `{"id":3,"name":"c"}`)
	const res = "tributary_kafka_sink.s"
	getSink := func(ctx context.Context, n string) error { _, err := a.Client.GetKafkaSink(ctx, n); return err }
	eos := kafkaSinkHCL(a, conn, name, src, dst, `delivery_guarantee = "EXACTLY_ONCE"`)
	updated := kafkaSinkHCL(a, conn, name, src, dst, `flush_interval = "1s"
  include_headers = false
  enable_idempotence = false
  compression = "GZIP"`)

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkGone("Kafka sink", getSink, name),
		Steps: []resource.TestStep{
			{
				Config: eos,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "id", name),
					resource.TestCheckResourceAttr(res, "partition_strategy", spec.PartitionAllToZero),
					resource.TestCheckResourceAttr(res, "include_headers", "true"),
					resource.TestCheckResourceAttr(res, "enable_idempotence", "true"),
					resource.TestCheckResourceAttr(res, "compression", spec.CompressionNone),
					resource.TestCheckResourceAttr(res, "flush_interval", spec.DefaultFlushInterval),
					resource.TestCheckResourceAttr(res, "source.isolation_level", spec.DefaultIsolationLevel),
					func(*terraform.State) error {
						waitUntil(t, "Kafka sink "+name, "write the 3 source records",
							func(ctx context.Context) (*spec.KafkaSinkResponse, error) { return a.Client.GetKafkaSink(ctx, name) },
							func(got *spec.KafkaSinkResponse) bool { return got.Status.Positions[src+"/0"] == 3 })
						return nil
					},
				),
			},
			importStep(res, name, "timeouts"),
			{
				Config:           updated,
				ConfigPlanChecks: expectUpdate(res),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "flush_interval", "1s"),
					resource.TestCheckResourceAttr(res, "include_headers", "false"),
					resource.TestCheckResourceAttr(res, "enable_idempotence", "false"),
					resource.TestCheckResourceAttr(res, "delivery_guarantee", spec.DeliveryAtLeastOnce),
					resource.TestCheckResourceAttr(res, "compression", spec.CompressionGzip),
				),
			},
			// Drift: a change made through the API shows in the plan.
			planDiffStep(func() {
				got, err := a.Client.GetKafkaSink(ctx, name)
				if err != nil {
					t.Fatalf("reading the sink: %v", err)
				}
				got.Spec.FlushInterval = "3s"
				if _, err := a.Client.PutKafkaSink(ctx, &got.Spec); err != nil {
					t.Fatalf("changing the sink behind Terraform's back: %v", err)
				}
			}, updated),
			{
				// Apply restores the configuration, and then plans nothing.
				Config: updated,
				Check:  resource.TestCheckResourceAttr(res, "flush_interval", "1s"),
			},
			// A sink deleted on the agent is planned for creation.
			planDiffStep(func() {
				if err := a.Client.DeleteKafkaSink(ctx, name); err != nil {
					t.Fatalf("deleting the sink behind Terraform's back: %v", err)
				}
			}, updated),
		},
	})
}

// TestAccKafkaSinkValidation: the sink's rules apply at plan time, on
// their attributes, without an agent.
func TestAccKafkaSinkValidation(t *testing.T) {
	sink := func(attrs string) string {
		return `
resource "tributary_kafka_sink" "s" {
  name            = "s"
  connection_name = "c"
  ` + attrs + `
}
`
	}
	source := `source = { topics = ["in"] }`
	runValidationCases(t, []validationCase{
		{"no source", sink(`topic = "out"`), "source", "one of source or source_table is required"},
		{"both sources", sink(source + "\n source_table = \"main.raw.t\""), "source", "mutually exclusive"},
		{"flink partition strategy", sink(source + "\n partition_strategy = \"hash-by-key\""), "partition_strategy", `"HASH_BY_KEY"`},
		{"flink format", sink(source + "\n value_format = \"debezium-json\""), "value_format", `"DEBEZIUM_JSON"`},
		{"topic and mapping", sink(source + "\n topic = \"out\"\n table_topic_mapping = \"a:b\""), "table_topic_mapping", "mutually exclusive"},
		{"bad mapping", sink(source + "\n table_topic_mapping = \"db.t1\""), "table_topic_mapping", "has no ':'"},
		{"lower-case compression", sink(source + "\n compression = \"lz4\""), "compression", `upper case: "LZ4"`},
		{"transactional id at least once", sink(source + "\n transactional_id = \"x\""), "transactional_id", "EXACTLY_ONCE"},
		{"schema with JSON", sink(source + "\n value_format = \"JSON\"\n include_schema = true"), "include_schema", "DEBEZIUM_JSON"},
		{"long transaction", sink(source + "\n delivery_guarantee = \"EXACTLY_ONCE\"\n flush_interval = \"2m\""), "flush_interval", "1m"},
		{"bad source topic", sink(`source = { topics = ["a b"] }`), "source.topics[0]", "not a valid Kafka topic name"},
		{"idempotence off exactly once", sink(source + "\n topic = \"out\"\n delivery_guarantee = \"EXACTLY_ONCE\"\n enable_idempotence = false"),
			"enable_idempotence", "contradicts"},
		{"mapping pattern no topic matches", sink(source + "\n table_topic_mapping = \"in,inventory.orders:crm\""),
			"table_topic_mapping", `"inventory.orders" (of the entry for topic "crm") matches none`},
	})
}

// TestAccKafkaSinkSourceTable: a sink whose source_table is built from
// the attributes of a pipeline of the same configuration is created after
// it, and writes the rows of the pipeline's table; a sink of a table no
// pipeline writes fails at apply, on its attribute.
func TestAccKafkaSinkSourceTable(t *testing.T) {
	a := sharedAgent(t)
	conn, pipe, name, src, dst := uniqueName("conn"), uniqueName("pipe"), uniqueName("sink"), uniqueName("src"), uniqueName("dst")
	createTopic(t, src, 1)
	createTopic(t, dst, 1)
	produce(t, src, `{"id":1,"name":"a"}`, `{"id":2,"name":"b"}`)
	config := a.providerHCL() + connectionHCL(conn, kafkaBootstrap()) + pipelineHCL(map[string]string{
		// A schema of its own: other tests of the shared agent write main.demo.events.
		"name": hclString(pipe), "connection_name": "tributary_connection.c.name", "flush_interval": `"300ms"`,
		"destination_schema": hclString(pipe),
	}, tableHCL("events", fmt.Sprintf(`topics = [%s]
        starting_offset = "earliest"
        value_transformer = {
          format       = "JSON"
          json_options = { schema = "id BIGINT, name STRING" }
        }`, hclString(src)), "")) + fmt.Sprintf(`
resource "tributary_kafka_sink" "s" {
  name            = %s
  connection_name = tributary_connection.c.name
  source_table    = "${tributary_pipeline.p.destination_catalog}.${tributary_pipeline.p.destination_schema}.events"
  topic           = %s
  value_format    = "JSON"
}
`, hclString(name), hclString(dst))
	missing := a.providerHCL() + connectionHCL(conn, kafkaBootstrap()) + fmt.Sprintf(`
resource "tributary_kafka_sink" "s" {
  name            = %s
  connection_name = tributary_connection.c.name
  source_table    = "main.nowhere.events"
  topic           = "out"
}
`, hclString(uniqueName("sink")))
	getSink := func(ctx context.Context, n string) error { _, err := a.Client.GetKafkaSink(ctx, n); return err }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkGone("Kafka sink", getSink, name),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(*terraform.State) error {
					waitUntil(t, "Kafka sink "+name, "write the table's 2 rows",
						func(ctx context.Context) (*spec.KafkaSinkResponse, error) { return a.Client.GetKafkaSink(ctx, name) },
						func(got *spec.KafkaSinkResponse) bool { return got.Status.Records == 2 })
					return nil
				},
			},
			{
				Config:      missing,
				ExpectError: messageRE("source_table", "no pipeline of this agent writes table"),
			},
		},
	})
}
