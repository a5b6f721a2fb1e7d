package deltasink

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// partitionedSink returns a sink of the table in dir, JSON values of id
// and country with the _kafka column, partitioned by partitionBy.
func partitionedSink(t *testing.T, dir string, state *TableState, partitionBy ...string) (*Sink, error) {
	t.Helper()
	st := &spec.Table{
		DestinationTable: "events",
		ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{"t"},
			ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id BIGINT, country STRING"}}}},
		TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka", PartitionBy: partitionBy},
	}
	layout, errs := st.Layout()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	tbl, err := table.Open(dir, table.Options{Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tbl.Close() })
	s, err := NewSink(tbl, layout, nil, SinkOptions{MaxRows: 1000, MaxBytes: 1 << 30, Budget: memory.New(1 << 30),
		State: state, Log: slog.Default()})
	if err != nil {
		_ = tbl.Close()
		return nil, err
	}
	t.Cleanup(s.Close)
	return s, nil
}

// TestSinkPartitions: the rows of one flush with three partition values
// go to three files, one in each partition's folder, whose rows carry
// the date of their record's timestamp in the generated column; a
// reopened table partitioned otherwise is refused, naming partition_by.
func TestSinkPartitions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	state := &TableState{}
	s, err := partitionedSink(t, dir, state, "country", "date(_kafka.timestamp) AS day")
	if err != nil {
		t.Fatal(err)
	}
	day := func(d int) time.Time { return time.Date(2024, 3, d, 23, 30, 0, 0, time.UTC) }
	recs := []record.Record{}
	for i, r := range []struct {
		country string
		day     int
	}{{"fr", 1}, {"de", 2}, {"fr", 1}, {"fr", 3}, {"de", 2}, {"fr", 3}} {
		recs = append(recs, record.Record{Topic: "t", Offset: int64(i), Timestamp: day(r.day), LeaderEpoch: -1,
			Value: fmt.Appendf(nil, `{"id":%d,"country":%q}`, i, r.country)})
	}
	dec, version, err := s.decoders.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := dec.Decode(ctx, recs)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, ingest.Decoded{TP: kafka.TopicPartition{Topic: "t"}, Dec: dec, Batch: batch, Recs: recs, Version: version,
		Next: 6, Epoch: -1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st := state.Snapshot(); st.Rows != 6 || st.Files != 3 {
		t.Fatalf("status: %d rows in %d files, want 6 in 3", st.Rows, st.Files)
	}
	type row struct {
		ID      int64  `parquet:"id,optional"`
		Country string `parquet:"country,optional"`
		Day     int32  `parquet:"day,optional"`
	}
	var got []string
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") || strings.Contains(path, "_delta_log") {
			return err
		}
		rows, err := parquet.ReadFile[row](path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(path))
		for _, r := range rows {
			got = append(got, fmt.Sprintf("%s: %d %s %s", rel, r.ID, r.Country, time.Unix(int64(r.Day)*86400, 0).UTC().Format(time.DateOnly)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{
		"country=de/day=2024-03-02: 1 de 2024-03-02", "country=de/day=2024-03-02: 4 de 2024-03-02",
		"country=fr/day=2024-03-01: 0 fr 2024-03-01", "country=fr/day=2024-03-01: 2 fr 2024-03-01",
		"country=fr/day=2024-03-03: 3 fr 2024-03-03", "country=fr/day=2024-03-03: 5 fr 2024-03-03",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	s.Close()
	_ = s.tbl.Close()

	_, err = partitionedSink(t, dir, &TableState{}, "country")
	if err == nil || !strings.Contains(err.Error(), "table_configuration.partition_by gives the partition columns [country], but the table is partitioned by [country, day]") {
		t.Errorf("reopened with another partition_by: %v, want it refused", err)
	}
	_, err = partitionedSink(t, dir, &TableState{})
	if err == nil || !strings.Contains(err.Error(), "none (unpartitioned)") {
		t.Errorf("reopened without partition_by: %v, want it refused", err)
	}
}

// TestPartitionValues: each kind of partition column gets Delta's
// serialization of its value, a null value the empty string, and the
// derived columns their UTC date (days since the epoch, floored before
// 1970) or hour.
func TestPartitionValues(t *testing.T) {
	micros := func(s string) parquet.Value {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return parquet.Int64Value(tm.UnixMicro())
	}
	p := &partitioner{
		parts: []spec.PartitionColumn{
			{Name: "d", Transform: spec.PartitionDate}, {Name: "h", Transform: spec.PartitionHour},
			{Name: "b"}, {Name: "i"}, {Name: "l"}, {Name: "day"}, {Name: "s"},
		},
		kinds: []schema.Kind{schema.Timestamp, schema.TimestampNTZ, schema.Boolean, schema.Int, schema.Long, schema.Date, schema.String},
	}
	for _, tt := range []struct {
		part int
		v    parquet.Value
		want string
	}{
		{0, micros("2026-03-01T23:59:59Z"), "2026-03-01"},
		{0, micros("1969-12-31T23:00:00Z"), "1969-12-31"},
		{1, micros("2026-03-01T07:30:00Z"), "2026-03-01-07"},
		{2, parquet.BooleanValue(true), "true"},
		{3, parquet.Int32Value(-7), "-7"},
		{4, parquet.Int64Value(1 << 40), "1099511627776"},
		{5, parquet.Int32Value(19000), "2022-01-08"},
		{6, parquet.ByteArrayValue([]byte("a/b")), "a/b"},
		{6, parquet.NullValue(), ""},
	} {
		if got := p.value(tt.part, tt.v); got != tt.want {
			t.Errorf("part %d, value %v: %q, want %q", tt.part, tt.v, got, tt.want)
		}
	}
	if got := derivedValue(spec.PartitionDate, micros("1969-12-31T23:00:00Z")).Int32(); got != -1 {
		t.Errorf("date of 1969-12-31T23:00Z is day %d, want -1", got)
	}
	if got := string(derivedValue(spec.PartitionHour, micros("2026-03-01T07:30:00Z")).ByteArray()); got != "2026-03-01-07" {
		t.Errorf("hour %q, want 2026-03-01-07", got)
	}
	if !derivedValue(spec.PartitionDate, parquet.NullValue()).IsNull() {
		t.Error("the date of a null timestamp is not null")
	}
}
