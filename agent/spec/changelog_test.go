package spec

import (
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/expr"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// TestIssue13Validate covers the rules of the attributes of changelog
// formats, prefixes, duplicate fields, metadata columns, the error budget
// and the JSON options of issue 13, each on its attribute path.
func TestIssue13Validate(t *testing.T) {
	ko := func(p *Pipeline) *KafkaOptions { return &p.Tables[0].ConnectorOptions.KafkaOptions }
	value := func(p *Pipeline) *Transformer { return ko(p).ValueTransformer }
	debezium := func(p *Pipeline) { ko(p).ValueTransformer = &Transformer{Format: FormatDebeziumJSON} }
	canal := func(p *Pipeline, co *CanalOptions) {
		ko(p).ValueTransformer = &Transformer{Format: FormatCanalJSON, CanalOptions: co}
	}
	keyJSON := func(p *Pipeline, ddl string) {
		ko(p).KeyTransformer = &Transformer{Format: FormatJSON, JSONOptions: &JSONOptions{Schema: ddl}}
	}
	const (
		kp = "table[0].connector_options.kafka_options."
		vp = kp + "value_transformer."
		tc = "table[0].table_configuration."
	)
	tests := []pipelineCase{
		// Changelog formats.
		{"debezium", debezium, "", ""},
		{"canal", func(p *Pipeline) { canal(p, &CanalOptions{DatabaseInclude: "inv.*", TableInclude: "products|orders"}) }, "", ""},
		{"debezium with a fixed schema", func(p *Pipeline) {
			debezium(p)
			value(p).JSONOptions = &JSONOptions{Schema: "id BIGINT, name STRING"}
		}, "", ""},
		{"changelog json options without a schema", func(p *Pipeline) {
			debezium(p)
			value(p).JSONOptions = &JSONOptions{SchemaHints: "id BIGINT", InferRecordsPerPartition: ptr(int64(10)),
				FlattenNestedColumns: ptr(true), EmptyValueAsDelete: ptr(true)}
		}, "", ""},
		{"Flink's format name", func(p *Pipeline) { ko(p).ValueTransformer = &Transformer{Format: "debezium-json"} },
			vp + "format", `Flink's "debezium-json" is "DEBEZIUM_JSON" here`},
		{"lower case format", func(p *Pipeline) { ko(p).ValueTransformer = &Transformer{Format: "canal_json"} },
			vp + "format", `formats are upper case: "CANAL_JSON"`},
		{"changelog key", func(p *Pipeline) { ko(p).KeyTransformer = &Transformer{Format: FormatDebeziumJSON} },
			kp + "key_transformer.format", "format DEBEZIUM_JSON applies only to value_transformer"},
		{"debezium options on canal", func(p *Pipeline) {
			canal(p, nil)
			value(p).DebeziumOptions = &DebeziumOptions{}
		}, vp + "debezium_options", "debezium_options applies only to format DEBEZIUM_JSON; this transformer's format is CANAL_JSON"},
		{"canal options on JSON", func(p *Pipeline) { value(p).CanalOptions = &CanalOptions{} },
			vp + "canal_options", "canal_options applies only to format CANAL_JSON"},
		{"json options on STRING", func(p *Pipeline) {
			ko(p).ValueTransformer = &Transformer{Format: FormatString, JSONOptions: &JSONOptions{Schema: "a INT"}}
		}, vp + "json_options", "json_options applies only to formats JSON, DEBEZIUM_JSON and CANAL_JSON"},
		{"include pattern", func(p *Pipeline) { canal(p, &CanalOptions{TableInclude: "prod("}) },
			vp + "canal_options.table_include", `"prod(" does not compile`},
		{"Java look-around", func(p *Pipeline) { canal(p, &CanalOptions{DatabaseInclude: "(?!test).*"}) },
			vp + "canal_options.database_include", "Java's look-around ((?=, (?!, (?<=, (?<!) is not supported"},
		{"strategy", func(p *Pipeline) { canal(p, &CanalOptions{InferSchemaStrategy: "sql-type"}) },
			vp + "canal_options.infer_schema_strategy", `Flink's "sql-type" is "SQL_TYPE" here`},
		{"strategy with a fixed schema", func(p *Pipeline) {
			canal(p, &CanalOptions{InferSchemaStrategy: InferSchemaMySQLType})
			value(p).JSONOptions = &JSONOptions{Schema: "id BIGINT"}
		}, vp + "canal_options.infer_schema_strategy", "types the columns from each event's mysqlType"},
		{"schema_include with a fixed schema", func(p *Pipeline) {
			debezium(p)
			value(p).DebeziumOptions = &DebeziumOptions{SchemaInclude: ptr(true)}
			value(p).JSONOptions = &JSONOptions{Schema: "id BIGINT"}
		}, vp + "debezium_options.schema_include", "json_options declares a fixed schema"},
		{"changelog with two schema sources", func(p *Pipeline) {
			debezium(p)
			value(p).JSONOptions = &JSONOptions{Schema: "id BIGINT", SchemaEvolutionMode: SchemaEvolutionRescue}
		}, vp + "json_options.schema", "mutually exclusive"},
		{"changelog beside an inferred key", func(p *Pipeline) {
			debezium(p)
			ko(p).KeyTransformer = &Transformer{Format: FormatJSON, JSONOptions: &JSONOptions{SchemaEvolutionMode: SchemaEvolutionRescue}}
		}, kp + "key_transformer.json_options.schema_evolution_mode", "only one of key and value can infer its schema"},
		{"changelog field named _op", func(p *Pipeline) {
			debezium(p)
			value(p).JSONOptions = &JSONOptions{Schema: "_op STRING"}
		}, vp + "json_options.schema", `column "_op" is reserved for the operation of changelog rows`},
		{"key field named _source", func(p *Pipeline) {
			debezium(p)
			keyJSON(p, "_SOURCE STRING")
		}, kp + "key_transformer.json_options.schema", `column "_SOURCE" is reserved for the source of changelog rows`},
		{"_op free without changelog", func(p *Pipeline) { keyJSON(p, "_op STRING") }, "", ""},

		// Prefixes and duplicate fields.
		{"key field collides", func(p *Pipeline) { keyJSON(p, "id BIGINT") }, vp + "json_options.schema",
			`column "id" from the value schema collides`},
		{"prefix separates", func(p *Pipeline) { keyJSON(p, "id BIGINT"); ko(p).KeyFieldsPrefix = "k_" }, "", ""},
		{"value prefix separates", func(p *Pipeline) { keyJSON(p, "id BIGINT"); ko(p).ValueFieldsPrefix = "v_" }, "", ""},
		{"prefix makes a collision", func(p *Pipeline) {
			keyJSON(p, "id BIGINT")
			ko(p).KeyFieldsPrefix = "n"
			value(p).JSONOptions.Schema = "nid INT"
		},
			vp + "json_options.schema", `column "nid" from the value schema collides`},
		{"prefix of the other", func(p *Pipeline) { ko(p).KeyFieldsPrefix, ko(p).ValueFieldsPrefix = "k_", "k_v_" },
			kp + "value_fields_prefix", "neither may be a prefix of the other"},
		{"same prefixes", func(p *Pipeline) { ko(p).KeyFieldsPrefix, ko(p).ValueFieldsPrefix = "x", "x" },
			kp + "value_fields_prefix", "neither may be a prefix of the other"},
		{"prefix to a reserved name", func(p *Pipeline) { ko(p).ValueFieldsPrefix = "_corrupt_"; value(p).JSONOptions.Schema = "record INT" },
			vp + "json_options.schema", `column "_corrupt_record" is reserved for records that fail to decode; rename the field`},
		{"prefer key", func(p *Pipeline) { keyJSON(p, "id BIGINT"); ko(p).DuplicateFieldStrategy = DuplicateFieldPreferKey }, "", ""},
		{"prefer value", func(p *Pipeline) { keyJSON(p, "id BIGINT"); ko(p).DuplicateFieldStrategy = DuplicateFieldPreferValue }, "", ""},
		{"prefer value over the key column", func(p *Pipeline) {
			ko(p).KeyTransformer = &Transformer{Format: FormatString}
			value(p).JSONOptions.Schema = "key STRING"
			ko(p).DuplicateFieldStrategy = DuplicateFieldPreferValue
		}, vp + "json_options.schema", `column "key" from the value schema collides with the column of the same name (key)`},
		{"strategy spelling", func(p *Pipeline) { ko(p).DuplicateFieldStrategy = "prefer-key" },
			kp + "duplicate_field_strategy", `Flink's "prefer-key" is "PREFER_KEY" here`},

		// Metadata columns.
		{"metadata columns", func(p *Pipeline) {
			p.Tables[0].TableConfiguration.MetadataColumns = MetadataColumnNames
		}, "", ""},
		{"metadata column unknown", func(p *Pipeline) { p.Tables[0].TableConfiguration.MetadataColumns = []string{"topic", "key"} },
			tc + "metadata_columns[1]", `"key" is not one of topic, partition`},
		{"metadata column spelling", func(p *Pipeline) { p.Tables[0].TableConfiguration.MetadataColumns = []string{"TOPIC"} },
			tc + "metadata_columns[0]", `metadata columns are lower case: "topic"`},
		{"metadata columns empty", func(p *Pipeline) { p.Tables[0].TableConfiguration.MetadataColumns = []string{} },
			tc + "metadata_columns", "metadata_columns is empty"},
		{"initial schemas empty", func(p *Pipeline) {
			value(p).JSONOptions = &JSONOptions{SchemaEvolutionMode: SchemaEvolutionRescue, InitialSchemas: map[string]string{}}
		}, vp + "json_options.initial_schemas", "initial_schemas is empty"},
		{"metadata column twice", func(p *Pipeline) { p.Tables[0].TableConfiguration.MetadataColumns = []string{"offset", "offset"} },
			tc + "metadata_columns[1]", `"offset" is already listed as metadata_columns[0]`},
		{"metadata column collides with a field", func(p *Pipeline) {
			value(p).JSONOptions.Schema = "topic STRING"
			p.Tables[0].TableConfiguration.MetadataColumns = []string{"topic"}
		}, tc + "metadata_columns[0]", `column "topic" (the metadata column topic) collides with the column of the same name from the value schema`},
		{"metadata column collides with the struct column", func(p *Pipeline) {
			p.Tables[0].TableConfiguration.SourceMetadataColumn = "offset"
			p.Tables[0].TableConfiguration.MetadataColumns = []string{"offset"}
		}, tc + "metadata_columns[0]", "collides with the column of the same name (the source metadata column)"},
		{"metadata column beside a prefixed field", func(p *Pipeline) {
			value(p).JSONOptions.Schema = "topic STRING"
			ko(p).ValueFieldsPrefix = "v_"
			p.Tables[0].TableConfiguration.MetadataColumns = []string{"topic"}
		}, "", ""},

		// Error budget.
		{"ignore errors", func(p *Pipeline) { ko(p).IgnoreErrors = ptr(true); ko(p).ErrorToleranceMaxCount = ptr(int64(-1)) }, "", ""},
		{"max count without ignore_errors", func(p *Pipeline) { ko(p).IgnoreErrors = ptr(false); ko(p).ErrorToleranceMaxCount = ptr(int64(5)) },
			kp + "error_tolerance_max_count", "applies only with ignore_errors = true"},
		{"max count below -1", func(p *Pipeline) { ko(p).IgnoreErrors = ptr(true); ko(p).ErrorToleranceMaxCount = ptr(int64(-2)) },
			kp + "error_tolerance_max_count", "-2 is less than the minimum of -1"},
		{"dirty records table name", func(p *Pipeline) { p.Tables[0].DestinationTable = "_Dirty_Records" },
			"table[0].destination_table", "is reserved for the records a pipeline's tables could not decode"},

		// JSON options.
		{"timestamp format SQL", func(p *Pipeline) { value(p).JSONOptions.TimestampFormat = TimestampFormatSQL }, "", ""},
		{"timestamp format ISO-8601", func(p *Pipeline) { value(p).JSONOptions.TimestampFormat = TimestampFormatISO8601 }, "", ""},
		{"date format is a pattern", func(p *Pipeline) { value(p).JSONOptions.DateFormat = TimestampFormatSQL },
			vp + "json_options.date_format", "not a supported Spark datetime pattern"},
		{"flatten without inference", func(p *Pipeline) { value(p).JSONOptions.FlattenNestedColumns = ptr(true) },
			vp + "json_options.flatten_nested_columns", "applies only to a schema inferred from the records"},
		{"flatten off without inference", func(p *Pipeline) { value(p).JSONOptions.FlattenNestedColumns = ptr(false) }, "", ""},
		{"empty value as delete on the key", func(p *Pipeline) {
			ko(p).KeyTransformer = &Transformer{Format: FormatJSON, JSONOptions: &JSONOptions{Schema: "k INT", EmptyValueAsDelete: ptr(true)}}
		}, kp + "key_transformer.json_options.empty_value_as_delete", "applies only to value_transformer"},
		{"empty value as delete", func(p *Pipeline) { value(p).JSONOptions.EmptyValueAsDelete = ptr(true) }, "", ""},
		{"initial schemas", func(p *Pipeline) {
			value(p).JSONOptions = &JSONOptions{SchemaEvolutionMode: SchemaEvolutionAddNewColumns,
				InitialSchemas: map[string]string{"EVENTS": "id BIGINT, at TIMESTAMP"}}
		}, "", ""},
		{"initial schemas of a changelog", func(p *Pipeline) {
			debezium(p)
			value(p).JSONOptions = &JSONOptions{InitialSchemas: map[string]string{"events": "id BIGINT"}}
		}, "", ""},
		{"initial schemas without inference", func(p *Pipeline) {
			value(p).JSONOptions.InitialSchemas = map[string]string{"events": "id BIGINT"}
		}, vp + "json_options.initial_schemas", "applies only to a schema inferred from the records"},
		{"initial schema DDL", func(p *Pipeline) {
			value(p).JSONOptions = &JSONOptions{SchemaEvolutionMode: SchemaEvolutionRescue, InitialSchemas: map[string]string{"events": "id BIGINTT"}}
		}, vp + "json_options.initial_schemas", `table "events": the initial schema is not valid Spark DDL`},
		{"initial schema of another table", func(p *Pipeline) {
			value(p).JSONOptions = &JSONOptions{SchemaEvolutionMode: SchemaEvolutionRescue, InitialSchemas: map[string]string{"orders": "id BIGINT"}}
		}, vp + "json_options.initial_schemas", `initial schema for table "orders": this table block writes "events"`},
	}
	runPipelineCases(t, tests, nil)
}

// TestChangelogLayout: a changelog value infers its row image (without
// json_options too), and the table has _op and _source after it, then the
// metadata columns in the order given.
func TestChangelogLayout(t *testing.T) {
	p := validPipeline()
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.KeyTransformer = &Transformer{Format: FormatJSON, JSONOptions: &JSONOptions{Schema: "id BIGINT"}}
	ko.ValueTransformer = &Transformer{Format: FormatDebeziumJSON}
	ko.KeyFieldsPrefix = "k_"
	p.Tables[0].TableConfiguration.MetadataColumns = []string{MetaOffset, MetaHeaders}
	if errs := p.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	l, errs := p.Tables[0].Layout()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if !l.Value.Inferred() || l.Value.Variant() || !l.Op || !l.Source || !l.CorruptRecord || l.Value.Rescue != RescuedDataColumn {
		t.Fatalf("layout %+v: want an inferred value with _op, _source, _corrupt_record and %s", l, RescuedDataColumn)
	}
	want := "k_id BIGINT, _op STRING, _source " + SourceType.String() + ", _kafka " + MetadataType.String() +
		", offset BIGINT, headers " + MetadataColumnType(MetaHeaders).String() + ", _rescued_data STRING, _corrupt_record BINARY"
	if got := schema.FormatDDL(l.Columns()); got != want {
		t.Fatalf("columns\n %s\nwant\n %s", got, want)
	}
}

// TestDuplicateFieldStrategy: PREFER_KEY and PREFER_VALUE drop the losing
// side's field from its Fields, so that it is neither a column nor decoded.
func TestDuplicateFieldStrategy(t *testing.T) {
	for _, tt := range []struct {
		strategy string
		want     string
	}{
		{DuplicateFieldPreferKey, "id BIGINT, k STRING, name STRING"},
		{DuplicateFieldPreferValue, "k STRING, id BIGINT, name STRING"},
	} {
		t.Run(tt.strategy, func(t *testing.T) {
			p := validPipeline()
			ko := &p.Tables[0].ConnectorOptions.KafkaOptions
			ko.KeyTransformer = &Transformer{Format: FormatJSON, JSONOptions: &JSONOptions{Schema: "id BIGINT, k STRING"}}
			ko.DuplicateFieldStrategy = tt.strategy
			p.Tables[0].TableConfiguration = TableConfiguration{}
			l, errs := p.Tables[0].Layout()
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if got := schema.FormatDDL(l.Columns()); got != tt.want+", _corrupt_record BINARY" {
				t.Fatalf("columns %s, want %s", got, tt.want)
			}
		})
	}
}

func TestChangelogNormalize(t *testing.T) {
	p := validPipeline()
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.ValueTransformer = &Transformer{Format: FormatCanalJSON, CanalOptions: &CanalOptions{}}
	ko.IgnoreErrors = ptr(true)
	p.Normalize()
	jo, co := ko.ValueTransformer.JSONOptions, ko.ValueTransformer.CanalOptions
	if jo == nil || jo.SchemaEvolutionMode != SchemaEvolutionAddNewColumnsWithTypeWidening || jo.InferRecordsPerPartition == nil {
		t.Fatalf("json_options %+v: want ADD_NEW_COLUMNS_WITH_TYPE_WIDENING (Flink's continuous) with the inference defaults", jo)
	}
	if co.InferSchemaStrategy != InferSchemaAuto || !co.TinyintAsBoolean() || !co.TimestampAsNTZ() || co.DistributedTables == nil {
		t.Fatalf("canal_options %+v not normalized", co)
	}
	if ko.DuplicateFieldStrategy != DuplicateFieldException || ko.MaxErrors() != -1 || ko.ErrorToleranceMaxCount == nil {
		t.Fatalf("kafka_options not normalized: %+v", ko)
	}
	// A changelog transformer with a fixed schema keeps it.
	ko.ValueTransformer = &Transformer{Format: FormatDebeziumJSON, JSONOptions: &JSONOptions{Schema: "id INT"}}
	p.Normalize()
	if jo := ko.ValueTransformer.JSONOptions; jo.SchemaEvolutionMode != "" || jo.Schema != "id INT" {
		t.Fatalf("json_options %+v: want the fixed schema alone", jo)
	}
	// Without ignore_errors there is no budget.
	ko.IgnoreErrors, ko.ErrorToleranceMaxCount = nil, nil
	p.Normalize()
	if ko.IgnoresErrors() || ko.ErrorToleranceMaxCount != nil {
		t.Fatalf("kafka_options %+v: want ignore_errors false and no max count", ko)
	}
	if errs := p.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
}

func TestCanalIncludes(t *testing.T) {
	db, tables, err := (&CanalOptions{DatabaseInclude: "inv.*", TableInclude: "products"}).Includes()
	if err != nil {
		t.Fatal(err)
	}
	if !db.MatchString("inventory") || db.MatchString("xinventory") || !tables.MatchString("products") || tables.MatchString("products_old") {
		t.Fatal("includes must match whole names")
	}
	if _, _, err := (&CanalOptions{TableInclude: "(?<=a)b"}).Includes(); err == nil || !strings.Contains(err.Error(), "table_include") {
		t.Fatalf("err = %v, want one naming table_include", err)
	}
	if db, tables, err := (*CanalOptions)(nil).Includes(); db != nil || tables != nil || err != nil {
		t.Fatal("nil options include everything")
	}
}

// TestChangelogRoute: a fanout schema whose value is a changelog format
// routes by db_table without fanout_by; the expression compiles, returns a
// STRING, and names the table of each event shape.
func TestChangelogRoute(t *testing.T) {
	for _, tt := range []struct {
		name string
		tr   *Transformer
		want string
	}{
		{"debezium", &Transformer{Format: FormatDebeziumJSON},
			`lower(coalesce(cast(value AS STRING):['payload']['source']['db'], cast(value AS STRING):['source']['db']) || '_' || ` +
				`coalesce(coalesce(cast(value AS STRING):['payload']['source']['schema'], cast(value AS STRING):['source']['schema']) || '_', '') || ` +
				`coalesce(cast(value AS STRING):['payload']['source']['table'], cast(value AS STRING):['source']['table']))`},
		{"debezium merge", &Transformer{Format: FormatDebeziumJSON, DebeziumOptions: &DebeziumOptions{MergeShardedTables: ptr(true)}},
			`lower(coalesce(cast(value AS STRING):['payload']['source']['table'], cast(value AS STRING):['source']['table']))`},
		{"canal", &Transformer{Format: FormatCanalJSON},
			`lower(cast(value AS STRING):['database'] || '_' || cast(value AS STRING):['table'])`},
		{"canal merge", &Transformer{Format: FormatCanalJSON, CanalOptions: &CanalOptions{MergeShardedTables: ptr(true)}},
			`lower(cast(value AS STRING):['table'])`},
		// distributed_tables has Flink's meaning: the route keeps the
		// database.
		{"canal distributed", &Transformer{Format: FormatCanalJSON,
			CanalOptions: &CanalOptions{DistributedTables: ptr(true), MergeShardedTables: ptr(false)}},
			`lower(cast(value AS STRING):['database'] || '_' || cast(value AS STRING):['table'])`},
		// A spec an earlier agent stored, when distributed_tables merged
		// shards, keeps its route (Validate refuses it from a client).
		{"stored distributed", &Transformer{Format: FormatCanalJSON, CanalOptions: &CanalOptions{DistributedTables: ptr(true)}},
			`lower(cast(value AS STRING):['table'])`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := validFanout()
			f.FanoutOptions = FanoutOptions{}
			f.ConnectorOptions.KafkaOptions.ValueTransformer = tt.tr
			f.Normalize()
			if errs := f.Validate(); len(errs) > 0 && tt.name != "stored distributed" {
				t.Fatal(errs)
			}
			got := f.RouteExpression()
			if got != tt.want {
				t.Fatalf("route\n %s\nwant\n %s", got, tt.want)
			}
			if _, err := expr.Compile(got); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestShardMergeRefused: distributed_tables = true without
// merge_sharded_tables on a fanout schema routed by its changelog format's
// default route is refused on distributed_tables, naming
// merge_sharded_tables (it merged shards before it took Flink's meaning);
// with fanout_by, in a pipeline table, or with merge_sharded_tables set it
// is accepted.
func TestShardMergeRefused(t *testing.T) {
	for _, tt := range []struct {
		opts string
		tr   *Transformer
	}{
		{"debezium_options", &Transformer{Format: FormatDebeziumJSON, DebeziumOptions: &DebeziumOptions{DistributedTables: ptr(true)}}},
		{"canal_options", &Transformer{Format: FormatCanalJSON, CanalOptions: &CanalOptions{DistributedTables: ptr(true)}}},
	} {
		tr := tt.tr
		f := validFanout()
		f.FanoutOptions = FanoutOptions{}
		f.ConnectorOptions.KafkaOptions.ValueTransformer = tr
		f.Normalize()
		wantProblem(t, f.Validate(), "connector_options.kafka_options.value_transformer."+tt.opts+".distributed_tables",
			"set merge_sharded_tables = true")
		f.FanoutOptions.FanoutBy = "cast(value AS STRING):['t']"
		if errs := f.Validate(); len(errs) > 0 {
			t.Fatalf("%s with fanout_by: %v", tt.opts, errs)
		}
		p := validPipeline()
		p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer = tr
		p.Normalize()
		if errs := p.Validate(); len(errs) > 0 {
			t.Fatalf("%s in a pipeline table: %v", tt.opts, errs)
		}
	}
}

func TestFanoutIssue13Validate(t *testing.T) {
	const tp = "fanout_options.transforms[0]."
	tests := []fanoutCase{
		{name: "metadata columns", mutate: func(f *FanoutSchema) { f.TableConfiguration.MetadataColumns = []string{MetaPartition} }},
		{name: "metadata column unknown", mutate: func(f *FanoutSchema) { f.TableConfiguration.MetadataColumns = []string{"part"} },
			path: "table_configuration.metadata_columns[0]", detail: `"part" is not one of`},
		{name: "empty value as delete on a key transform", mutate: func(f *FanoutSchema) {
			f.FanoutOptions.Transforms[0] = FanoutTransform{InputColumn: KeyColumn, JSONOptions: &JSONOptions{Schema: "k INT", EmptyValueAsDelete: ptr(true)}}
		}, path: tp + "json_options.empty_value_as_delete", detail: "applies only to a transform of the value"},
		{name: "initial schema of a routed table", mutate: func(f *FanoutSchema) {
			f.FanoutOptions.Transforms[0].JSONOptions = &JSONOptions{SchemaEvolutionMode: SchemaEvolutionAddNewColumns,
				InitialSchemas: map[string]string{"orders": "id BIGINT"}}
		}},
		{name: "initial schema of a reserved name", mutate: func(f *FanoutSchema) {
			f.FanoutOptions.Transforms[0].JSONOptions = &JSONOptions{SchemaEvolutionMode: SchemaEvolutionAddNewColumns,
				InitialSchemas: map[string]string{"_dirty_records": "id BIGINT"}}
		}, path: tp + "json_options.initial_schemas", detail: "reserved for the records that do not decode"},
		{name: "changelog initial schema", mutate: func(f *FanoutSchema) {
			f.FanoutOptions = FanoutOptions{OnInvalidRoute: OnInvalidRouteFail}
			f.ConnectorOptions.KafkaOptions.ValueTransformer = &Transformer{Format: FormatCanalJSON,
				JSONOptions: &JSONOptions{InitialSchemas: map[string]string{"inventory products": "id INT"}}}
		}, path: "connector_options.kafka_options.value_transformer.json_options.initial_schemas", detail: `has ' ' at byte 9`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := validFanout()
			tt.mutate(f)
			wantProblem(t, f.Validate(), tt.path, tt.detail)
		})
	}
	if err := CheckRoutedName("_DIRTY_records"); err == nil {
		t.Fatal("_dirty_records must not be a routed table")
	}
}

// TestDirtyRecordsClaim: two pipelines with ignore_errors cannot share a
// destination schema, whose _dirty_records each would write.
func TestDirtyRecordsClaim(t *testing.T) {
	p, other := validPipeline(), validPipeline()
	other.Name = "p2"
	other.Tables[0].DestinationTable = "orders"
	if errs := p.ClaimConflicts([]Pipeline{*other}); len(errs) != 0 {
		t.Fatalf("no ignore_errors: got %v", errs)
	}
	other.Tables[0].ConnectorOptions.KafkaOptions.IgnoreErrors = ptr(true)
	if errs := p.ClaimConflicts([]Pipeline{*other}); len(errs) != 0 {
		t.Fatalf("one pipeline with ignore_errors: got %v", errs)
	}
	p.Tables[0].ConnectorOptions.KafkaOptions.IgnoreErrors = ptr(true)
	errs := p.ClaimConflicts([]Pipeline{*p, *other})
	wantProblem(t, errs, "table[0].connector_options.kafka_options.ignore_errors", `pipeline "p2" already keeps the records its tables could not decode in main.raw._dirty_records`)
	other.DestinationSchema = "elsewhere"
	if errs := p.ClaimConflicts([]Pipeline{*other}); len(errs) != 0 {
		t.Fatalf("another schema: got %v", errs)
	}
}

func TestTimestampFormatName(t *testing.T) {
	for _, f := range []string{TimestampFormatSQL, TimestampFormatISO8601} {
		jo := &JSONOptions{TimestampFormat: f}
		if jo.TimestampPattern() != "" || jo.TimestampFormatName() != f {
			t.Fatalf("%s: pattern %q, name %q", f, jo.TimestampPattern(), jo.TimestampFormatName())
		}
	}
	if jo := (&JSONOptions{TimestampFormat: "yyyy"}); jo.TimestampFormatName() != "" || jo.TimestampPattern() != "yyyy" {
		t.Fatal("a pattern is not a name")
	}
}

func TestRowOptionsImplied(t *testing.T) {
	ko := &KafkaOptions{ValueTransformer: &Transformer{Format: FormatDebeziumJSON}}
	ko.normalize()
	if !ko.ValueTransformer.RowOptionsImplied() {
		t.Fatalf("normalized %+v: want implied", ko.ValueTransformer.JSONOptions)
	}
	ko.ValueTransformer.JSONOptions.AllowSingleQuotes = ptr(true)
	if ko.ValueTransformer.RowOptionsImplied() {
		t.Fatal("options a client set are not implied")
	}
	if (&Transformer{Format: FormatJSON, JSONOptions: &JSONOptions{}}).RowOptionsImplied() {
		t.Fatal("JSON options are never implied")
	}
}
