package deltasink

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/objstoretest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestSinkCountsSealedUploads writes full files to an object store whose
// uploads complete only when the test lets them. The memory budget counts
// the sealed files' uploads until they complete; a flush waits for them,
// commits every file and leaves the budget holding nothing, which answers
// a flush the budget asked for. A flush whose context ends while an
// upload is in flight commits nothing, and a later one commits it all.
func TestSinkCountsSealedUploads(t *testing.T) {
	ctx := context.Background()
	st := objstoretest.NewHeldStore()
	tbl, err := table.OpenStore(st, table.Options{Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tbl.Close() })
	layout := &spec.Layout{
		Key: spec.Part{Column: spec.KeyColumn},
		Value: spec.Part{Format: spec.FormatJSON, Column: spec.ValueColumn,
			Transformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{}},
			Fields:      []schema.Field{{Name: "id", Type: &schema.Type{Kind: schema.Long}, Nullable: true}}},
	}
	// A budget smaller than one file's upload, so that the sink is asked
	// to flush as soon as it holds one.
	budget := memory.New(64)
	state := &TableState{}
	s, err := NewSink(tbl, layout, nil, SinkOptions{MaxRows: 2, MaxBytes: 1 << 30, Budget: budget, State: state, Log: slog.Default()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	tp := kafka.TopicPartition{Topic: "t"}
	var recs []record.Record
	for i := range 5 {
		recs = append(recs, record.Record{Topic: "t", Offset: int64(i), Value: fmt.Appendf(nil, `{"id":%d}`, i), LeaderEpoch: -1})
	}
	// A decoder kept out of the pool, so that the budget's count is the
	// sink's alone.
	dec, _, err := s.decoders.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := dec.Decode(ctx, recs)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, ingest.Decoded{TP: tp, Batch: batch, Recs: recs, Next: 5, Epoch: -1}); err != nil {
		t.Fatal(err)
	}
	s.TrackMemory()
	if held := budget.Stats().Files; held <= 0 {
		t.Fatalf("the budget holds %d bytes with two files uploading, want their buffers", held)
	}
	select {
	case <-s.FlushAsked():
	default:
		t.Fatal("the budget did not ask the sink to flush")
	}

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	flushed := make(chan error, 1)
	go func() { flushed <- s.Flush(short) }()
	select {
	case err := <-flushed:
		if err == nil {
			t.Fatal("a flush whose context ended while the uploads were in flight committed")
		}
	case <-time.After(10 * time.Second):
		close(st.Release)
		t.Fatal("the flush waited for the uploads past the end of its context", <-flushed)
	}
	if got := tbl.Snapshot().NumFiles; got != 0 {
		t.Fatalf("the table has %d files after the flush that ended, want 0", got)
	}

	go func() {
		time.Sleep(50 * time.Millisecond) // while the flush waits for the uploads
		close(st.Release)
	}()
	done, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Flush(done); err != nil {
		t.Fatal(err)
	}
	if held := budget.Stats().Files; held != 0 {
		t.Errorf("the budget holds %d bytes after the flush, want 0", held)
	}
	snap := tbl.Snapshot()
	if snap.NumFiles != 3 || snap.Txns[AppID(tp)] != 5 {
		t.Errorf("the table has %d files and offset %d, want 3 files (2+2+1 rows) and 5", snap.NumFiles, snap.Txns[AppID(tp)])
	}
}
