package iceberg_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/iceberg"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

func fields(t *testing.T, ddl string) []schema.Field {
	t.Helper()
	f, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFromDelta maps every Delta type the agent writes, gives nested
// fields ids, keeps the ids of the previous schema when a column is
// added, and writes the name mapping of the result.
func TestFromDelta(t *testing.T) {
	cols := fields(t, "b BOOLEAN, t TINYINT, i INT, l BIGINT NOT NULL, f FLOAT, d DOUBLE, dec DECIMAL(10,2), s STRING, "+
		"bin BINARY, dt DATE, ts TIMESTAMP, ntz TIMESTAMP_NTZ, st STRUCT<x: BIGINT>, a ARRAY<STRING>, m MAP<INT, STRING>")
	s, last, err := iceberg.FromDelta(cols, nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"b","required":false,"type":"boolean"},` +
		`{"id":2,"name":"t","required":false,"type":"int"},{"id":3,"name":"i","required":false,"type":"int"},` +
		`{"id":4,"name":"l","required":true,"type":"long"},{"id":5,"name":"f","required":false,"type":"float"},` +
		`{"id":6,"name":"d","required":false,"type":"double"},{"id":7,"name":"dec","required":false,"type":"decimal(10, 2)"},` +
		`{"id":8,"name":"s","required":false,"type":"string"},{"id":9,"name":"bin","required":false,"type":"binary"},` +
		`{"id":10,"name":"dt","required":false,"type":"date"},{"id":11,"name":"ts","required":false,"type":"timestamptz"},` +
		`{"id":12,"name":"ntz","required":false,"type":"timestamp"},` +
		`{"id":13,"name":"st","required":false,"type":{"type":"struct","fields":[{"id":14,"name":"x","required":false,"type":"long"}]}},` +
		`{"id":15,"name":"a","required":false,"type":{"type":"list","element-id":16,"element":"string","element-required":false}},` +
		`{"id":17,"name":"m","required":false,"type":{"type":"map","key-id":18,"key":"int","value-id":19,"value":"string","value-required":false}}]}`
	if string(got) != want || last != 19 {
		t.Fatalf("schema, last id = %s, %d\nwant %s, 19", got, last, want)
	}
	var back iceberg.Schema
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(&back); string(again) != want {
		t.Errorf("read back and written again:\n%s", again)
	}

	// A new column, and a new field in a struct, get new ids; the others keep theirs.
	wider := fields(t, "b BOOLEAN, t TINYINT, i INT, l BIGINT NOT NULL, f FLOAT, d DOUBLE, dec DECIMAL(10,2), s STRING, "+
		"bin BINARY, dt DATE, ts TIMESTAMP, ntz TIMESTAMP_NTZ, st STRUCT<x: BIGINT, y: STRING>, a ARRAY<STRING>, m MAP<INT, STRING>, n STRING")
	s2, last2, err := iceberg.FromDelta(wider, nil, s, last)
	if err != nil {
		t.Fatal(err)
	}
	if last2 != 21 || s2.Fields[12].Type.Fields[1].ID != 20 || s2.Fields[15].ID != 21 || s2.Fields[14].Type.ValueID != 19 {
		t.Errorf("wider schema: last %d, st.y %d, n %d, m.value %d; want 21, 20, 21, 19",
			last2, s2.Fields[12].Type.Fields[1].ID, s2.Fields[15].ID, s2.Fields[14].Type.ValueID)
	}

	nm, err := iceberg.NameMapping(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(nm, `{"field-id":15,"names":["a"],"fields":[{"field-id":16,"names":["element"]}]}`) ||
		!strings.Contains(nm, `{"field-id":17,"names":["m"],"fields":[{"field-id":18,"names":["key"]},{"field-id":19,"names":["value"]}]}`) {
		t.Errorf("name mapping = %s", nm)
	}
}

// TestFromDeltaRefuses names the column and the reason for what the
// mirror cannot hold.
func TestFromDeltaRefuses(t *testing.T) {
	var unsupported *iceberg.UnsupportedError
	_, _, err := iceberg.FromDelta(fields(t, "id BIGINT, v VARIANT"), nil, nil, 0)
	if !errors.As(err, &unsupported) || unsupported.Column != "v" || !strings.Contains(err.Error(), "VARIANT") {
		t.Errorf("VARIANT column: %v", err)
	}
	mapped := iceberg.Columns{"id": {Name: "col-1", ID: 1}, "tags": {Name: "col-2", ID: 2}}
	_, _, err = iceberg.FromDelta(fields(t, "id BIGINT, tags ARRAY<STRING>"), mapped, nil, 0)
	if !errors.As(err, &unsupported) || unsupported.Column != "tags.element" || !strings.Contains(err.Error(), "column mapping") {
		t.Errorf("array in a table with column mapping: %v", err)
	}
	s, last, err := iceberg.FromDelta(fields(t, "id BIGINT, `a b` STRING"), iceberg.Columns{"id": {Name: "col-1", ID: 3}, "`a b`": {Name: "col-2", ID: 7}}, nil, 0)
	if err != nil || s.Fields[0].ID != 3 || s.Fields[1].ID != 7 || last != 7 {
		t.Errorf("column mapping ids: %+v, %d, %v", s, last, err)
	}
}

// TestManifestRoundTrip writes a manifest of a partitioned table and its
// manifest list, and reads both back, with the inherited snapshot and
// sequence numbers of added entries.
func TestManifestRoundTrip(t *testing.T) {
	s, _, err := iceberg.FromDelta(fields(t, "id BIGINT, day DATE, region STRING"), nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := iceberg.Partitioning(s, []string{"day", "region"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := iceberg.NewManifestWriter(s, 0, spec)
	if err != nil {
		t.Fatal(err)
	}
	dayStr := "2026-12-01"
	day, err := iceberg.PartitionValue(s.Fields[1].Type, &dayStr)
	if err != nil {
		t.Fatal(err)
	}
	entries := []iceberg.ManifestEntry{
		{Status: iceberg.StatusAdded, File: iceberg.DataFile{Path: "file:///t/a.parquet", Records: 3, Size: 100,
			Partition: map[string]any{"day": day, "region": "eu"}}},
		{Status: iceberg.StatusExisting, SnapshotID: 5, Sequence: 1, FileSequence: 1, File: iceberg.DataFile{Path: "file:///t/b.parquet",
			Records: 4, Size: 200, Partition: map[string]any{"day": nil, "region": "us"}}},
		{Status: iceberg.StatusDeleted, SnapshotID: 9, Sequence: 2, FileSequence: 2, File: iceberg.DataFile{Path: "file:///t/c.parquet",
			Records: 5, Size: 300}},
	}
	data, mf, err := w.Write(entries, 9, 3)
	if err != nil {
		t.Fatal(err)
	}
	if mf.AddedFiles != 1 || mf.ExistingFiles != 1 || mf.DeletedFiles != 1 || mf.AddedRows != 3 || mf.MinSequence != 1 || mf.Sequence != 3 {
		t.Errorf("manifest file = %+v", mf)
	}
	mf.Path, mf.Length = "file:///t/metadata/m.avro", int64(len(data))
	back, err := iceberg.ReadManifest(data, mf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 3 || back[0].SnapshotID != 9 || back[0].Sequence != 3 || back[1].Sequence != 1 || back[2].Status != iceberg.StatusDeleted {
		t.Fatalf("entries read back = %+v", back)
	}
	if d, ok := back[0].File.Partition["day"].(time.Time); !ok || d.Format(time.DateOnly) != dayStr || back[0].File.Partition["region"] != "eu" {
		t.Errorf("partition read back = %#v", back[0].File.Partition)
	}
	list, err := iceberg.WriteManifestList([]iceberg.ManifestFile{mf}, 9, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	ml, err := iceberg.ReadManifestList(list)
	if err != nil || len(ml) != 1 || ml[0] != mf {
		t.Errorf("manifest list read back = %+v, %v; want %+v", ml, err, mf)
	}
}

// TestMetricsFromDelta turns Delta stats into bounds that hold for every
// row: a timestamp's maximum is the end of its millisecond, a missing
// maximum (a long string's) gives no upper bound, nested columns and
// columns not in the stats (partition columns) give none; the metrics
// survive a manifest's round trip.
func TestMetricsFromDelta(t *testing.T) {
	s, _, err := iceberg.FromDelta(fields(t, "id BIGINT, n INT, s STRING, d DATE, ts TIMESTAMP, st STRUCT<x: INT>, region STRING"), nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	stats := `{"numRecords":3,"minValues":{"id":-2,"n":7,"s":"abc","d":"2026-12-01","ts":"2026-12-01T10:00:00.123Z","st":{"x":1}},` +
		`"maxValues":{"id":9,"n":8,"d":"2026-12-03","ts":"2026-12-01T11:00:00.456Z","st":{"x":2}},` +
		`"nullCount":{"id":0,"n":1,"s":0,"d":0,"ts":2,"st":{"x":0}}}`
	m, err := iceberg.MetricsFromDelta(s, stats, 3, func(n string) string { return n })
	if err != nil {
		t.Fatal(err)
	}
	le64 := func(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
	le32 := func(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
	day := func(s string) int32 {
		d, _ := time.Parse(time.DateOnly, s)
		return int32(d.Unix() / 86400)
	}
	tsMax := time.Date(2026, 12, 1, 11, 0, 0, 456999000, time.UTC).UnixMicro()
	want := iceberg.Metrics{
		ValueCounts: map[int]int64{1: 3, 2: 3, 3: 3, 4: 3, 5: 3},
		NullCounts:  map[int]int64{1: 0, 2: 1, 3: 0, 4: 0, 5: 2},
		Lower: map[int][]byte{1: le64(-2), 2: le32(7), 3: []byte("abc"), 4: le32(day("2026-12-01")),
			5: le64(time.Date(2026, 12, 1, 10, 0, 0, 123000000, time.UTC).UnixMicro())},
		Upper: map[int][]byte{1: le64(9), 2: le32(8), 4: le32(day("2026-12-03")), 5: le64(tsMax)},
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("metrics = %+v\nwant %+v", m, want)
	}
	long := `{"numRecords":1,"minValues":{"s":"` + strings.Repeat("a", 32) + `"},"maxValues":{"s":"` + strings.Repeat("a", 32) + "\uffff" + `"},"nullCount":{"s":0}}`
	if m, err := iceberg.MetricsFromDelta(s, long, 1, func(n string) string { return n }); err != nil || m.Upper[3] != nil || len(m.Lower[3]) != 32 {
		t.Errorf("a truncated string maximum: upper %q, lower %q, %v; want no upper bound", m.Upper[3], m.Lower[3], err)
	}
	if _, err := iceberg.MetricsFromDelta(s, "{", 3, func(n string) string { return n }); err == nil {
		t.Error("malformed stats: no error")
	}

	spec, err := iceberg.Partitioning(s, []string{"region"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := iceberg.NewManifestWriter(s, 0, spec)
	if err != nil {
		t.Fatal(err)
	}
	data, mf, err := w.Write([]iceberg.ManifestEntry{{Status: iceberg.StatusAdded,
		File: iceberg.DataFile{Path: "file:///t/a.parquet", Records: 3, Size: 10, Metrics: m}}}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	back, err := iceberg.ReadManifest(data, mf)
	if err != nil || len(back) != 1 || !reflect.DeepEqual(back[0].File.Metrics, want) {
		t.Errorf("metrics read back = %+v, %v", back, err)
	}
}
