package deltasink

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestSinkDecodesOnce feeds a sink the chunks of one partition as the
// decoder pool delivers them around changes of the columns, and checks
// that the sink decodes again only the records from the one that asked
// for new columns on, never a chunk decoded with older columns that asks
// for nothing; that each file holds the rows of one version of the
// columns, the chunks decoded before a change going on in the file of
// their columns rather than each closing one; and that one flush commits
// them all with the newest columns.
func TestSinkDecodesOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	state := &TableState{}
	s, chunk, decoded := evolvingSink(t, dir, state, nil)
	// Chunks a, b and c decode with the first columns before the sink
	// writes any; d after a's new column a.
	a := decoded(chunk(0, map[int]string{2: `{"id":2,"a":"x"}`}))
	b := decoded(chunk(5, nil))
	c := decoded(chunk(10, map[int]string{12: `{"id":12,"a":"y"}`}))
	for i, d := range []ingest.Decoded{a, b, c} {
		if err := s.Add(ctx, d); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	d := decoded(chunk(15, map[int]string{17: `{"id":17,"b":true}`}))
	if err := s.Add(ctx, d); err != nil {
		t.Fatalf("chunk d: %v", err)
	}
	// a from its record 2, c from 12 (the table has a by then), d from 17.
	if s.redecoded != 9 {
		t.Errorf("the sink decoded %d records again, want 9: 3 of each chunk that asked, none of b", s.redecoded)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	st := state.Snapshot()
	// The first columns' rows go to one file (0-1, then b and c's 10-11,
	// while the table has newer columns), a's columns' to another (2-4,
	// 12-16), the newest to a third (17-19).
	if st.Rows != 20 || st.Files != 3 {
		t.Errorf("status: %d rows in %d files, want 20 in 3: [0,1 5,11] [2,4 12,16] [17,19]", st.Rows, st.Files)
	}
	snap, err := table.ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := schema.FormatDDL(snap.Schema), "key BINARY, id BIGINT, a STRING, b BOOLEAN"; got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
	if next := snap.Txns[AppID(kafka.TopicPartition{Topic: "t"})]; next != 20 {
		t.Errorf("committed offset %d, want 20", next)
	}
	type row struct {
		ID int64   `parquet:"id,optional"`
		A  *string `parquet:"a,optional"`
		B  *bool   `parquet:"b,optional"`
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		rows, err := parquet.ReadFile[row](f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, r := range rows {
			s := fmt.Sprint(r.ID)
			if r.A != nil {
				s += " a=" + *r.A
			}
			if r.B != nil {
				s += fmt.Sprint(" b=", *r.B)
			}
			got = append(got, s)
		}
	}
	slices.Sort(got)
	var want []string
	for i := range 20 {
		s := fmt.Sprint(i)
		switch i {
		case 2:
			s += " a=x"
		case 12:
			s += " a=y"
		case 17:
			s += " b=true"
		}
		want = append(want, s)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}

// evolvingSink returns the sink, in folder dir, of a table whose JSON
// value has the column id and adds columns as records bring them, with
// the error budget errs (nil for none); chunk, which makes the five
// records of partition t/0 from offset from, values giving those that are
// not {"id":N}; and decoded, which decodes a chunk with a decoder of the
// sink's pool, as the decode stage does ahead of the sink.
func evolvingSink(t *testing.T, dir string, state *TableState, errs *ErrorBudget) (*Sink,
	func(from int, values map[int]string) []record.Record, func(recs []record.Record) ingest.Decoded) {
	t.Helper()
	ctx := context.Background()
	tr := &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{SchemaEvolutionMode: spec.SchemaEvolutionAddNewColumns}}
	layout := &spec.Layout{
		Key: spec.Part{Column: spec.KeyColumn},
		Value: spec.Part{Format: spec.FormatJSON, Transformer: tr, Column: spec.ValueColumn,
			Fields: []schema.Field{{Name: "id", Type: &schema.Type{Kind: schema.Long}, Nullable: true}}},
	}
	tbl, err := table.Open(dir, table.Options{Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tbl.Close() })
	s, err := NewSink(tbl, layout, nil, SinkOptions{MaxRows: 1000, MaxBytes: 1 << 30, Budget: memory.New(1 << 30),
		State: state, Log: slog.Default(), Errs: errs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	chunk := func(from int, values map[int]string) []record.Record {
		var recs []record.Record
		for i := from; i < from+5; i++ {
			v, ok := values[i]
			if !ok {
				v = fmt.Sprintf(`{"id":%d}`, i)
			}
			recs = append(recs, record.Record{Topic: "t", Offset: int64(i), Value: []byte(v), LeaderEpoch: -1})
		}
		return recs
	}
	decoded := func(recs []record.Record) ingest.Decoded {
		dec, version, err := s.decoders.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		batch, err := dec.Decode(ctx, recs)
		return ingest.Decoded{TP: kafka.TopicPartition{Topic: "t"}, Dec: dec, Batch: batch, Err: err, Recs: recs, Version: version,
			Next: recs[len(recs)-1].Offset + 1, Epoch: -1}
	}
	return s, chunk, decoded
}

// TestSinkErrorBudgetAfterNewColumns checks a chunk split by a record
// with a new field whose second part takes the table past its error
// budget: the flush before the table fails commits the rows of the first
// part with the offset of the record that asked, and the first part's
// record that did not decode in the dirty records table, so that a
// restart reads the rest once.
func TestSinkErrorBudgetAfterNewColumns(t *testing.T) {
	on, limit := true, int64(1)
	ko := &spec.KafkaOptions{IgnoreErrors: &on, ErrorToleranceMaxCount: &limit}
	dir, dirty := t.TempDir(), t.TempDir()
	errs := NewErrorBudget(ko, "main.raw.events", dirty, "main.raw._dirty_records", table.Options{Owner: "test"})
	s, chunk, decoded := evolvingSink(t, dir, &TableState{}, errs)
	d := decoded(chunk(0, map[int]string{1: `{"id":`, 2: `{"id":2,"a":"x"}`, 3: `{"id":`}))
	if err := s.Add(context.Background(), d); err == nil {
		t.Fatal("the table did not fail past its error budget")
	}
	snap, err := table.ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if next := snap.Txns[AppID(kafka.TopicPartition{Topic: "t"})]; next != 2 || snap.Counters[table.MetricOutputRows] != 1 {
		t.Errorf("committed offset %d with %d rows, want 2 with 1 (the record before the new field's)", next, snap.Counters[table.MetricOutputRows])
	}
	if n := snap.Counters[CounterErrors]; n != 1 {
		t.Errorf("%d error records committed, want 1", n)
	}
}
