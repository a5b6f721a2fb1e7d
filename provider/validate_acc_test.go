package provider_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

const (
	kafkaPath     = "table[0].connector_options.kafka_options"
	valueJSON     = kafkaPath + ".value_transformer.json_options"
	valueAvro     = kafkaPath + ".value_transformer.avro_options"
	valueProtobuf = kafkaPath + ".value_transformer.protobuf_options"
)

// validationCase is one plan-time validation rule: config must fail with a
// diagnostic on attribute path (named in its summary) saying detail.
type validationCase struct {
	name   string
	config string
	path   string
	detail string
}

// testPlans checks that config plans changes without an error. It runs
// alone: the examples it plans change the folder and the environment.
func testPlans(t *testing.T, config string) {
	t.Helper()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps:                    []resource.TestStep{planDiffStep(nil, config)},
	})
}

// testPlanFails checks that planning config fails with an error matching
// re, with the CLIs that pass checks.
func testPlanFails(t *testing.T, config string, re *regexp.Regexp, checks ...tfversion.TerraformVersionCheck) {
	t.Helper()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		TerraformVersionChecks:   checks,
		Steps:                    []resource.TestStep{{Config: config, PlanOnly: true, ExpectError: re}},
	})
}

// runValidationCases runs each case as a plan-only step, with the CLIs that
// pass checks; none needs an agent.
func runValidationCases(t *testing.T, cases []validationCase, checks ...tfversion.TerraformVersionCheck) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			testPlanFails(t, tc.config, messageRE("attribute "+tc.path, tc.detail), checks...)
		})
	}
}

func TestAccPipelineValidation(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.ddl")
	topics := `topics = ["events"]`
	withValue := func(transformer string) string { return topics + "\n value_transformer = " + transformer }
	jsonSchema := func(ddl string) string {
		return `{ format = "JSON", json_options = { schema = ` + hclString(ddl) + ` } }`
	}
	one := func(kafka, extra string) string { return pipelineHCL(nil, tableHCL("events", kafka, extra)) }
	avro := func(options string) string { return `{ format = "AVRO", avro_options = { ` + options + ` } }` }
	protobuf := func(options string) string { return `{ format = "PROTOBUF", protobuf_options = { ` + options + ` } }` }
	registry := `{ confluent_options = { subject = "events-value" } }`
	missingAvsc := filepath.Join(t.TempDir(), "missing.avsc")
	missingDesc := filepath.Join(t.TempDir(), "missing.desc")
	examples, err := filepath.Abs("../examples/resources/tributary_pipeline")
	if err != nil {
		t.Fatal(err)
	}
	avsc, desc := filepath.Join(examples, "click.avsc"), filepath.Join(examples, "page_view.desc")
	schemaDir := t.TempDir()
	hugeAvsc := filepath.Join(t.TempDir(), "huge.avsc")
	if err := os.WriteFile(hugeAvsc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(hugeAvsc, 4<<20+1); err != nil {
		t.Fatal(err)
	}

	runValidationCases(t, []validationCase{
		{"topics and topic_pattern", one(topics+"\n topic_pattern = \"ev.*\"", ""),
			kafkaPath + ".topics", "topics and topic_pattern are mutually exclusive; set only one of topics, topic_pattern and assign"},
		{"neither topics nor topic_pattern", one(`starting_offset = "earliest"`, ""),
			kafkaPath + ".topics", "one of topics, topic_pattern or assign is required"},
		{"invalid topic", one(`topics = ["ok", "bad topic"]`, ""),
			kafkaPath + ".topics[1]", `"bad topic" is not a valid Kafka topic name`},
		{"topic listed twice", one(`topics = ["a", "a"]`, ""),
			kafkaPath + ".topics[1]", `topic "a" is listed twice`},
		{"topic_pattern does not compile", one(`topic_pattern = "ev(ents"`, ""),
			kafkaPath + ".topic_pattern", `"ev(ents" does not compile: missing closing )`},
		{"starting_offset", one(topics+"\n starting_offset = \"middle\"", ""),
			kafkaPath + ".starting_offset", `"middle" is not one of latest, earliest`},
		{"isolation_level", one(topics+"\n isolation_level = \"committed\"", ""),
			kafkaPath + ".isolation_level", `"committed" is not one of read_committed, read_uncommitted`},
		{"unknown format", one(withValue(`{ format = "XML" }`), ""),
			kafkaPath + ".value_transformer.format", `"XML" is not one of STRING, JSON, AVRO, PROTOBUF`},
		{"json_options with STRING", one(withValue(`{ format = "STRING", json_options = { schema = "id INT" } }`), ""),
			kafkaPath + ".value_transformer.json_options", "json_options applies only to formats JSON, DEBEZIUM_JSON and CANAL_JSON"},
		{"schema and schema_file_path", one(withValue(`{ format = "JSON", json_options = { schema = "id INT", schema_file_path = "x.ddl" } }`), ""),
			valueJSON + ".schema", "schema and schema_file_path are mutually exclusive"},
		{"neither schema nor schema_file_path", one(withValue(`{ format = "JSON", json_options = {} }`), ""),
			valueJSON + ".schema", "one of schema, schema_file_path or schema_evolution_mode is required"},
		{"schema_file_path unreadable", one(withValue(`{ format = "JSON", json_options = { schema_file_path = `+hclString(missing)+` } }`), ""),
			valueJSON + ".schema_file_path", "cannot read the schema file"},
		{"schema_file_path a directory", one(withValue(`{ format = "JSON", json_options = { schema_file_path = `+hclString(schemaDir)+` } }`), ""),
			valueJSON + ".schema_file_path", "cannot read the schema file " + schemaDir + ": it is a directory, not a regular file; give the path of a file"},
		{"ddl does not parse", one(withValue(jsonSchema("id BIGINT,\n  user STRNG")), ""),
			valueJSON + ".schema", "the schema is not valid Spark DDL: line 2, column 8:"},
		{"timestamp_format letter", one(withValue(`{ format = "JSON", json_options = { schema = "ts TIMESTAMP", timestamp_format = "yyyy-MM-dd EEE" } }`), ""),
			valueJSON + ".timestamp_format", `"yyyy-MM-dd EEE" is not a supported Spark datetime pattern: "EEE" at position 12: unsupported pattern letter`},
		{"timestamp_format optional section", one(withValue(`{ format = "JSON", json_options = { schema = "ts TIMESTAMP", timestamp_format = "yyyy-MM-dd[ HH:mm]" } }`), ""),
			valueJSON + ".timestamp_format", "optional sections and reserved characters are not supported"},
		{"date_format quote", one(withValue(`{ format = "JSON", json_options = { schema = "d DATE", date_format = "yyyy 'y" } }`), ""),
			valueJSON + ".date_format", "unterminated quote at position 6"},
		// Avro and Protobuf (agent/spec/formats.go).
		{"avro without avro_options", one(topics+"\n key_transformer = { format = \"AVRO\" }", ""),
			kafkaPath + ".key_transformer.avro_options", "format AVRO needs avro_options with one of schema, schema_file_path or schema_registry"},
		{"protobuf without protobuf_options", one(withValue(`{ format = "PROTOBUF" }`), ""),
			valueProtobuf, "format PROTOBUF needs protobuf_options with desc_file_path and message_name, or schema_registry"},
		{"avro_options with JSON", one(withValue(`{ format = "JSON", json_options = { schema = "id INT" }, avro_options = { schema = "\"long\"" } }`), ""),
			valueAvro, "avro_options applies only to format AVRO; this transformer's format is JSON"},
		{"protobuf_options with AVRO", one(withValue(`{ format = "AVRO", avro_options = { schema = "\"long\"" }, protobuf_options = { desc_file_path = "x.desc", message_name = "X" } }`), ""),
			valueProtobuf, "protobuf_options applies only to format PROTOBUF; this transformer's format is AVRO"},
		{"json_options with PROTOBUF", one(withValue(`{ format = "PROTOBUF", protobuf_options = { schema_registry = { confluent_options = { subject = "s" } } }, json_options = { schema = "id INT" } }`), ""),
			kafkaPath + ".value_transformer.json_options", "json_options applies only to formats JSON, DEBEZIUM_JSON and CANAL_JSON; this transformer's format is PROTOBUF"},
		{"avro schema and schema_registry", one(withValue(avro(`schema = "\"long\"", schema_registry = `+registry)), ""),
			valueAvro + ".schema_registry", "schema and schema_registry are mutually exclusive; set only one of schema, schema_file_path and schema_registry"},
		{"avro schema and schema_file_path", one(withValue(avro(`schema = "\"long\"", schema_file_path = `+hclString(avsc))), ""),
			valueAvro + ".schema_file_path", "schema and schema_file_path are mutually exclusive"},
		{"avro without a schema", one(withValue(avro(`parse_mode = "FAILFAST"`)), ""),
			valueAvro + ".schema", "one of schema, schema_file_path or schema_registry is required"},
		{"avro schema_file_path unreadable", one(withValue(avro(`schema_file_path = `+hclString(missingAvsc))), ""),
			valueAvro + ".schema_file_path", "cannot read the schema file " + missingAvsc},
		{"avro schema_file_path too large", one(withValue(avro(`schema_file_path = `+hclString(hugeAvsc))), ""),
			valueAvro + ".schema_file_path", "cannot read the schema file " + hugeAvsc + ": it is larger than 4 MiB, the most the provider reads"},
		{"avro parse_mode", one(withValue(avro(`schema = "\"long\"", parse_mode = "STRICT"`)), ""),
			valueAvro + ".parse_mode", `"STRICT" is not one of PERMISSIVE, FAILFAST`},
		{"avro parse_mode lower case", one(withValue(avro(`schema = "\"long\"", parse_mode = "failfast"`)), ""),
			valueAvro + ".parse_mode", `"failfast" is not one of PERMISSIVE, FAILFAST; modes are upper case: "FAILFAST"`},
		{"avro subject empty", one(withValue(avro(`schema_registry = { confluent_options = { subject = "" } }`)), ""),
			valueAvro + ".schema_registry.confluent_options.subject", `the subject is required, e.g. "orders-value"`},
		{"avro subject unusable", one(withValue(avro(`schema_registry = { confluent_options = { subject = "a/b" } }`)), ""),
			valueAvro + ".schema_registry.confluent_options.subject", `"a/b" is not a usable subject name`},
		{"avro registry connection_name", one(withValue(avro(`schema_registry = { confluent_options = { subject = "s" }, connection_name = "-c" }`)), ""),
			valueAvro + ".schema_registry.connection_name", `"-c" is not a valid name`},
		{"protobuf desc_file_path and schema_registry", one(withValue(protobuf(`desc_file_path = `+hclString(desc)+`, message_name = "X", schema_registry = `+registry)), ""),
			valueProtobuf + ".schema_registry", "desc_file_path and schema_registry are mutually exclusive; set only one of them"},
		{"protobuf without a schema", one(withValue(protobuf(`message_name = "X"`)), ""),
			valueProtobuf + ".desc_file_path", "one of desc_file_path (with message_name) or schema_registry is required"},
		{"protobuf desc_file_path without message_name", one(withValue(protobuf(`desc_file_path = `+hclString(desc))), ""),
			valueProtobuf + ".message_name", "message_name is required with desc_file_path"},
		{"protobuf message_name with schema_registry", one(withValue(protobuf(`message_name = "X", schema_registry = `+registry)), ""),
			valueProtobuf + ".message_name", "message_name goes with desc_file_path; with schema_registry set schema_registry.protobuf_message_name instead"},
		{"protobuf desc_file_path unreadable", one(withValue(protobuf(`desc_file_path = `+hclString(missingDesc)+`, message_name = "X"`)), ""),
			valueProtobuf + ".desc_file_path", "cannot read the descriptor set file " + missingDesc},
		{"protobuf depth too large with desc_file_path unreadable", one(withValue(protobuf(`desc_file_path = `+hclString(missingDesc)+`, message_name = "X", recursive_fields_max_depth = 11`)), ""),
			valueProtobuf + ".recursive_fields_max_depth", "11 is more than the maximum of 10"},
		{"protobuf depth too small", one(withValue(protobuf(`schema_registry = `+registry+`, recursive_fields_max_depth = -2`)), ""),
			valueProtobuf + ".recursive_fields_max_depth", "-2 is less than the minimum of -1"},
		{"protobuf depth too large", one(withValue(protobuf(`schema_registry = `+registry+`, recursive_fields_max_depth = 11`)), ""),
			valueProtobuf + ".recursive_fields_max_depth", "11 is more than the maximum of 10"},
		{"protobuf parse_mode", one(withValue(protobuf(`schema_registry = `+registry+`, parse_mode = "DROPMALFORMED"`)), ""),
			valueProtobuf + ".parse_mode", `"DROPMALFORMED" is not one of PERMISSIVE, FAILFAST`},
		{"protobuf subject empty", one(withValue(protobuf(`schema_registry = { confluent_options = { subject = " s" }, protobuf_message_name = "X" }`)), ""),
			valueProtobuf + ".schema_registry.confluent_options.subject", `" s" is not a usable subject name`},
		{"source_metadata_column key", one(topics, `table_configuration = { source_metadata_column = "key" }`),
			"table[0].table_configuration.source_metadata_column", `the source metadata column must not be named "key"`},
		{"source_metadata_column value", one(topics, `table_configuration = { source_metadata_column = "VALUE" }`),
			"table[0].table_configuration.source_metadata_column", `the source metadata column must not be named "VALUE"`},
		{"metadata column collides with a value field", one(withValue(jsonSchema("id BIGINT, _kafka STRING")), `table_configuration = { source_metadata_column = "_kafka" }`),
			"table[0].table_configuration.source_metadata_column",
			`column "_kafka" (the source metadata column) collides with the column of the same name from the value schema`},
		{"key field collides with a value field", one(withValue(jsonSchema("id BIGINT"))+"\n key_transformer = "+jsonSchema("ID STRING"), ""),
			valueJSON + ".schema", `column "id" from the value schema collides with the column of the same name from the key schema`},
		{"reserved _corrupt_record", one(withValue(jsonSchema("_corrupt_record STRING")), ""),
			valueJSON + ".schema", `column "_corrupt_record" is reserved`},
		{"invalid catalog", pipelineHCL(map[string]string{"destination_catalog": `"1main"`}, tableHCL("events", topics, "")),
			"destination_catalog", `"1main" is not a valid identifier`},
		{"invalid schema", pipelineHCL(map[string]string{"destination_schema": `"de-mo"`}, tableHCL("events", topics, "")),
			"destination_schema", `"de-mo" is not a valid identifier`},
		{"invalid table", pipelineHCL(nil, tableHCL("my table", topics, "")),
			"table[0].destination_table", `"my table" is not a valid identifier`},
		{"duplicate tables", pipelineHCL(nil, tableHCL("events", topics, ""), tableHCL("Events", `topics = ["other"]`, "")),
			"table[1].destination_table", `table "Events" is already declared by table[0]`},
		{"flush_interval not a duration", pipelineHCL(map[string]string{"flush_interval": `"5 seconds"`}, tableHCL("events", topics, "")),
			"flush_interval", `"5 seconds" is not a duration`},
		{"target_file_size_mb zero", pipelineHCL(map[string]string{"target_file_size_mb": `0`}, tableHCL("events", topics, "")),
			"target_file_size_mb", "0 is less than the minimum of 1"},
		{"max_rows_per_file too large", pipelineHCL(map[string]string{"max_rows_per_file": `2000000000000`}, tableHCL("events", topics, "")),
			"max_rows_per_file", "is more than the maximum"},
		{"auto_compact_min_files one", pipelineHCL(map[string]string{"auto_compact_min_files": `1`}, tableHCL("events", topics, "")),
			"auto_compact_min_files", "1 is less than the minimum of 2"},
		{"flush_interval too short", pipelineHCL(map[string]string{"flush_interval": `"10ms"`}, tableHCL("events", topics, "")),
			"flush_interval", "10ms is shorter than the minimum of 100ms"},
		{"invalid pipeline name", pipelineHCL(map[string]string{"name": `"-p"`}, tableHCL("events", topics, "")),
			"name", `"-p" is not a valid name`},
		{"invalid connection name", pipelineHCL(map[string]string{"connection_name": `"-c"`}, tableHCL("events", topics, "")),
			"connection_name", `"-c" is not a valid name`},
		{"target_file_size_mb negative", pipelineHCL(map[string]string{"target_file_size_mb": `-1`}, tableHCL("events", topics, "")),
			"target_file_size_mb", "-1 is less than the minimum of 1"},
		{"storage_location with query parameters", pipelineHCL(map[string]string{"storage_location": `"s3://lake/raw?endpoint=http://minio:9000"`}, tableHCL("events", topics, "")),
			"storage_location", `"s3://lake/raw?endpoint=http://minio:9000" has query parameters: options of the object store driver ` +
				`(endpoint, region) belong to the agent's --warehouse or --warehouse-allow root, not to the pipeline`},
		{"storage_location with an unknown scheme", pipelineHCL(map[string]string{"storage_location": `"hdfs://namenode/lake"`}, tableHCL("events", topics, "")),
			"storage_location", `"hdfs://namenode/lake" has scheme "hdfs"; use an absolute path or a URL with scheme file, s3, gs, azblob, abfss`},
		{"storage_location relative", pipelineHCL(map[string]string{"storage_location": `"lake/raw"`}, tableHCL("events", topics, "")),
			"storage_location", `"lake/raw" is not an absolute path`},
	})
}

func TestAccConnectionValidation(t *testing.T) {
	conn := func(name, servers string) string {
		return `resource "tributary_connection" "c" {
  name              = ` + hclString(name) + `
  bootstrap_servers = ` + servers + `
}
`
	}
	withRegistry := func(registry string) string {
		return `resource "tributary_connection" "c" {
  name              = "c1"
  bootstrap_servers = ["a:9092"]
  schema_registry   = { ` + registry + ` }
}
`
	}
	runValidationCases(t, []validationCase{
		{"no port", conn("c1", `["localhost"]`), "bootstrap_servers[0]", `"localhost" is not a host:port address`},
		{"bad port", conn("c1", `["a:9092", "b:0"]`), "bootstrap_servers[1]", `"b:0" has port "0"; a port is a number from 1 to 65535`},
		{"no servers", conn("c1", `[]`), "bootstrap_servers", "at least one bootstrap server is required"},
		{"invalid name", conn("c 1", `["a:9092"]`), "name", `"c 1" is not a valid name`},
		{"registry url empty", withRegistry(`url = ""`), "schema_registry.url", "the registry URL is required"},
		{"registry url scheme", withRegistry(`url = "ftp://registry"`), "schema_registry.url", `"ftp://registry" is not an http or https URL`},
		{"registry url credentials", withRegistry(`url = "https://u:p@registry"`), "schema_registry.url",
			"the URL carries credentials; set api_key and api_secret instead"},
		{"registry url query", withRegistry(`url = "https://registry/?x=1"`), "schema_registry.url", "the URL must not have a query or fragment"},
		{"registry key without secret", withRegistry(`url = "https://registry", api_key = "k"`), "schema_registry.api_secret",
			"api_key is set without api_secret; set both or neither"},
		{"registry secret without key", withRegistry(`url = "https://registry", api_secret = "s"`), "schema_registry.api_key",
			"api_secret is set without api_key; set both or neither"},
		{"registry key with a colon", withRegistry(`url = "https://registry", api_key = "a:b", api_secret = "s"`), "schema_registry.api_key",
			"the API key must not contain ':' or line breaks"},
	})
}

// TestAccValidationSkipsUnknown plans values that are only known after
// apply: the rules that read them must not fire at plan time.
func TestAccValidationSkipsUnknown(t *testing.T) {
	testPlans(t, `
resource "terraform_data" "later" {
  input = "x"
}
resource "tributary_connection" "c" {
  name              = "c1"
  bootstrap_servers = [terraform_data.later.output]
  schema_registry = {
    url        = terraform_data.later.output
    api_key    = terraform_data.later.output
    api_secret = "s"
  }
}
`+pipelineHCL(map[string]string{
		"connection_name":    "tributary_connection.c.name",
		"destination_schema": "terraform_data.later.output",
		"storage_location":   "terraform_data.later.output",
	}, tableHCL("events", `
        topics = [terraform_data.later.output]
        value_transformer = {
          format       = "JSON"
          json_options = { schema = terraform_data.later.output }
        }`, `table_configuration = { source_metadata_column = terraform_data.later.output }`),
		tableHCL("avro", `
        topics = ["avro"]
        key_transformer = {
          format       = "AVRO"
          avro_options = { schema_registry = { confluent_options = { subject = terraform_data.later.output } } }
        }
        value_transformer = {
          format       = "AVRO"
          avro_options = { schema_file_path = terraform_data.later.output, parse_mode = terraform_data.later.output }
        }`, ""),
		tableHCL("protobuf", `
        topics = ["protobuf"]
        value_transformer = {
          format           = "PROTOBUF"
          protobuf_options = { desc_file_path = terraform_data.later.output, message_name = "X" }
        }`, "")))
}

// TestAccValidationReportsAllProblems checks that every problem of a
// configuration is reported, each on its own attribute.
func TestAccValidationReportsAllProblems(t *testing.T) {
	both := regexp.MustCompile(`(?s)attribute destination_catalog.*attribute ` + regexp.QuoteMeta(kafkaPath+".topic_pattern"))
	testPlanFails(t, pipelineHCL(map[string]string{"destination_catalog": `"1x"`},
		tableHCL("events", `topic_pattern = "("`, "")), both)
}
