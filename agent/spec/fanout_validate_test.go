package spec

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/expr"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// validFanout returns a fanout schema that passes Validate; cases mutate it.
func validFanout() *FanoutSchema {
	f := &FanoutSchema{
		Name: "f1", Pipeline: "p1", DestinationCatalog: "main", DestinationSchema: "events",
		ConnectorOptions: ConnectorOptions{KafkaOptions: KafkaOptions{Topics: []string{"events"}}},
		FanoutOptions: FanoutOptions{
			FanoutBy:   "cast(value AS STRING):event_type::string",
			Transforms: []FanoutTransform{{InputColumn: ValueColumn}},
		},
		TableConfiguration: TableConfiguration{SourceMetadataColumn: "_kafka"},
	}
	f.Normalize()
	return f
}

// fanoutCase is one case of TestFanoutValidate: mutate makes validFanout
// fail with a problem at path whose detail contains detail.
type fanoutCase struct {
	name   string
	mutate func(f *FanoutSchema)
	path   string // "" means valid
	detail string
}

func TestFanoutValidate(t *testing.T) {
	const (
		kp = "connector_options.kafka_options."
		fp = "fanout_options."
		tp = "fanout_options.transforms[0]."
	)
	tr := func(f *FanoutSchema) *FanoutTransform { return &f.FanoutOptions.Transforms[0] }
	tests := []fanoutCase{
		{name: "valid", mutate: func(*FanoutSchema) {}},
		{name: "valid with table_id_fields", mutate: func(f *FanoutSchema) {
			f.FanoutOptions.FanoutBy, f.FanoutOptions.TableIDFields = "", []string{"type", "it's"}
		}},
		{name: "valid with typed columns and a key transformer", mutate: func(f *FanoutSchema) {
			tr(f).JSONOptions = &JSONOptions{Schema: "id BIGINT, event_type STRING"}
			f.ConnectorOptions.KafkaOptions.KeyTransformer = &Transformer{Format: FormatString}
		}},
		{name: "valid without transforms", mutate: func(f *FanoutSchema) { f.FanoutOptions.Transforms = nil }},
		{name: "name", mutate: func(f *FanoutSchema) { f.Name = "-f" }, path: "name", detail: "not a valid name"},
		{name: "pipeline required", mutate: func(f *FanoutSchema) { f.Pipeline = "" }, path: "pipeline_name", detail: "required"},
		{name: "pipeline name", mutate: func(f *FanoutSchema) { f.Pipeline = "a b" }, path: "pipeline_name", detail: "not a valid name"},
		{name: "catalog", mutate: func(f *FanoutSchema) { f.DestinationCatalog = "1main" }, path: "destination_catalog", detail: "not a valid identifier"},
		{name: "schema", mutate: func(f *FanoutSchema) { f.DestinationSchema = "a.b" }, path: "destination_schema", detail: "not a valid identifier"},
		{name: "no topics", mutate: func(f *FanoutSchema) { f.ConnectorOptions.KafkaOptions.Topics = nil }, path: kp + "topics", detail: "one of topics, topic_pattern or assign is required"},
		{name: "starting offset", mutate: func(f *FanoutSchema) { f.ConnectorOptions.KafkaOptions.StartingOffset = "newest" }, path: kp + "starting_offset", detail: "not one of"},
		{name: "key transformer format", mutate: func(f *FanoutSchema) {
			f.ConnectorOptions.KafkaOptions.KeyTransformer = &Transformer{Format: "XML"}
		}, path: kp + "key_transformer.format", detail: "not one of"},
		{name: "fanout_by and table_id_fields", mutate: func(f *FanoutSchema) { f.FanoutOptions.TableIDFields = []string{"type"} },
			path: fp + "fanout_by", detail: "mutually exclusive"},
		{name: "valid without a route: the topic names the table", mutate: func(f *FanoutSchema) { f.FanoutOptions.FanoutBy = "" }},
		{name: "empty field", mutate: func(f *FanoutSchema) {
			f.FanoutOptions.FanoutBy, f.FanoutOptions.TableIDFields = "", []string{""}
		}, path: fp + "table_id_fields[0]", detail: "a field name is required"},
		{name: "field twice", mutate: func(f *FanoutSchema) {
			f.FanoutOptions.FanoutBy, f.FanoutOptions.TableIDFields = "", []string{"a", "b", "a"}
		}, path: fp + "table_id_fields[2]", detail: "already listed as table_id_fields[0]"},
		{name: "syntax error", mutate: func(f *FanoutSchema) { f.FanoutOptions.FanoutBy = "topic ||" },
			path: fp + "fanout_by", detail: "^"},
		{name: "unknown column", mutate: func(f *FanoutSchema) { f.FanoutOptions.FanoutBy = "nope || 'x'" },
			path: fp + "fanout_by", detail: "unknown column nope"},
		{name: "INT result", mutate: func(f *FanoutSchema) { f.FanoutOptions.FanoutBy = "partition" },
			path: fp + "fanout_by", detail: "fanout_by returns INT; the table name is a STRING: cast it"},
		{name: "BINARY result", mutate: func(f *FanoutSchema) { f.FanoutOptions.FanoutBy = "value" },
			path: fp + "fanout_by", detail: "fanout_by returns BINARY"},
		{name: "valid string result", mutate: func(f *FanoutSchema) { f.FanoutOptions.FanoutBy = "topic || '_' || cast(partition AS STRING)" }},
		{name: "two transforms", mutate: func(f *FanoutSchema) {
			f.FanoutOptions.Transforms = append(f.FanoutOptions.Transforms, FanoutTransform{Format: FormatJSON, InputColumn: KeyColumn})
		}, path: fp + "transforms", detail: "at most one"},
		{name: "AVRO transform", mutate: func(f *FanoutSchema) { tr(f).Format = FormatAvro }, path: tp + "format", detail: "format AVRO is not supported for fanout transforms: only JSON is"},
		{name: "STRING transform", mutate: func(f *FanoutSchema) { tr(f).Format = FormatString }, path: tp + "format", detail: "only JSON"},
		{name: "lower-case json", mutate: func(f *FanoutSchema) { tr(f).Format = "json" }, path: tp + "format", detail: `upper case: "JSON"`},
		{name: "unknown format", mutate: func(f *FanoutSchema) { tr(f).Format = "XML" }, path: tp + "format", detail: `"XML" is not a format`},
		{name: "no input column", mutate: func(f *FanoutSchema) { tr(f).InputColumn = "" }, path: tp + "input_column", detail: "input_column is required"},
		{name: "other input column", mutate: func(f *FanoutSchema) { tr(f).InputColumn = "headers" }, path: tp + "input_column", detail: `"headers" is not key or value`},
		{name: "transform and value transformer", mutate: func(f *FanoutSchema) {
			f.ConnectorOptions.KafkaOptions.ValueTransformer = &Transformer{Format: FormatString}
		}, path: tp + "input_column", detail: "kafka_options.value_transformer is set too"},
		{name: "transform and key transformer", mutate: func(f *FanoutSchema) {
			tr(f).InputColumn = KeyColumn
			f.ConnectorOptions.KafkaOptions.KeyTransformer = &Transformer{Format: FormatString}
		}, path: tp + "input_column", detail: "kafka_options.key_transformer is set too"},
		{name: "json options exclusive", mutate: func(f *FanoutSchema) {
			tr(f).JSONOptions = &JSONOptions{Schema: "a INT", SchemaEvolutionMode: SchemaEvolutionRescue}
		}, path: tp + "json_options.schema", detail: "mutually exclusive"},
		{name: "bad ddl", mutate: func(f *FanoutSchema) { tr(f).JSONOptions = &JSONOptions{Schema: "id BIGINTT"} },
			path: tp + "json_options.schema", detail: "not valid Spark DDL"},
		{name: "field collides with metadata", mutate: func(f *FanoutSchema) { tr(f).JSONOptions = &JSONOptions{Schema: "_KAFKA INT"} },
			path: "table_configuration.source_metadata_column", detail: "collides"},
		{name: "metadata named value", mutate: func(f *FanoutSchema) { f.TableConfiguration.SourceMetadataColumn = "value" },
			path: "table_configuration.source_metadata_column", detail: "must not be named"},
		{name: "on_invalid_route", mutate: func(f *FanoutSchema) { f.FanoutOptions.OnInvalidRoute = "SKIP" },
			path: fp + "on_invalid_route", detail: `"SKIP" is not one of FAIL, DEAD_LETTER`},
		{name: "dead letter", mutate: func(f *FanoutSchema) { f.FanoutOptions.OnInvalidRoute = OnInvalidRouteDeadLetter }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := validFanout()
			tt.mutate(f)
			wantProblem(t, f.Validate(), tt.path, tt.detail)
		})
	}
}

// TestFanoutParseErrorDetail: the detail of a fanout_by that does not
// parse is the expression's error, with the source and a caret under the
// position.
func TestFanoutParseErrorDetail(t *testing.T) {
	f := validFanout()
	f.FanoutOptions.FanoutBy = "topic ||"
	_, want := expr.Compile(f.FanoutOptions.FanoutBy)
	errs := f.Validate()
	if len(errs) != 1 || errs[0].Detail != want.Error() || !strings.Contains(errs[0].Detail, "\n  topic ||\n") {
		t.Fatalf("got %v, want one problem whose detail is %q", errs, want)
	}
}

func TestFanoutNormalize(t *testing.T) {
	f := &FanoutSchema{FanoutOptions: FanoutOptions{Transforms: []FanoutTransform{{InputColumn: ValueColumn,
		JSONOptions: &JSONOptions{SchemaEvolutionMode: SchemaEvolutionRescue}}}}}
	f.Normalize()
	ko := f.ConnectorOptions.KafkaOptions
	tr := f.FanoutOptions.Transforms[0]
	if ko.StartingOffset != DefaultStartingOffset || ko.IsolationLevel != DefaultIsolationLevel || tr.Format != FormatJSON ||
		f.FanoutOptions.OnInvalidRoute != OnInvalidRouteFail || tr.JSONOptions.InferRecordsPerPartition == nil {
		t.Fatalf("not normalized: %+v", f)
	}
}

func TestFanoutWarnings(t *testing.T) {
	f := validFanout()
	if w := f.Warnings(); len(w) != 0 {
		t.Fatalf("warnings %v, want none", w)
	}
	f.FanoutOptions.Transforms[0].OutputColumn = "parsed"
	w := f.Warnings()
	if len(w) != 1 || w[0].Path != "fanout_options.transforms[0].output_column" || !strings.Contains(w[0].Detail, `"parsed" is ignored`) {
		t.Fatalf("warnings %v, want one on output_column", w)
	}
	if errs := f.Validate(); len(errs) != 0 {
		t.Fatalf("output_column is an error: %v", errs)
	}
}

func TestFanoutRouteExpression(t *testing.T) {
	f := validFanout()
	if got := f.RouteExpression(); got != f.FanoutOptions.FanoutBy {
		t.Fatalf("RouteExpression = %q, want fanout_by", got)
	}
	f.FanoutOptions.FanoutBy, f.FanoutOptions.TableIDFields = "", []string{"type", `it's \ here`}
	want := `cast(value AS STRING):['type'] || '_' || cast(value AS STRING):['it\'s \\ here']`
	if got := f.RouteExpression(); got != want {
		t.Fatalf("RouteExpression = %s, want %s", got, want)
	}
}

// TestFanoutTopicRoute checks the default route of a fanout schema whose
// value is not a changelog format: each record goes to the table of its
// topic, lower case, with '.' and '-' made '_'; a topic of digits only
// has no valid name.
func TestFanoutTopicRoute(t *testing.T) {
	for _, value := range []*Transformer{nil, {Format: FormatJSON}, {Format: FormatString}} {
		f := validFanout()
		f.FanoutOptions.FanoutBy = ""
		f.ConnectorOptions.KafkaOptions.ValueTransformer = value
		if got := f.RouteExpression(); got != RouteByTopic {
			t.Fatalf("value %+v: RouteExpression = %q, want the topic route", value, got)
		}
	}
	prog, err := expr.Compile(RouteByTopic)
	if err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]string{
		"events":          "events",
		"Orders.v1":       "orders_v1",
		"app-clicks.2024": "app_clicks_2024",
		"2024":            "", // all digits: an invalid route
	} {
		got, null, err := prog.EvalString(&record.Record{Topic: topic})
		if err != nil || null {
			t.Fatalf("topic %q: route %q, null %v, err %v", topic, got, null, err)
		}
		if valid := CheckRoutedName(got) == nil; got != want && (want != "" || valid) {
			t.Errorf("topic %q: route %q, want %q", topic, got, want)
		}
	}
}

func TestFanoutTableSpec(t *testing.T) {
	f := validFanout()
	f.ConnectorOptions.KafkaOptions.KeyTransformer = &Transformer{Format: FormatString}
	tests := []struct {
		name string
		jo   *JSONOptions
		want string
	}{
		{"variant", nil, "key STRING, value VARIANT, _kafka " + MetadataType.String() + ", _corrupt_record BINARY"},
		{"typed", &JSONOptions{Schema: "id BIGINT"}, "key STRING, id BIGINT, _kafka " + MetadataType.String() + ", _corrupt_record BINARY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.FanoutOptions.Transforms[0].JSONOptions = tt.jo
			tab := f.TableSpec("orders")
			if tab.DestinationTable != "orders" || !reflect.DeepEqual(tab.TableConfiguration, f.TableConfiguration) {
				t.Fatalf("TableSpec = %+v", tab)
			}
			l, errs := tab.Layout()
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if got := schema.FormatDDL(l.Columns()); got != tt.want {
				t.Fatalf("columns %s, want %s", got, tt.want)
			}
		})
	}
	if f.ConnectorOptions.KafkaOptions.ValueTransformer != nil {
		t.Fatal("TableSpec changed the fanout schema's value transformer")
	}
}

func TestCheckRoutedName(t *testing.T) {
	tests := []struct {
		name   string
		detail string // "" means valid
	}{
		{"events", ""},
		{"2024_events", ""},
		{"_x", ""},
		{"Order_Created", ""},
		{strings.Repeat("a", MaxRoutedNameLen), ""},
		{"", "is empty"},
		{"123", `"123" is all digits`},
		{"a.b", `has '.' at byte 1`},
		{"has space", `has ' ' at byte 3`},
		{"ünicode", `has 'ü' at byte 0`},
		{"a-b", `has '-'`},
		{strings.Repeat("a", MaxRoutedNameLen+1), "256 bytes long, more than the maximum of 255"},
		{"_FANOUT_ERRORS", "reserved"},
	}
	for _, tt := range tests {
		err := CheckRoutedName(tt.name)
		switch {
		case tt.detail == "" && err != nil:
			t.Errorf("CheckRoutedName(%q) = %v, want nil", tt.name, err)
		case tt.detail != "" && (err == nil || !strings.Contains(err.Error(), tt.detail)):
			t.Errorf("CheckRoutedName(%q) = %v, want an error containing %q", tt.name, err, tt.detail)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = CheckRoutedName("2024_events") }); n != 0 {
		t.Errorf("CheckRoutedName of a valid name allocates %v times", n)
	}
}

func TestFanoutClaims(t *testing.T) {
	f := validFanout()
	p := validPipeline()
	p.DestinationSchema = "EVENTS"
	errs := f.ClaimConflicts([]Pipeline{*p}, nil)
	if len(errs) != 1 || errs[0].Path != "destination_schema" || !strings.Contains(errs[0].Detail, `pipeline "p1"`) {
		t.Fatalf("got %v, want a conflict with pipeline p1", errs)
	}
	if errs := p.FanoutConflicts([]FanoutSchema{*f}); len(errs) != 1 || errs[0].Path != "table[0].destination_table" ||
		!strings.Contains(errs[0].Detail, `fanout schema "f1" owns`) {
		t.Fatalf("pipeline: got %v, want a conflict with fanout schema f1", errs)
	}
	// A pipeline without tables (the fanout schema's own) claims nothing.
	p.Tables = nil
	if errs := f.ClaimConflicts([]Pipeline{*p}, []FanoutSchema{*f}); len(errs) != 0 {
		t.Fatalf("got %v, want no conflict with a pipeline without tables nor with itself", errs)
	}
	other := validFanout()
	other.Name = "f2"
	errs = f.ClaimConflicts(nil, []FanoutSchema{*other})
	if len(errs) != 1 || !strings.Contains(errs[0].Detail, `fanout schema "f2"`) {
		t.Fatalf("got %v, want a conflict with fanout schema f2", errs)
	}
	other.DestinationCatalog = "dev"
	if errs := f.ClaimConflicts(nil, []FanoutSchema{*other}); len(errs) != 0 {
		t.Fatalf("another catalog: got %v, want none", errs)
	}
}
