package spec

import (
	"slices"
	"strings"
	"testing"
)

func TestParsePartitionColumn(t *testing.T) {
	for _, tt := range []struct {
		entry, name, transform, source, expr string
	}{
		{"country", "country", PartitionIdentity, "country", ""},
		{"date(_kafka.timestamp)", "_kafka_timestamp_date", PartitionDate, "_kafka.timestamp", "CAST(`_kafka`.`timestamp` AS DATE)"},
		{" HOUR( ts ) as h ", "h", PartitionHour, "ts", "DATE_FORMAT(`ts`, 'yyyy-MM-dd-HH')"},
		{"date(timestamp) AS day", "day", PartitionDate, "timestamp", "CAST(`timestamp` AS DATE)"},
	} {
		p, err := ParsePartitionColumn(tt.entry)
		if err != nil {
			t.Fatalf("%q: %v", tt.entry, err)
		}
		if p.Name != tt.name || p.Transform != tt.transform || strings.Join(p.Source, ".") != tt.source || p.GenerationExpression() != tt.expr {
			t.Errorf("%q: got %+v expression %q", tt.entry, p, p.GenerationExpression())
		}
	}
	for _, bad := range []string{"", "a.b", "month(ts)", "date(ts) AS", "date(ts) AS 1x", "date(a..b)", "country AS c", "date()"} {
		if _, err := ParsePartitionColumn(bad); err == nil {
			t.Errorf("%q parsed, want an error", bad)
		}
	}
}

// TestPartitionByValidate: each problem of partition_by is reported on the
// entry's own path, all of them at once.
func TestPartitionByValidate(t *testing.T) {
	const tp = "table[0].table_configuration.partition_by"
	tc := func(p *Pipeline) *TableConfiguration { return &p.Tables[0].TableConfiguration }
	tests := []pipelineCase{
		{"identity", func(p *Pipeline) { tc(p).PartitionBy = []string{"name"} }, "", ""},
		{"date of metadata", func(p *Pipeline) { tc(p).PartitionBy = []string{"date(_kafka.timestamp)", "hour(_kafka.timestamp)"} }, "", ""},
		{"empty", func(p *Pipeline) { tc(p).PartitionBy = []string{} }, tp, "partition_by is empty"},
		{"syntax", func(p *Pipeline) { tc(p).PartitionBy = []string{"month(_kafka.timestamp)"} }, tp + "[0]", "is not a partition column"},
		{"duplicate", func(p *Pipeline) { tc(p).PartitionBy = []string{"name", "NAME"} }, tp + "[1]", "already listed as partition_by[0]"},
		{"too many", func(p *Pipeline) {
			tc(p).PartitionBy = []string{"name", "id", "date(_kafka.timestamp)", "hour(_kafka.timestamp)", "date(_kafka.timestamp) AS d"}
		}, tp, "more than 4"},
		{"unknown column", func(p *Pipeline) { tc(p).PartitionBy = []string{"country"} }, tp + "[0]", `no column "country"`},
		{"struct type", func(p *Pipeline) { tc(p).PartitionBy = []string{"_kafka"} }, tp + "[0]", "cannot partition a table"},
		{"date of a string", func(p *Pipeline) { tc(p).PartitionBy = []string{"date(name)"} }, tp + "[0]", "needs a TIMESTAMP"},
		{"derived name taken", func(p *Pipeline) { tc(p).PartitionBy = []string{"date(_kafka.timestamp) AS name"} }, tp + "[0]", `take the name of the table's column "name"`},
		{"another spelling", func(p *Pipeline) { tc(p).PartitionBy = []string{"Name"} }, tp + "[0]", `spelled "name"`},
		{"another spelling of a field", func(p *Pipeline) { tc(p).PartitionBy = []string{"date(_KAFKA.timestamp)"} }, tp + "[0]", `spelled "_kafka.timestamp"`},
		{"not a struct", func(p *Pipeline) { tc(p).PartitionBy = []string{"date(name.x)"} }, tp + "[0]", "not a struct"},
		{"metadata column", func(p *Pipeline) {
			tc(p).MetadataColumns = []string{"timestamp"}
			tc(p).PartitionBy = []string{"date(timestamp)"}
		}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPipeline()
			tt.mutate(p)
			errs := p.Validate()
			if tt.path == "" {
				if len(errs) > 0 {
					t.Fatalf("got %v, want none", errs)
				}
				return
			}
			if !slices.ContainsFunc(errs, func(e FieldError) bool { return e.Path == tt.path && strings.Contains(e.Detail, tt.detail) }) {
				t.Fatalf("got %v, want a problem at %s containing %q", errs, tt.path, tt.detail)
			}
		})
	}
}

// TestPartitionByIndependentErrors: two bad entries give two problems.
func TestPartitionByIndependentErrors(t *testing.T) {
	p := validPipeline()
	p.Tables[0].TableConfiguration.PartitionBy = []string{"date(name)", "nope", "id"}
	errs := p.Validate()
	var paths []string
	for _, e := range errs {
		paths = append(paths, e.Path)
	}
	want := []string{"table[0].table_configuration.partition_by[0]", "table[0].table_configuration.partition_by[1]"}
	if !slices.Equal(paths, want) {
		t.Fatalf("got %v, want problems at %v", errs, want)
	}
}

// TestPartitionByUnknownColumnsLater: a column a registry or inference
// brings later is not refused at plan time.
func TestPartitionByUnknownColumnsLater(t *testing.T) {
	p := validPipeline()
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.ValueTransformer = &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{SchemaRegistry: registry("v")}}
	p.Tables[0].TableConfiguration.PartitionBy = []string{"date(event_time)", "_kafka"}
	errs := p.Validate()
	if len(errs) != 1 || errs[0].Path != "table[0].table_configuration.partition_by[1]" {
		t.Fatalf("got %v, want only the struct column _kafka refused", errs)
	}
}

func TestPartitionByFanout(t *testing.T) {
	f := validFanout()
	f.TableConfiguration.PartitionBy = []string{"date(_kafka.timestamp)"}
	errs := f.Validate()
	if !slices.ContainsFunc(errs, func(e FieldError) bool { return e.Path == "table_configuration.partition_by" }) {
		t.Fatalf("got %v, want partition_by refused on a fanout schema", errs)
	}
}
