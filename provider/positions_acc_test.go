package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccPositionsValidation checks, without an agent, that every rule of
// subscriptions, start and end positions, flow control, consumer groups
// and client properties fails the plan on its attribute: exactly one of
// topics, topic_pattern and assign; each mode's companions required, and
// refused without their mode; ending_* only on a triggered pipeline; ends
// not before starts; min_offsets_per_trigger not above the max;
// group_id exclusive with group_id_prefix; client_properties keys.
func TestAccPositionsValidation(t *testing.T) {
	topics := `topics = ["events"]` + "\n"
	one := func(kafka string) string { return pipelineHCL(nil, tableHCL("events", kafka, "")) }
	triggered := func(kafka string) string {
		return pipelineHCL(map[string]string{"continuous": "false"}, tableHCL("events", kafka, ""))
	}
	at := func(attr string) string { return kafkaPath + "." + attr }
	runValidationCases(t, []validationCase{
		// Subscriptions.
		{"topics and assign", one(topics + `assign = { "events" = [0] }`),
			at("topics"), "topics and assign are mutually exclusive; set only one of topics, topic_pattern and assign"},
		{"topic_pattern and assign", one(`topic_pattern = "ev.*"` + "\n" + `assign = { "events" = [0] }`),
			at("topic_pattern"), "topic_pattern and assign are mutually exclusive"},
		{"assign without partitions", one(`assign = { "events" = [] }`),
			at("assign"), `topic "events" lists no partitions`},
		{"assign negative partition", one(`assign = { "events" = [-1] }`),
			at("assign"), `topic "events": -1 is not a partition number; partitions are numbered from 0`},

		// Starting positions.
		{"specific without starting_offsets", one(topics + `starting_offset = "specific"`),
			at("starting_offsets"), `starting_offset = "specific" needs starting_offsets`},
		{"starting_offsets without specific", one(topics + `starting_offsets = { "events" = { "0" = 5 } }`),
			at("starting_offsets"), `starting_offsets applies only with starting_offset = "specific" (it is "latest"); set starting_offset = "specific" or remove starting_offsets`},
		{"timestamp without a time", one(topics + `starting_offset = "timestamp"`),
			at("starting_timestamp"), `starting_offset = "timestamp" needs starting_timestamp (one time for every partition) or starting_offsets_by_timestamp (a time per partition)`},
		{"starting_timestamp and by partition", one(topics + `starting_offset = "timestamp"
        starting_timestamp = "1700000000000"
        starting_offsets_by_timestamp = { "events" = { "0" = 1700000000000 } }`),
			at("starting_offsets_by_timestamp"), "starting_timestamp and starting_offsets_by_timestamp are mutually exclusive; set only one of them"},
		{"starting_timestamp without timestamp", one(topics + `starting_timestamp = "1700000000000"`),
			at("starting_timestamp"), `starting_timestamp applies only with starting_offset = "timestamp"`},
		{"starting_offsets_by_timestamp without timestamp", one(topics + `starting_offset = "earliest"
        starting_offsets_by_timestamp = { "events" = { "0" = 1700000000000 } }`),
			at("starting_offsets_by_timestamp"), `starting_offsets_by_timestamp applies only with starting_offset = "timestamp" (it is "earliest")`},
		{"starting_timestamp does not parse", one(topics + `starting_offset = "timestamp"
        starting_timestamp = "2023-11-14 22:13"`),
			at("starting_timestamp"), `"2023-11-14 22:13" is neither milliseconds since the epoch ("1700000000000") nor an RFC 3339 time`},
		{"starting offset below -2", one(topics + `starting_offset = "specific"
        starting_offsets = { "events" = { "0" = -3 } }`),
			at("starting_offsets"), `topic "events" partition 0: -3 is not -2 (earliest), -1 (latest) or an offset from 0`},
		{"partition key not a number", one(topics + `starting_offset = "specific"
        starting_offsets = { "events" = { "first" = 0 } }`),
			at("starting_offsets"), `topic "events": partition "first" is not a partition number`},
		{"starting_offsets of a topic not read", one(topics + `starting_offset = "specific"
        starting_offsets = { "orders" = { "0" = 0 } }`),
			at("starting_offsets"), `topic "orders" partition 0: the table does not read this topic: it is not in topics`},
		{"starting_offsets of a partition not assigned", one(`assign = { "events" = [0] }
        starting_offset = "specific"
        starting_offsets = { "events" = { "1" = 0 } }`),
			at("starting_offsets"), "the table does not read this partition: assign does not list it"},
		{"auto_offset_reset", one(topics + `auto_offset_reset = "smallest"`),
			at("auto_offset_reset"), `"smallest" is not one of latest, earliest, none`},

		// Ending positions.
		{"ending_offset on a continuous pipeline", one(topics + `ending_offset = "latest"`),
			at("ending_offset"), "ending_offset applies only to a triggered pipeline (continuous = false): a continuous pipeline never ends; set continuous = false or remove ending_offset"},
		{"ending_offsets on a continuous pipeline", pipelineHCL(map[string]string{"continuous": "true"}, tableHCL("events", topics+`ending_offset = "specific"
        ending_offsets = { "events" = { "0" = 10 } }`, "")),
			at("ending_offsets"), "ending_offsets applies only to a triggered pipeline"},
		{"ending_timestamp on a continuous pipeline", one(topics + `ending_offset = "timestamp"
        ending_timestamp = "1700000000000"`),
			at("ending_timestamp"), "ending_timestamp applies only to a triggered pipeline"},
		{"ending_offset", triggered(topics + `ending_offset = "earliest"`),
			at("ending_offset"), `"earliest" is not one of latest, specific, timestamp`},
		{"specific without ending_offsets", triggered(topics + `ending_offset = "specific"`),
			at("ending_offsets"), `ending_offset = "specific" needs ending_offsets`},
		{"ending_offsets without specific", triggered(topics + `ending_offsets = { "events" = { "0" = 10 } }`),
			at("ending_offsets"), `ending_offsets applies only with ending_offset = "specific" (it is "latest")`},
		{"ending timestamp without a time", triggered(topics + `ending_offset = "timestamp"`),
			at("ending_timestamp"), `ending_offset = "timestamp" needs ending_timestamp`},
		{"ending_timestamp without timestamp", triggered(topics + `ending_timestamp = "1700000000000"`),
			at("ending_timestamp"), `ending_timestamp applies only with ending_offset = "timestamp"`},
		{"ending_offsets_by_timestamp without timestamp", triggered(topics + `ending_offsets_by_timestamp = { "events" = { "0" = 1 } }`),
			at("ending_offsets_by_timestamp"), `ending_offsets_by_timestamp applies only with ending_offset = "timestamp"`},
		{"ending_timestamp and by partition", triggered(topics + `ending_offset = "timestamp"
        ending_timestamp = "1700000000000"
        ending_offsets_by_timestamp = { "events" = { "0" = 1700000000000 } }`),
			at("ending_offsets_by_timestamp"), "ending_timestamp and ending_offsets_by_timestamp are mutually exclusive"},
		{"ending offset -2", triggered(topics + `ending_offset = "specific"
        ending_offsets = { "events" = { "0" = -2 } }`),
			at("ending_offsets"), `topic "events" partition 0: -2 is not -1 (latest) or an offset from 0`},
		{"end before start", triggered(topics + `starting_offset = "specific"
        starting_offsets = { "events" = { "0" = 50 } }
        ending_offset = "specific"
        ending_offsets = { "events" = { "0" = 10 } }`),
			at("ending_offsets"), `topic "events" partition 0 ends at offset 10, before its starting offset 50; the run would read nothing`},
		{"ending_timestamp before starting_timestamp", triggered(topics + `starting_offset = "timestamp"
        starting_timestamp = "2024-01-02T00:00:00Z"
        ending_offset = "timestamp"
        ending_timestamp = "2024-01-01T00:00:00Z"`),
			at("ending_timestamp"), `ending_timestamp "2024-01-01T00:00:00Z" is before starting_timestamp "2024-01-02T00:00:00Z"`},

		// Flow control and splitting.
		{"min above max offsets", one(topics + `max_offsets_per_trigger = 10
        min_offsets_per_trigger = 11`),
			at("min_offsets_per_trigger"), "min_offsets_per_trigger 11 is more than max_offsets_per_trigger 10"},
		{"max_offsets_per_trigger zero", one(topics + `max_offsets_per_trigger = 0`),
			at("max_offsets_per_trigger"), "0 is less than the minimum of 1"},
		{"max_trigger_delay without min", one(topics + `max_trigger_delay = "1m"`),
			at("max_trigger_delay"), "max_trigger_delay applies only with min_offsets_per_trigger"},
		{"max_trigger_delay does not parse", one(topics + `min_offsets_per_trigger = 5
        max_trigger_delay = "soon"`),
			at("max_trigger_delay"), `"soon" is not a positive duration`},
		{"min_partitions", one(topics + `min_partitions = 5000`),
			at("min_partitions"), "5000 is more than the maximum of 1024"},
		{"max_records_per_partition", one(topics + `max_records_per_partition = 0`),
			at("max_records_per_partition"), "0 is less than the minimum of 1"},

		// Discovery, groups, client properties.
		{"partition_discovery_interval", one(topics + `partition_discovery_interval = "5"`),
			at("partition_discovery_interval"), `"5" is not a duration`},
		{"bytes_estimate_window_length", one(topics + `bytes_estimate_window_length = "0s"`),
			at("bytes_estimate_window_length"), `"0s" is not a duration of at least 1s`},
		{"group_id and group_id_prefix", one(topics + `group_id = "etl"
        group_id_prefix = "etl."`),
			at("group_id_prefix"), "group_id and group_id_prefix are mutually exclusive"},
		{"client property unknown", one(topics + `client_properties = { "max.poll.records" = "10" }`),
			at("client_properties"), `key "max.poll.records" is not supported; the supported keys are client.id, fetch.max.bytes, fetch.max.wait.ms, fetch.min.bytes`},
		{"client property with an attribute", one(topics + `client_properties = { "auto.offset.reset" = "earliest" }`),
			at("client_properties"), `key "auto.offset.reset" is not a client property here: set starting_offset and auto_offset_reset instead`},
		{"client property of Java's JAAS", one(topics + `client_properties = { "kafka.sasl.jaas.config" = "PlainLoginModule required;" }`),
			at("client_properties"), `key "sasl.jaas.config" is not a client property here: set the sasl block: username and password (PLAIN, SCRAM)`},
		{"client property of a Java callback handler", one(topics +
			`client_properties = { "sasl.login.callback.handler.class" = "com.google.cloud.hosted.kafka.auth.GcpLoginCallbackHandler" }`),
			at("client_properties"), "or sasl.mechanism AWS_MSK_IAM, AZURE_EVENT_HUBS_ENTRA_ID or GCP_MANAGED_KAFKA_IAM instead of a cloud's callback handler"},
		{"client property of membership", one(topics + `client_properties = { "session.timeout.ms" = "10000" }`),
			at("client_properties"), "the agent does not join the consumer group (it commits offsets for lag tools only)"},
		{"client property out of range", one(topics + `client_properties = { "fetch.max.wait.ms" = "0" }`),
			at("client_properties"), "fetch.max.wait.ms = 0 is out of range: use from 1 to 300000 milliseconds"},
		{"client_properties empty", one(topics + `client_properties = {}`),
			at("client_properties"), "client_properties is empty"},
	})
}

// TestAccFanoutPositionsValidation: a fanout schema takes the same
// subscription and position rules, and refuses the options only tables
// have.
func TestAccFanoutPositionsValidation(t *testing.T) {
	const kp = "connector_options.kafka_options."
	fanout := func(kafka string) string { return fanoutHCL(kafka, fanoutByType, "") }
	cases := []validationCase{
		{"topics and assign", fanout(fanoutTopics + "\n" + `assign = { "events" = [0] }`),
			kp + "topics", "topics and assign are mutually exclusive"},
		{"specific without starting_offsets", fanout(fanoutTopics + "\n" + `starting_offset = "specific"`),
			kp + "starting_offsets", `starting_offset = "specific" needs starting_offsets`},
	}
	for attr, value := range map[string]string{
		"max_offsets_per_trigger": "100", "min_offsets_per_trigger": "10", "min_partitions": "4",
		"max_records_per_partition": "1000", "max_trigger_delay": `"1m"`,
	} {
		cases = append(cases, validationCase{attr, fanout(fanoutTopics + "\n" + attr + " = " + value),
			kp + attr, attr + " is not supported on fanout schemas, only on the tables of a tributary_pipeline; remove it"})
	}
	runValidationCases(t, cases)
}

// TestAccPositionsPlan: valid configurations plan, with the defaults
// Normalize fills: ending_offset "latest" on a triggered pipeline's table
// (null on a continuous one), max_trigger_delay "15m" with
// min_offsets_per_trigger, and the static defaults.
func TestAccPositionsPlan(t *testing.T) {
	ko := tfjsonpath.New("table").AtSliceIndex(0).AtMapKey("connector_options").AtMapKey("kafka_options")
	expect := func(attr string, v knownvalue.Check) plancheck.PlanCheck {
		return plancheck.ExpectKnownValue("tributary_pipeline.p", ko.AtMapKey(attr), v)
	}
	step := func(config string, checks ...plancheck.PlanCheck) resource.TestStep {
		s := planDiffStep(nil, config)
		s.ConfigPlanChecks.PostApplyPreRefresh = checks
		return s
	}
	triggered := pipelineHCL(map[string]string{"continuous": "false"}, tableHCL("events", `assign = { "events" = [0, 1] }
        starting_offset = "specific"
        starting_offsets = { "events" = { "0" = 23, "1" = -2 } }
        min_offsets_per_trigger = 10
        max_offsets_per_trigger = 1000
        client_properties = { "fetch.min.bytes" = "1024" }`, ""))
	continuous := pipelineHCL(nil, tableHCL("events", `topic_pattern = "ev.*"
        starting_offset = "timestamp"
        starting_timestamp = "2023-11-14T22:13:20Z"
        group_id_prefix = "etl."`, ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			step(triggered,
				expect("ending_offset", knownvalue.StringExact("latest")),
				expect("max_trigger_delay", knownvalue.StringExact("15m")),
				expect("auto_offset_reset", knownvalue.StringExact("latest")),
				expect("fail_on_data_loss", knownvalue.Bool(true)),
				expect("check_duplicated_group_id", knownvalue.Bool(false)),
				expect("partition_discovery_interval", knownvalue.StringExact("5m")),
				expect("bytes_estimate_window_length", knownvalue.StringExact("5m")),
				expect("starting_offsets", knownvalue.MapExact(map[string]knownvalue.Check{
					"events": knownvalue.MapExact(map[string]knownvalue.Check{"0": knownvalue.Int64Exact(23), "1": knownvalue.Int64Exact(-2)}),
				})),
			),
			step(continuous,
				expect("ending_offset", knownvalue.Null()),
				expect("max_trigger_delay", knownvalue.Null()),
				expect("group_id", knownvalue.Null()),
			),
		},
	})
	// A fanout schema has no mode of its own: ending_offset stays null.
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{func() resource.TestStep {
			s := planDiffStep(nil, fanoutHCL(fanoutTopics+"\n"+`starting_offset = "group"`+"\n"+`group_id = "etl-events"`, fanoutByType, ""))
			s.ConfigPlanChecks.PostApplyPreRefresh = []plancheck.PlanCheck{
				plancheck.ExpectKnownValue("tributary_fanout_schema.f",
					tfjsonpath.New("connector_options").AtMapKey("kafka_options").AtMapKey("ending_offset"), knownvalue.Null()),
			}
			return s
		}()},
	})
}

// TestAccPositionsApply applies a pipeline table and a fanout schema that
// set the options of issue 12, and imports both: the agent stores and
// returns every value as planned (its defaults included), so that neither
// a refresh nor an import shows a difference. It needs an agent and a
// broker, not the options' execution.
func TestAccPositionsApply(t *testing.T) {
	a := sharedAgent(t)
	conn, pipe, fan, topic := uniqueName("conn"), uniqueName("pipe"), uniqueName("fan"), uniqueName("topic")
	// Tables outlive their pipelines on the shared agent: fresh schemas.
	schema, routed := uniqueName("positions"), uniqueName("routed")
	createTopic(t, topic, 2)
	config := a.providerHCL() + connectionHCL(conn, kafkaBootstrap()) + pipelineHCL(map[string]string{
		"name":               hclString(pipe),
		"connection_name":    "tributary_connection.c.name",
		"destination_schema": hclString(schema),
	}, tableHCL("events", `topics = [`+hclString(topic)+`]
        starting_offset = "specific"
        starting_offsets = { `+hclString(topic)+` = { "0" = 0, "1" = -2 } }
        auto_offset_reset = "earliest"
        max_offsets_per_trigger = 1000
        min_offsets_per_trigger = 10
        min_partitions = 2
        max_records_per_partition = 500
        fail_on_data_loss = false
        group_id_prefix = "acc."
        partition_discovery_interval = "30s"
        bytes_estimate_window_length = "10m"
        client_properties = { "client.id" = "acc-positions", "fetch.max.wait.ms" = "200" }`, ""), `
  timeouts {
    create = "2m"
  }
`) + `
resource "tributary_fanout_schema" "f" {
  name                = ` + hclString(fan) + `
  pipeline_name       = tributary_pipeline.p.name
  destination_catalog = "main"
  destination_schema  = ` + hclString(routed) + `
  connector_options = {
    kafka_options = {
      assign                    = { ` + hclString(topic) + ` = [1] }
      starting_offset           = "timestamp"
      starting_timestamp        = "2024-01-01T00:00:00Z"
      group_id                  = "acc-fanout"
      check_duplicated_group_id = true
      client_properties         = { "fetch.min.bytes" = "1" }
    }
  }
  fanout_options = {
    fanout_by = "topic"
  }
}
`
	ko := "table.0.connector_options.kafka_options."
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("tributary_pipeline.p", ko+"starting_offsets."+topic+".1", "-2"),
					resource.TestCheckResourceAttr("tributary_pipeline.p", ko+"max_trigger_delay", "15m"),
					resource.TestCheckResourceAttr("tributary_pipeline.p", ko+"fail_on_data_loss", "false"),
					resource.TestCheckResourceAttr("tributary_pipeline.p", ko+"client_properties.client.id", "acc-positions"),
					resource.TestCheckNoResourceAttr("tributary_pipeline.p", ko+"ending_offset"),
					resource.TestCheckResourceAttr("tributary_fanout_schema.f", "connector_options.kafka_options.assign."+topic+".0", "1"),
					resource.TestCheckResourceAttr("tributary_fanout_schema.f", "connector_options.kafka_options.partition_discovery_interval", "5m"),
					resource.TestCheckResourceAttr("tributary_pipeline.p", ko+"bytes_estimate_window_length", "10m"),
					resource.TestCheckResourceAttr("tributary_fanout_schema.f", "connector_options.kafka_options.bytes_estimate_window_length", "5m"),
				),
			},
			importStep("tributary_pipeline.p", pipe, "timeouts"),
			importStep("tributary_fanout_schema.f", fan, "timeouts"),
		},
	})
}

// TestAccPositionsSkipUnknown: a rule that reads a value known only after
// apply waits for it: a topic of starting_offsets checked against a list
// of topics holding an unknown name, offsets and a pipeline mode known
// later, a client property whose key is known later.
func TestAccPositionsSkipUnknown(t *testing.T) {
	testPlans(t, `
resource "terraform_data" "later" {
  input = "x"
}
`+pipelineHCL(map[string]string{"continuous": "terraform_data.later.output == \"x\""},
		tableHCL("events", `topics = ["events", terraform_data.later.output]
        starting_offset = "specific"
        starting_offsets = { "orders" = { "0" = 5 } }
        ending_offset = "specific"
        ending_offsets = { "events" = { "0" = length(terraform_data.later.output) } }
        client_properties = { (terraform_data.later.output) = "1" }`, ""),
		tableHCL("assigned", `assign = { "assigned" = [length(terraform_data.later.output)] }
        starting_offset = "specific"
        starting_offsets = { "assigned" = { "3" = 0 } }`, "")))
}
