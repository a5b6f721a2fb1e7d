package ingest

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// releases counts the bytes given back to it.
type releases struct{ n atomic.Int64 }

func (r *releases) Acquire(context.Context, int64) error { return nil }
func (r *releases) Grow(int64)                           {}
func (r *releases) Release(n int64)                      { r.n.Add(n) }

// fetched returns a batch of the records at offsets [from, to), whose next
// offset is next, for one subscriber, which releases it to budget.
func fetched(tp kafka.TopicPartition, from, to, next int64, budget kafka.Budget) *SharedBatch {
	b := kafka.Batch{TP: tp, Next: next, End: 1000, Bytes: 10*(to-from) + 1}
	for o := from; o < to; o++ {
		b.Records = append(b.Records, record.Record{Topic: tp.Topic, Partition: int32(tp.Partition), Offset: o, Value: []byte("v")})
	}
	return shareBatch(b, budget, 1)
}

// TestDecodePartition checks the chunks decodePartition sends: in order, a
// decodeChunk of records at most, each with the offset to read after it
// (so that a flush between two chunks of a batch commits the first with
// its own offset), the batch's end and memory on its last chunk only, a
// triggered run's batch cut at its end offset, and the records of a batch
// before the partition's next offset skipped.
func TestDecodePartition(t *testing.T) {
	layout := &spec.Layout{Value: spec.Part{Column: spec.ValueColumn}}
	first, err := decode.New(layout, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := NewDecoderPool(layout, nil, first, memory.New(math.MaxInt64))
	defer pool.Close()
	tp := kafka.TopicPartition{Topic: "t", Partition: 3}
	in, out := make(chan *SharedBatch), make(chan Decoded)
	var budget releases
	until := int64(2*DecodeChunk + 600)
	done := make(chan struct{})
	go func() {
		defer close(done)
		decodePartition(context.Background(), tp, in, out, pool, 10, until)
	}()
	// A batch before the partition's next offset (10), one of two and a
	// half chunks that starts before it, whose next offset skips 5 (say, a
	// transaction marker), an empty one, then one that passes until.
	n := int64(2*DecodeChunk + 510)
	go func() {
		in <- fetched(tp, 0, 5, 5, &budget)
		in <- fetched(tp, 0, n, n+5, &budget)
		in <- fetched(tp, n+5, n+5, n+5, &budget)
		in <- fetched(tp, n+5, n+200, n+200, &budget)
	}()
	type want struct {
		rows int
		next int64
		last bool
	}
	wants := []want{
		{0, 10, true},
		{DecodeChunk, 10 + DecodeChunk, false}, {DecodeChunk, 10 + 2*DecodeChunk, false}, {500, n + 5, true},
		{0, n + 5, true},
		{int(until - n - 5), until, true},
	}
	for i, w := range wants {
		var d Decoded
		select {
		case d = <-out:
		case <-time.After(10 * time.Second):
			t.Fatalf("chunk %d never came", i)
		}
		if d.Err != nil || d.Batch.Rows != w.rows || d.Next != w.next || d.Last != w.last {
			t.Errorf("chunk %d: %d rows, next %d, last %v, err %v; want %+v", i, d.Batch.Rows, d.Next, d.Last, d.Err, w)
		}
		if d.Last != (d.src != nil) || d.Last != (d.End == 1000) {
			t.Errorf("chunk %d: end %d, batch %v; want them on the last chunk of a batch only", i, d.End, d.src != nil)
		}
		if (d.Dec != nil) != (w.rows > 0) {
			t.Errorf("chunk %d: decoder %v for %d rows", i, d.Dec, w.rows)
		}
		if d.Dec != nil {
			pool.Put(d.Dec)
		}
		d.Free()
	}
	select {
	case <-done: // reached until
	case <-time.After(10 * time.Second):
		t.Fatal("decodePartition did not return at until")
	}
}

// TestDecodePartitionCanceled checks that a batch decodePartition could not
// deliver gives its memory back.
func TestDecodePartitionCanceled(t *testing.T) {
	layout := &spec.Layout{Value: spec.Part{Column: spec.ValueColumn}}
	first, err := decode.New(layout, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tp := kafka.TopicPartition{Topic: "t"}
	in := make(chan *SharedBatch, 1)
	var budget releases
	in <- fetched(tp, 0, 10, 10, &budget)
	done := make(chan struct{})
	pool := NewDecoderPool(layout, nil, first, memory.New(math.MaxInt64))
	defer pool.Close()
	go func() {
		defer close(done)
		decodePartition(ctx, tp, in, make(chan Decoded), pool, 0, 0)
	}()
	time.Sleep(50 * time.Millisecond) // the chunk is decoded, and waits to be sent
	cancel()
	<-done
	if budget.n.Load() != 101 {
		t.Errorf("released %d bytes, want the batch's 101", budget.n.Load())
	}
}

// decodedChunk makes a pool of decoders of record values, counted in
// budget, and returns its layout, its first decoder, the pool and a
// decoder taken from it that decoded a chunk of records.
func decodedChunk(t *testing.T, budget *memory.Budget) (*spec.Layout, *decode.Decoder, *DecoderPool, *decode.Decoder) {
	t.Helper()
	layout := &spec.Layout{Value: spec.Part{Column: spec.ValueColumn}}
	first, err := decode.New(layout, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := NewDecoderPool(layout, nil, first, budget)
	recs := make([]record.Record, DecodeChunk)
	for i := range recs {
		recs[i] = record.Record{Topic: "t", Offset: int64(i), Value: []byte("v")}
	}
	d, _, err := pool.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Decode(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	return layout, first, pool, d
}

// TestDecoderPoolCountsRetained checks that what a pool's decoders keep is
// held in the budget from the time they come back, given back when the
// pool drops one (its schema changed) and when the pool closes.
func TestDecoderPoolCountsRetained(t *testing.T) {
	budget := memory.New(math.MaxInt64)
	layout, first, pool, d := decodedChunk(t, budget)
	ctx := context.Background()
	if used := budget.Stats().Used; used != 0 {
		t.Fatalf("a decoder out of the pool is counted: %d bytes", used)
	}
	pool.Put(d)
	kept := d.Retained()
	if used := budget.Stats().Used; kept < DecodeChunk || used != kept {
		t.Fatalf("after Put the budget holds %d bytes, want the decoder's %d (at least a value per record)", used, kept)
	}
	pool.Swap(layout, 1) // the decoder of version 0 is dropped when it comes out
	for range pool.Size() {
		d, _, err := pool.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Put(d)
	}
	if used := budget.Stats().Used; used != 0 {
		t.Errorf("after the pool dropped its decoder the budget holds %d bytes, want 0", used)
	}
	pool.Close() // the decoders still out come back after it, uncounted
	pool.Put(first)
	if used := budget.Stats().Used; used != 0 {
		t.Errorf("after Close and a Put the budget holds %d bytes, want 0", used)
	}
}

// TestDecoderPoolShedsWhenAsked checks that a pool whose idle decoders
// hold more than the budget has drops them when the budget asks for room.
func TestDecoderPoolShedsWhenAsked(t *testing.T) {
	budget := memory.New(1 << 10) // less than a chunk's rows
	_, _, pool, d := decodedChunk(t, budget)
	defer pool.Close()
	ctx := context.Background()
	pool.Put(d)
	deadline := time.Now().Add(10 * time.Second)
	for budget.Stats().Used != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the budget still holds %+v", budget.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	if st := budget.Stats(); st.Flushes == 0 {
		t.Errorf("the budget never asked the pool for room: %+v", st)
	}
	if d2, _, err := pool.Get(ctx); err != nil || d2 == d {
		t.Errorf("Get after the pool shed = %p, %v; want a new decoder", d2, err)
	}
}
