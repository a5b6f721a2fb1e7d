package pipeline

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

const (
	orderV1 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"}]}`
	orderV2 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},` +
		`{"name":"note","type":["null","string"],"default":null}]}`
)

type avroOrder struct {
	ID   int64   `avro:"id"`
	Name string  `avro:"name"`
	Note *string `avro:"note"`
}

// orderRow is what the tests read back of an Avro orders table.
type orderRow struct {
	ID      *int64  `parquet:"id,optional"`
	Name    *string `parquet:"name,optional"`
	Note    *string `parquet:"note,optional"`
	Corrupt []byte  `parquet:"_corrupt_record,optional"`
}

// newSchemaRegistry starts a fake schema registry on loopback that wants
// key:secret, and returns it with the connection of addr that uses it.
func newSchemaRegistry(t *testing.T, addr string) (*srfake.Registry, *spec.Connection) {
	t.Helper()
	reg := srfake.New(srfake.WithAuth("Basic " + base64.StdEncoding.EncodeToString([]byte("key:secret"))))
	t.Cleanup(reg.Close)
	return reg, &spec.Connection{Name: "c", BootstrapServers: []string{addr},
		SchemaRegistry: &spec.SchemaRegistry{URL: reg.URL(), APIKey: "key", APISecret: "secret"}}
}

// registerAvro registers text under subject and returns its id.
func registerAvro(t *testing.T, reg *srfake.Registry, subject, text string) int {
	t.Helper()
	id, _, err := reg.RegisterSchema(subject, sr.Schema{Schema: text})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// produceAvro produces orders from..to-1 to partition 0 of topic, framed
// with schema id id of text; bad(i) replaces a value with garbage.
func produceAvro(t *testing.T, cl *kgo.Client, topic string, id int, text string, from, to int, bad func(int) bool) {
	t.Helper()
	s := avro.MustParse(text)
	var h sr.ConfluentHeader
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		o := avroOrder{ID: int64(i), Name: "n"}
		if strings.Contains(text, "note") {
			note := "v2"
			o.Note = &note
		}
		data, err := avro.Marshal(s, o)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := h.AppendEncode(nil, id, nil)
		v = append(v, data...)
		if bad != nil && bad(i) {
			v = []byte("not avro")
		}
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Key: []byte("k"), Value: v})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// avroPipeline is a pipeline whose value is Avro of subject orders-value.
func avroPipeline(topic, mode string) *spec.Pipeline {
	p := testPipeline(topic)
	p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer = &spec.Transformer{Format: spec.FormatAvro, AvroOptions: &spec.AvroOptions{
		SchemaRegistry: &spec.SchemaRegistryOptions{ConfluentOptions: spec.ConfluentOptions{Subject: "orders-value"}},
		ParseMode:      mode,
	}}
	return p
}

// readOrders reads every data file of the table in dir, rows without an id
// first, then by id. A null _corrupt_record reads as empty.
func readOrders(t *testing.T, dir string) []orderRow {
	t.Helper()
	out, _ := tabletest.ReadRows[orderRow](t, strings.TrimPrefix(dir, "file://"))
	slices.SortFunc(out, func(a, b orderRow) int {
		switch {
		case a.ID == nil && b.ID == nil:
			return 0
		case a.ID == nil:
			return -1
		case b.ID == nil:
			return 1
		}
		return int(*a.ID - *b.ID)
	})
	return out
}

// offsets sums the table's committed offsets.
func offsets(t *testing.T, dir string) (int64, table.Snapshot) {
	t.Helper()
	snap, err := table.ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, off := range snap.Txns {
		n += off
	}
	return n, snap
}

// A table whose value schema comes from a registry ingests records of the
// subject's versions; a version with a new field adds its column, without
// losing or duplicating a record.
func TestManagerAvroRegistryEvolves(t *testing.T) {
	addr, producer := newCluster(t, 1, "orders")
	reg, conn := newSchemaRegistry(t, addr)
	v1 := registerAvro(t, reg, "orders-value", orderV1)
	produceAvro(t, producer, "orders", v1, orderV1, 0, 50, nil)

	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), avroPipeline("orders", ""), conn, nil); err != nil {
		t.Fatal(err)
	}
	rows := func() int64 { st, _ := m.Status("p"); return st.Tables[0].Rows }
	waitFor(t, 20*time.Second, "50 rows", func() bool { return rows() == 50 })
	st, _ := m.Status("p")
	dir := st.Tables[0].Location
	if _, snap := offsets(t, dir); slices.ContainsFunc(snap.Schema, func(f schema.Field) bool { return f.Name == "note" }) {
		t.Fatalf("the table has note before v2: %v", snap.Schema)
	}

	v2 := registerAvro(t, reg, "orders-value", orderV2)
	produceAvro(t, producer, "orders", v2, orderV2, 50, 100, nil)
	// Old writers go on too.
	produceAvro(t, producer, "orders", v1, orderV1, 100, 110, nil)
	waitFor(t, 30*time.Second, "110 rows", func() bool { return rows() == 110 })

	next, snap := offsets(t, dir)
	var cols []string
	for _, f := range snap.Schema {
		cols = append(cols, f.Name)
	}
	if got := strings.Join(cols, ","); got != "key,id,name,note,_kafka,_corrupt_record" {
		t.Errorf("table columns %s, want note added after name", got)
	}
	if next != 110 || snap.NumRows != 110 {
		t.Errorf("offsets sum to %d, %d rows; want 110", next, snap.NumRows)
	}
	got := readOrders(t, dir)
	if len(got) != 110 {
		t.Fatalf("%d rows in the files, want 110", len(got))
	}
	for i, r := range got {
		wantNote := i >= 50 && i < 100
		if r.ID == nil || *r.ID != int64(i) || (r.Note != nil) != wantNote || len(r.Corrupt) != 0 {
			t.Fatalf("row %d: %+v, want id %d with a note %v", i, r, i, wantNote)
		}
	}
	if st, _ := m.Status("p"); st.State != spec.StateRunning || st.Tables[0].CorruptRecords != 0 {
		t.Errorf("status %+v", st)
	}
}

// A FAILFAST table stops at a record it cannot decode, without committing
// it; switched to PERMISSIVE, it resumes there and keeps the record in
// _corrupt_record.
func TestManagerAvroRegistryFailFast(t *testing.T) {
	addr, producer := newCluster(t, 1, "orders")
	reg, conn := newSchemaRegistry(t, addr)
	v1 := registerAvro(t, reg, "orders-value", orderV1)
	produceAvro(t, producer, "orders", v1, orderV1, 0, 10, nil)

	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), avroPipeline("orders", spec.ParseModeFailFast), conn, nil); err != nil {
		t.Fatal(err)
	}
	status := func() spec.TableStatus { st, _ := m.Status("p"); return st.Tables[0] }
	waitFor(t, 20*time.Second, "10 rows", func() bool { return status().Rows == 10 })
	produceAvro(t, producer, "orders", v1, orderV1, 10, 20, func(i int) bool { return i == 13 })
	waitFor(t, 20*time.Second, "FAILED", func() bool { return status().State == spec.StateFailed })
	ts := status()
	if !strings.Contains(ts.LastError, "orders[0]@13") || !strings.Contains(ts.LastError, "FAILFAST") {
		t.Errorf("last_error %q does not name orders[0]@13 and FAILFAST", ts.LastError)
	}
	if next, _ := offsets(t, ts.Location); next > 13 || next < 10 {
		t.Errorf("committed offset %d, want it before the bad record (10..13)", next)
	}
	time.Sleep(300 * time.Millisecond)
	if st := status(); st.State != spec.StateFailed {
		t.Fatalf("a FAILFAST table left FAILED by itself: %+v", st)
	}

	if err := m.Apply(context.Background(), avroPipeline("orders", spec.ParseModePermissive), conn, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "20 rows", func() bool { return status().Rows == 20 })
	ts = status()
	if ts.State != spec.StateRunning || ts.CorruptRecords != 1 {
		t.Errorf("status %+v, want RUNNING with 1 corrupt record", ts)
	}
	if next, _ := offsets(t, ts.Location); next != 20 {
		t.Errorf("committed offset %d, want 20", next)
	}
	got := readOrders(t, ts.Location)
	if len(got) != 20 {
		t.Fatalf("%d rows, want 20", len(got))
	}
	// The corrupt row sorts first (no id), then ids 0..19 without 13.
	if got[0].ID != nil || string(got[0].Corrupt) != "not avro" {
		t.Errorf("corrupt row %+v, want null id and the raw bytes", got[0])
	}
	want := int64(0)
	for _, r := range got[1:] {
		if want == 13 {
			want++
		}
		if r.ID == nil || *r.ID != want || len(r.Corrupt) != 0 {
			t.Fatalf("row %+v, want id %d", r, want)
		}
		want++
	}
}
