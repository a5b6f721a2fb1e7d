package spec

import (
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// validPipeline returns a pipeline that passes Validate; cases mutate it.
func validPipeline() *Pipeline {
	p := &Pipeline{
		Name: "p1", Connection: "c1", DestinationCatalog: "main", DestinationSchema: "raw",
		Tables: []Table{{
			DestinationTable: "events",
			ConnectorOptions: ConnectorOptions{KafkaOptions: KafkaOptions{
				Topics: []string{"events"},
				ValueTransformer: &Transformer{Format: FormatJSON, JSONOptions: &JSONOptions{
					Schema: "id BIGINT, name STRING"}},
			}},
			TableConfiguration: TableConfiguration{SourceMetadataColumn: "_kafka"},
		}},
	}
	p.Normalize()
	return p
}

// pipelineCase is one case of TestPipelineValidate: mutate makes
// validPipeline fail with a problem at path whose detail contains detail.
type pipelineCase struct {
	name   string
	mutate func(p *Pipeline)
	path   string // "" means valid
	detail string
}

func TestPipelineValidate(t *testing.T) {
	ko := func(p *Pipeline) *KafkaOptions { return &p.Tables[0].ConnectorOptions.KafkaOptions }
	const kp = "table[0].connector_options.kafka_options."
	tests := []pipelineCase{
		{"valid", func(*Pipeline) {}, "", ""},
		{"topics and pattern", func(p *Pipeline) { ko(p).TopicPattern = "ev.*" }, kp + "topics", "mutually exclusive"},
		{"neither topics nor pattern", func(p *Pipeline) { ko(p).Topics = nil }, kp + "topics", "one of topics, topic_pattern or assign is required"},
		{"bad topic", func(p *Pipeline) { ko(p).Topics = []string{"ok", "bad topic"} }, kp + "topics[1]", "not a valid Kafka topic name"},
		{"bad pattern", func(p *Pipeline) { ko(p).Topics = nil; ko(p).TopicPattern = "ev(" }, kp + "topic_pattern", "does not compile"},
		{"starting offset", func(p *Pipeline) { ko(p).StartingOffset = "newest" }, kp + "starting_offset", "not one of latest, earliest"},
		{"isolation level", func(p *Pipeline) { ko(p).IsolationLevel = "committed" }, kp + "isolation_level", "not one of read_committed, read_uncommitted"},
		{"format", func(p *Pipeline) { ko(p).KeyTransformer = &Transformer{Format: "XML"} }, kp + "key_transformer.format", "not one of"},
		{"avro without options", func(p *Pipeline) { ko(p).KeyTransformer = &Transformer{Format: FormatAvro} }, kp + "key_transformer.avro_options", "needs avro_options"},
		{"avro two sources", func(p *Pipeline) {
			ko(p).KeyTransformer = &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{Schema: `"string"`, SchemaRegistry: registry("k")}}
		}, kp + "key_transformer.avro_options.schema_registry", "schema and schema_registry are mutually exclusive"},
		{"avro no source", func(p *Pipeline) {
			ko(p).KeyTransformer = &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{}}
		}, kp + "key_transformer.avro_options.schema", "one of schema, schema_file_path or schema_registry is required"},
		{"avro parse mode", func(p *Pipeline) {
			ko(p).KeyTransformer = &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{SchemaRegistry: registry("k"), ParseMode: "failfast"}}
		}, kp + "key_transformer.avro_options.parse_mode", `modes are upper case: "FAILFAST"`},
		{"avro subject", func(p *Pipeline) {
			ko(p).KeyTransformer = &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{SchemaRegistry: registry("")}}
		}, kp + "key_transformer.avro_options.schema_registry.confluent_options.subject", "the subject is required"},
		{"avro message name", func(p *Pipeline) {
			sr := registry("k")
			sr.ProtobufMessageName = "Event"
			ko(p).KeyTransformer = &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{SchemaRegistry: sr}}
		}, kp + "key_transformer.avro_options.schema_registry.protobuf_message_name", "only to protobuf_options"},
		{"options of another format", func(p *Pipeline) {
			ko(p).KeyTransformer = &Transformer{Format: FormatString, AvroOptions: &AvroOptions{SchemaRegistry: registry("k")}}
		}, kp + "key_transformer.avro_options", "applies only to format AVRO"},
		{"protobuf without options", func(p *Pipeline) { ko(p).KeyTransformer = &Transformer{Format: FormatProtobuf} }, kp + "key_transformer.protobuf_options", "needs protobuf_options"},
		{"protobuf no source", func(p *Pipeline) {
			ko(p).KeyTransformer = &Transformer{Format: FormatProtobuf, ProtobufOptions: &ProtobufOptions{}}
		}, kp + "key_transformer.protobuf_options.desc_file_path", "one of desc_file_path"},
		{"protobuf two sources", func(p *Pipeline) {
			ko(p).KeyTransformer = &Transformer{Format: FormatProtobuf, ProtobufOptions: &ProtobufOptions{DescFilePath: "x.desc", MessageName: "E", SchemaRegistry: registry("k")}}
		}, kp + "key_transformer.protobuf_options.schema_registry", "mutually exclusive"},
		{"protobuf message name required", func(p *Pipeline) {
			ko(p).KeyTransformer = &Transformer{Format: FormatProtobuf, ProtobufOptions: &ProtobufOptions{DescFilePath: "x.desc"}}
		}, kp + "key_transformer.protobuf_options.message_name", "message_name is required with desc_file_path"},
		{"protobuf depth", func(p *Pipeline) {
			d := int64(11)
			ko(p).KeyTransformer = &Transformer{Format: FormatProtobuf, ProtobufOptions: &ProtobufOptions{SchemaRegistry: registry("k"), RecursiveFieldsMaxDepth: &d}}
		}, kp + "key_transformer.protobuf_options.recursive_fields_max_depth", "more than the maximum of 10"},
		{"registry connection name", func(p *Pipeline) {
			sr := registry("k")
			sr.ConnectionName = "-bad"
			ko(p).KeyTransformer = &Transformer{Format: FormatProtobuf, ProtobufOptions: &ProtobufOptions{SchemaRegistry: sr}}
		}, kp + "key_transformer.protobuf_options.schema_registry.connection_name", "not a valid name"},
		{"schema and file", func(p *Pipeline) { ko(p).ValueTransformer.JSONOptions.SchemaFilePath = "x.ddl" }, kp + "value_transformer.json_options.schema", "mutually exclusive"},
		{"no schema", func(p *Pipeline) { ko(p).ValueTransformer.JSONOptions.Schema = "" }, kp + "value_transformer.json_options.schema", "one of schema, schema_file_path or schema_evolution_mode is required"},
		{"bad ddl", func(p *Pipeline) { ko(p).ValueTransformer.JSONOptions.Schema = "id BIGINTT" }, kp + "value_transformer.json_options.schema", "line 1, column 4"},
		{"bad ddl in file", func(p *Pipeline) {
			jo := ko(p).ValueTransformer.JSONOptions
			jo.Schema, jo.SchemaFilePath, jo.SchemaFileContent = "", "s.ddl", "id INT,\nname"
		}, kp + "value_transformer.json_options.schema_file_path", "line 2"},
		{"metadata named key", func(p *Pipeline) { p.Tables[0].TableConfiguration.SourceMetadataColumn = "key" }, "table[0].table_configuration.source_metadata_column", "must not be named"},
		{"metadata collides", func(p *Pipeline) { p.Tables[0].TableConfiguration.SourceMetadataColumn = "name" }, "table[0].table_configuration.source_metadata_column", "collides"},
		{"key and value collide", func(p *Pipeline) {
			ko(p).KeyTransformer = &Transformer{Format: FormatJSON, JSONOptions: &JSONOptions{Schema: "ID INT"}}
		}, kp + "value_transformer.json_options.schema", "collides"},
		{"value field named key", func(p *Pipeline) { ko(p).ValueTransformer.JSONOptions.Schema = "key STRING" }, kp + "value_transformer.json_options.schema", "collides"},
		{"reserved corrupt", func(p *Pipeline) { ko(p).ValueTransformer.JSONOptions.Schema = "_corrupt_record STRING" }, kp + "value_transformer.json_options.schema", "reserved"},
		{"any column name", func(p *Pipeline) {
			ko(p).ValueTransformer.JSONOptions.Schema = "`first name` STRING, `a.b` INT, `(cost)` DOUBLE, s STRUCT<`x;y`: INT, `=`: INT>"
		}, "", ""},
		{"same name ignoring case", func(p *Pipeline) { ko(p).ValueTransformer.JSONOptions.Schema = "`first name` STRING, `First Name` INT" }, kp + "value_transformer.json_options.schema", "twice"},
		{"catalog", func(p *Pipeline) { p.DestinationCatalog = "1main" }, "destination_catalog", "not a valid identifier"},
		{"schema", func(p *Pipeline) { p.DestinationSchema = "a.b" }, "destination_schema", "not a valid identifier"},
		{"table", func(p *Pipeline) { p.Tables[0].DestinationTable = "my table" }, "table[0].destination_table", "not a valid identifier"},
		{"duplicate table", func(p *Pipeline) { p.Tables = append(p.Tables, p.Tables[0]); p.Tables[1].DestinationTable = "EVENTS" }, "table[1].destination_table", "already declared"},
		{"no tables, for fanout schemas", func(p *Pipeline) { p.Tables = nil }, "", ""},
		{"flush interval", func(p *Pipeline) { p.FlushInterval = "5" }, "flush_interval", "not a duration"},
		{"flush interval small", func(p *Pipeline) { p.FlushInterval = "1ms" }, "flush_interval", "minimum"},
		{"file size zero", func(p *Pipeline) { p.TargetFileSizeMB = 0 }, "target_file_size_mb", "minimum of 1"},
		{"file size huge", func(p *Pipeline) { p.TargetFileSizeMB = 1 << 50 }, "target_file_size_mb", "maximum"},
		{"rows per file negative", func(p *Pipeline) { p.MaxRowsPerFile = -1 }, "max_rows_per_file", "minimum of 1"},
		{"compaction of one file", func(p *Pipeline) { p.AutoCompactMinFiles = 1 }, "auto_compact_min_files", "minimum of 2"},
		{"compaction of too many files", func(p *Pipeline) { p.AutoCompactMinFiles = 1 << 20 }, "auto_compact_min_files", "maximum"},
		{"name", func(p *Pipeline) { p.Name = "" }, "name", "not a valid name"},
		{"connection", func(p *Pipeline) { p.Connection = "" }, "connection_name", "required"},
	}
	tests = append(tests, storageLocationCases()...)
	runPipelineCases(t, tests, nil)
}

// runPipelineCases runs each case as a subtest: it mutates validPipeline,
// and Validate must then find no problem (path "") or one at path whose
// detail contains detail, which then, when not nil, checks further.
func runPipelineCases(t *testing.T, tests []pipelineCase, then func(t *testing.T, tt pipelineCase, e FieldError)) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPipeline()
			tt.mutate(p)
			errs := p.Validate()
			wantProblem(t, errs, tt.path, tt.detail)
			if then != nil && tt.path != "" {
				then(t, tt, findProblem(t, errs, tt.path, tt.detail))
			}
		})
	}
}

// wantProblem fails t unless errs is empty, when path is "", or else has
// a problem at path whose detail contains detail.
func wantProblem(t *testing.T, errs Errors, path, detail string) {
	t.Helper()
	if path == "" {
		if len(errs) > 0 {
			t.Fatalf("want valid, got %v", errs)
		}
		return
	}
	_ = findProblem(t, errs, path, detail)
}

// findProblem returns the problem of errs at path whose detail contains
// detail, failing the test if there is none.
func findProblem(t *testing.T, errs Errors, path, detail string) FieldError {
	t.Helper()
	for _, e := range errs {
		if e.Path == path && strings.Contains(e.Detail, detail) {
			return e
		}
	}
	t.Fatalf("want a problem at %s containing %q, got %v", path, detail, errs)
	return FieldError{}
}

// registry returns registry options for subject.
func registry(subject string) *SchemaRegistryOptions {
	return &SchemaRegistryOptions{ConfluentOptions: ConfluentOptions{Subject: subject}}
}

func TestConnectionValidate(t *testing.T) {
	tests := []struct {
		conn Connection
		path string
	}{
		{Connection{Name: "c", BootstrapServers: []string{"localhost:9092", "[::1]:9093"}}, ""},
		{Connection{Name: "c"}, "bootstrap_servers"},
		{Connection{Name: "c", BootstrapServers: []string{"localhost"}}, "bootstrap_servers[0]"},
		{Connection{Name: "c", BootstrapServers: []string{"a:1", "a:99999"}}, "bootstrap_servers[1]"},
		{Connection{Name: "-c", BootstrapServers: []string{"a:1"}}, "name"},
		{Connection{Name: "c", BootstrapServers: []string{"a:1"}, SchemaRegistry: &SchemaRegistry{URL: "https://r.example:8081/base"}}, ""},
		{Connection{Name: "c", BootstrapServers: []string{"a:1"}, SchemaRegistry: &SchemaRegistry{}}, "schema_registry.url"},
		{Connection{Name: "c", BootstrapServers: []string{"a:1"}, SchemaRegistry: &SchemaRegistry{URL: "ftp://r"}}, "schema_registry.url"},
		{Connection{Name: "c", BootstrapServers: []string{"a:1"}, SchemaRegistry: &SchemaRegistry{URL: "https://u:p@r"}}, "schema_registry.url"},
		{Connection{Name: "c", BootstrapServers: []string{"a:1"}, SchemaRegistry: &SchemaRegistry{URL: "key:s3cret@r:8081"}}, "schema_registry.url"},
		{Connection{Name: "c", BootstrapServers: []string{"a:1"}, SchemaRegistry: &SchemaRegistry{URL: "https://r", APIKey: "k"}}, "schema_registry.api_secret"},
		{Connection{Name: "c", BootstrapServers: []string{"a:1"}, SchemaRegistry: &SchemaRegistry{URL: "https://r", APISecret: "s"}}, "schema_registry.api_key"},
	}
	for _, tt := range tests {
		errs := tt.conn.Validate()
		if strings.Contains(errs.Error(), "s3cret") {
			t.Errorf("%+v: the problem repeats the secret: %v", tt.conn, errs)
		}
		if tt.path == "" && len(errs) > 0 || tt.path != "" && (len(errs) == 0 || errs[0].Path != tt.path) {
			t.Errorf("%+v: got %v, want a problem at %q", tt.conn, errs, tt.path)
		}
	}
}

func TestLayoutColumns(t *testing.T) {
	p := validPipeline()
	p.Tables[0].ConnectorOptions.KafkaOptions.KeyTransformer = &Transformer{Format: FormatString}
	l, errs := p.Tables[0].Layout()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var names []string
	for _, c := range l.Columns() {
		names = append(names, c.Name)
	}
	if got, want := strings.Join(names, ","), "key,id,name,_kafka,_corrupt_record"; got != want {
		t.Fatalf("columns %s, want %s", got, want)
	}
}

// TestLayoutVariant: JSON without json_options is one VARIANT column named
// after its side, with _corrupt_record for the records that do not parse.
func TestLayoutVariant(t *testing.T) {
	p := validPipeline()
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.KeyTransformer = &Transformer{Format: FormatJSON}
	ko.ValueTransformer.JSONOptions = nil
	if errs := p.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	l, errs := p.Tables[0].Layout()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got, want := schema.FormatDDL(l.Columns()), "key VARIANT, value VARIANT, _kafka "+MetadataType.String()+", _corrupt_record BINARY"; got != want {
		t.Fatalf("columns %s, want %s", got, want)
	}
}

func TestClaimConflicts(t *testing.T) {
	p := validPipeline()
	other := validPipeline()
	other.Name = "p2"
	other.Tables[0].DestinationTable = "EVENTS"
	errs := p.ClaimConflicts([]Pipeline{*p, *other})
	if len(errs) != 1 || errs[0].Path != "table[0].destination_table" || !strings.Contains(errs[0].Detail, `pipeline "p2"`) {
		t.Fatalf("got %v, want one conflict with p2 on table[0].destination_table", errs)
	}
	other.DestinationSchema = "elsewhere"
	if errs := p.ClaimConflicts([]Pipeline{*other}); len(errs) != 0 {
		t.Fatalf("tables in another schema do not conflict, got %v", errs)
	}
}

// TestValidateTrigger checks that a trigger is refused on a continuous
// pipeline, on its own attribute and involving continuous, and accepted on
// a triggered one or when it is not set.
func TestValidateTrigger(t *testing.T) {
	off, on := false, true
	for _, tt := range []struct {
		name       string
		continuous *bool
		trigger    bool
		want       bool
	}{
		{"continuous by default", nil, true, true},
		{"continuous", &on, true, true},
		{"triggered", &off, true, false},
		{"no trigger", nil, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := validPipeline()
			p.Continuous = tt.continuous
			errs := p.ValidateTrigger(tt.trigger)
			if !tt.want {
				if errs != nil {
					t.Fatalf("got %v, want no problem", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Path != "trigger" || !strings.Contains(errs[0].Detail, "trigger needs a triggered pipeline") ||
				len(errs[0].Involves) != 1 || errs[0].Involves[0] != "continuous" {
				t.Fatalf("got %#v, want one problem on trigger involving continuous", errs)
			}
		})
	}
}
