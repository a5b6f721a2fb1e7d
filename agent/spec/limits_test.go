package spec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// ddlColumns returns a DDL schema of n BIGINT columns.
func ddlColumns(n int) string {
	cols := make([]string, n)
	for i := range cols {
		cols[i] = fmt.Sprintf("c%d BIGINT", i)
	}
	return strings.Join(cols, ", ")
}

// topicList returns n distinct valid topic names.
func topicList(n int) []string {
	topics := make([]string, n)
	for i := range topics {
		topics[i] = fmt.Sprintf("t%d", i)
	}
	return topics
}

// No list or string of a spec grows without bound: each limit holds at
// its maximum and fails one past it, on the attribute, without checking
// the items of a list that is too long one by one.
func TestPipelineLimits(t *testing.T) {
	ko := func(p *Pipeline) *KafkaOptions { return &p.Tables[0].ConnectorOptions.KafkaOptions }
	jo := func(p *Pipeline) *JSONOptions { return ko(p).ValueTransformer.JSONOptions }
	const kp = "table[0].connector_options.kafka_options."
	tables := func(n int) func(p *Pipeline) {
		return func(p *Pipeline) {
			for i := 1; i < n; i++ {
				t := p.Tables[0]
				t.DestinationTable = fmt.Sprintf("t%d", i)
				t.ConnectorOptions.KafkaOptions.Topics = []string{fmt.Sprintf("topic%d", i)}
				p.Tables = append(p.Tables, t)
			}
		}
	}
	// A struct of 3 leaves, an array of maps of 2 and a VARIANT of 2.
	const leavesOfWide = 7
	for _, tt := range []pipelineCase{
		{"tables at the limit", tables(MaxTablesPerPipeline), "", ""},
		{"too many tables", tables(MaxTablesPerPipeline + 1), "table", "1001 items, more than the maximum of 1000"},
		{"topics at the limit", func(p *Pipeline) { ko(p).Topics = topicList(MaxTopics) }, "", ""},
		{"too many topics", func(p *Pipeline) { ko(p).Topics = append(topicList(MaxTopics), "bad topic") }, kp + "topics", "more than the maximum of 1000"},
		{"pattern at the limit", func(p *Pipeline) { ko(p).Topics, ko(p).TopicPattern = nil, strings.Repeat("a", MaxTopicPatternLen) }, "", ""},
		{"pattern too long", func(p *Pipeline) { ko(p).Topics, ko(p).TopicPattern = nil, strings.Repeat("a", MaxTopicPatternLen+1) }, kp + "topic_pattern", "1025 bytes long, more than the maximum of 1024"},
		{"location too long", func(p *Pipeline) { p.StorageLocation = "/" + strings.Repeat("a", MaxStorageLocationLen) }, "storage_location", "more than the maximum of 4096"},
		{"timestamp format too long", func(p *Pipeline) { jo(p).TimestampFormat = strings.Repeat("y", MaxShortStringLen+1) },
			kp + "value_transformer.json_options.timestamp_format", "more than the maximum of 1024"},
		{"columns at the limit", func(p *Pipeline) {
			// The table adds the key (BINARY), _kafka (7 leaves: headers
			// is an array of a 2-field struct) and _corrupt_record.
			jo(p).Schema = ddlColumns(MaxLeafColumns - 9)
		}, "", ""},
		{"too many columns", func(p *Pipeline) { jo(p).Schema = ddlColumns(MaxLeafColumns - 8) },
			kp + "value_transformer.json_options.schema", "65536 leaf columns (nested fields count one each), more than Parquet's maximum of 65535"},
		{"too many nested columns", func(p *Pipeline) {
			var b strings.Builder
			for i := range MaxLeafColumns/leavesOfWide + 1 {
				fmt.Fprintf(&b, "s%[1]d STRUCT<a: INT, b: STRING, c: ARRAY<INT>>, m%[1]d ARRAY<MAP<STRING, INT>>, v%[1]d VARIANT, ", i)
			}
			jo(p).Schema = strings.TrimSuffix(b.String(), ", ")
		}, kp + "value_transformer.json_options.schema", "more than Parquet's maximum"},
		{"key schema too wide", func(p *Pipeline) {
			ko(p).KeyTransformer = &Transformer{Format: FormatJSON, JSONOptions: &JSONOptions{Schema: ddlColumns(MaxLeafColumns)}}
		}, kp + "key_transformer.json_options.schema", "more than Parquet's maximum"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := validPipeline()
			tt.mutate(p)
			errs := p.Validate()
			wantProblem(t, errs, tt.path, tt.detail)
			if len(errs) > 1 {
				t.Fatalf("want one problem, got %d: %.500v", len(errs), errs)
			}
		})
	}
}

func TestFanoutLimits(t *testing.T) {
	for _, tt := range []fanoutCase{
		{name: "fanout_by too long", mutate: func(f *FanoutSchema) { f.FanoutOptions.FanoutBy = strings.Repeat("x", MaxFanoutByLen+1) },
			path: "fanout_options.fanout_by", detail: "more than the maximum of 4096"},
		{name: "too many table_id_fields", mutate: func(f *FanoutSchema) {
			f.FanoutOptions.FanoutBy, f.FanoutOptions.TableIDFields = "", topicList(MaxTableIDFields+1)
		}, path: "fanout_options.table_id_fields", detail: "65 items, more than the maximum of 64"},
		{name: "table_id_field too long", mutate: func(f *FanoutSchema) {
			f.FanoutOptions.FanoutBy, f.FanoutOptions.TableIDFields = "", []string{"a", strings.Repeat("b", MaxShortStringLen+1)}
		}, path: "fanout_options.table_id_fields[1]", detail: "more than the maximum of 1024"},
		{name: "too many topics", mutate: func(f *FanoutSchema) { f.ConnectorOptions.KafkaOptions.Topics = topicList(MaxTopics + 1) },
			path: "connector_options.kafka_options.topics", detail: "more than the maximum of 1000"},
		{name: "too many columns", mutate: func(f *FanoutSchema) {
			f.FanoutOptions.Transforms[0].JSONOptions = &JSONOptions{Schema: ddlColumns(MaxLeafColumns)}
		}, path: "fanout_options.transforms[0].json_options.schema", detail: "more than Parquet's maximum"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := validFanout()
			tt.mutate(f)
			wantProblem(t, f.Validate(), tt.path, tt.detail)
		})
	}
}

// A registry schema is known only when the agent resolves it: CheckColumns
// counts its leaves then.
func TestCheckColumnsWidth(t *testing.T) {
	fields, err := schema.ParseDDL(ddlColumns(MaxLeafColumns + 1))
	if err != nil {
		t.Fatal(err)
	}
	l := &Layout{Key: Part{Column: KeyColumn}, Value: Part{Format: FormatAvro, Transformer: &Transformer{Format: FormatAvro,
		AvroOptions: &AvroOptions{SchemaRegistry: registry("orders-value")}}, Fields: fields, Column: ValueColumn}}
	errs := l.CheckColumns()
	if len(errs) != 1 || errs[0].Path != "connector_options.kafka_options.value_transformer.avro_options.schema_registry" ||
		!strings.Contains(errs[0].Detail, "65537 leaf columns") { // and the key's
		t.Fatalf("CheckColumns = %v, want one problem on the registry", errs)
	}
}

func TestLeafColumns(t *testing.T) {
	fields, err := schema.ParseDDL("a INT, s STRUCT<x: STRING, y: STRUCT<z: INT>>, l ARRAY<STRUCT<p: INT, q: INT>>, m MAP<STRING, ARRAY<INT>>, v VARIANT")
	if err != nil {
		t.Fatal(err)
	}
	if n := schema.LeafColumns(fields); n != 1+2+2+2+2 {
		t.Fatalf("LeafColumns = %d, want 9", n)
	}
}
