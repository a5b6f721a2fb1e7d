package ingest

import (
	"context"
	"runtime"
	"sync"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/changelog"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// DecodeChunk is how many records a table decodes and writes at a time: the
// column batches a decoder keeps for reuse stay small, whatever the size of
// a fetch, and so do the data pages they become.
const DecodeChunk = 1024

// Decoded is one chunk of a fetched batch, decoded: what a table loop
// writes to its open file, in the order the partition's records came.
type Decoded struct {
	TP kafka.TopicPartition
	// Dec holds the chunk's rows until they are written, when it goes
	// back to its pool; nil for a fetched batch without records to write,
	// and when no decoder could be made (err says why).
	Dec   *decode.Decoder
	Batch decode.Batch
	// Recs are the chunk's records; version is the pool's schema version
	// dec has, the columns of the rows. The writer decodes again only the
	// records from the one that asked for new columns on (see
	// [decode.NewColumnsError]).
	Recs    []record.Record
	Version int
	// Err is what stopped the decoding: a [*decode.NewColumnsError], with
	// the rows of the records before the one that asked in Batch, which
	// the writer goes on from; a record in FAILFAST mode, a registry that
	// cannot be reached; or a decoder's bug, which fails the table.
	Err error
	// Next is the offset to read after the chunk: past its last record,
	// and for a fetched batch's final chunk the batch's next offset. A
	// flush between two chunks of a batch commits the first with its own.
	Next int64
	// Epoch is the leader epoch of the fetched record batch that ends at
	// next, for a final chunk whose batch has one (see [kafka.Batch]); -1
	// otherwise, when the last record's is next's (see leaderEpoch).
	Epoch int32
	// Last marks a fetched batch's final chunk, which carries the batch's
	// end offset and the batch itself, whose memory the chunks point into
	// (see [kafka.Batch]): once the chunk is written, or dropped, free
	// gives it back.
	Last bool
	End  int64
	src  *SharedBatch
}

// LeaderEpoch returns the leader epoch to validate d.next with after a
// leader change: the fetched batch's, else that of d's last record; -1
// when neither is known.
func (d *Decoded) LeaderEpoch() int32 {
	if d.Epoch >= 0 {
		return d.Epoch
	}
	if n := len(d.Recs); n > 0 {
		return d.Recs[n-1].LeaderEpoch
	}
	return -1
}

// Free releases, on a fetched batch's last chunk, the batch: once every
// subscriber of the partition released it, its memory goes back to the
// budget and its pooled buffers to their pools. The batch's chunks must be
// written or dropped by then.
func (d *Decoded) Free() {
	if d.Last {
		d.src.Release()
	}
}

// DecoderPool hands out a table's decoders: one decodes each chunk, and
// holds it until the table loop has written it. Its size bounds both the
// chunks decoding at once (one per core, so that the partitions of one table
// use every core) and the decoded chunks waiting to be written; the
// ranges of a split partition that wait for the ones before them decode
// with extra decoders instead (see splitter).
//
// What its idle decoders keep from one chunk to the next (see
// [decode.Decoder.Retained]) is held in the memory budget, in an account of
// the pool's: from the time each comes back until it is handed out again.
// When the budget asks the account for room, the pool drops its idle
// decoders at once; the ones it then makes grow their buffers again. A
// decoder out of the pool holds its chunk's rows until the table writes
// them, which may wait for a fetch: that memory is not counted, so that the
// budget never waits on it.
type DecoderPool struct {
	sources *decode.Sources
	// Opts are the options of every decoder the pool makes.
	Opts decode.Options
	// tokens holds a decoder, or nil for one not made yet: most tables
	// read too few partitions at once to need them all.
	tokens chan *decode.Decoder

	mu sync.Mutex
	// layout is what new decoders decode into, version counts its
	// changes (see swap), and versions holds the version each decoder
	// was made for.
	layout   *spec.Layout
	version  int
	versions map[*decode.Decoder]int
	// spares are decoders given back while every token was home, which
	// extra hands out again.
	spares []*decode.Decoder
	// mem holds held in the budget: the sum of kept, per idle decoder
	// (in tokens or spares) what it retained when it came back. shedding
	// says the budget asked for room and held is not yet 0 (a Get is
	// taking a decoder out): until it is, decoders that come back are
	// dropped rather than counted, so that the request is answered.
	// closed says the pool counts nothing any more, and done ends listen.
	mem      *memory.Account
	kept     map[*decode.Decoder]int64
	held     int64
	shedding bool
	closed   bool
	done     chan struct{}
}

// NewDecoderPool returns a pool of decoders for layout and sources,
// starting with first, which decode.New made from them, whose memory it
// counts in budget, which must not be nil. End it with [DecoderPool.Close].
func NewDecoderPool(layout *spec.Layout, sources *decode.Sources, first *decode.Decoder, budget *memory.Budget) *DecoderPool {
	p := &DecoderPool{layout: layout, sources: sources, tokens: make(chan *decode.Decoder, runtime.GOMAXPROCS(0)+1),
		versions: map[*decode.Decoder]int{first: 0}, mem: budget.NewAccount(), kept: map[*decode.Decoder]int64{},
		done: make(chan struct{})}
	go p.listen()
	p.tokens <- first
	for len(p.tokens) < cap(p.tokens) {
		p.tokens <- nil
	}
	return p
}

// Size returns how many decoders the pool hands out at once.
func (p *DecoderPool) Size() int { return cap(p.tokens) }

// Get takes a decoder of the pool's current layout and its version,
// waiting while all are busy; an error when ctx ends first.
func (p *DecoderPool) Get(ctx context.Context) (*decode.Decoder, int, error) {
	select {
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	case d := <-p.tokens:
		p.mu.Lock()
		defer p.mu.Unlock()
		p.uncount(d)
		if d != nil && p.versions[d] == p.version {
			return d, p.version, nil
		}
		p.forget(d)
		d, err := NewDecoder(p.layout, p.sources, p.Opts)
		if err != nil {
			select {
			case p.tokens <- nil:
			default: // an extra decoder came back meanwhile and took the place
			}
			return nil, 0, err
		}
		p.versions[d] = p.version
		return d, p.version, nil
	}
}

// Swap makes the decoders get hands out from now on decode into layout, the
// table's columns as of schema version version; those made before are
// dropped as they come back.
func (p *DecoderPool) Swap(layout *spec.Layout, version int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.layout, p.version = layout, version
}

// extra makes a decoder of the pool's current layout besides its tokens,
// or reuses a spare one, without waiting: for a chunk of a split range that
// must wait for the ranges before it (see splitter), which would otherwise
// hold a token while the range the table is writing needs one.
func (p *DecoderPool) extra() (*decode.Decoder, int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.spares) > 0 {
		d := p.spares[len(p.spares)-1]
		p.spares = p.spares[:len(p.spares)-1]
		p.uncount(d)
		if p.versions[d] == p.version {
			return d, p.version, nil
		}
		p.forget(d)
	}
	d, err := NewDecoder(p.layout, p.sources, p.Opts)
	if err != nil {
		return nil, 0, err
	}
	p.versions[d] = p.version
	return d, p.version, nil
}

// NewDecoder returns a decoder of layout, whose registry parts sources
// resolved, with options o.
func NewDecoder(layout *spec.Layout, sources *decode.Sources, o decode.Options) (*decode.Decoder, error) {
	d, err := changelog.New(layout, sources)
	if err != nil {
		return nil, err
	}
	d.SetOptions(o)
	return d, nil
}

// maxSpares is how many decoders beyond its tokens a pool keeps for extra
// to hand out again: a new decoder grows its buffers chunk after chunk.
const maxSpares = 64

// Put gives back a decoder taken with get or made by extra. One given back
// while every token is home (an extra one) becomes a spare for extra, up to
// maxSpares; beyond that it is dropped.
func (p *DecoderPool) Put(d *decode.Decoder) {
	n := d.Retained()
	p.mu.Lock()
	defer p.mu.Unlock()
	// Counted before it is home, where listen may drop it, and before
	// another goroutine may take it; dropped while the pool sheds.
	if p.shedding {
		p.forget(d)
		d = nil
	} else {
		p.count(d, n)
	}
	select {
	case p.tokens <- d:
		return
	default:
	}
	switch {
	case d == nil:
	case len(p.spares) < maxSpares:
		p.spares = append(p.spares, d)
	default:
		p.forget(d)
	}
}

// count records that idle decoder d retains n bytes. The caller holds p.mu.
func (p *DecoderPool) count(d *decode.Decoder, n int64) {
	if p.closed {
		return
	}
	p.held += n - p.kept[d]
	p.kept[d] = n
	p.mem.Set(p.held)
}

// uncount takes decoder d, handed out or dropped, out of what the budget
// holds. The caller holds p.mu.
func (p *DecoderPool) uncount(d *decode.Decoder) {
	n, ok := p.kept[d]
	if !ok {
		return
	}
	delete(p.kept, d)
	p.held -= n
	p.mem.Set(p.held) // 0 answers the budget's request, if any
	if p.held == 0 {
		p.shedding = false
	}
}

// forget drops decoder d, which the pool no longer hands out. The caller
// holds p.mu.
func (p *DecoderPool) forget(d *decode.Decoder) {
	delete(p.versions, d)
	p.uncount(d)
}

// listen drops the pool's idle decoders each time the budget asks for
// room, until the pool closes.
func (p *DecoderPool) listen() {
	for {
		select {
		case <-p.done:
			return
		case <-p.mem.Flush():
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return
		}
		for _, d := range p.spares {
			p.forget(d)
		}
		p.spares = nil
		var home []*decode.Decoder
	drain:
		for {
			select {
			case d := <-p.tokens:
				home = append(home, d)
			default:
				break drain
			}
		}
		for _, d := range home {
			p.forget(d)
			p.tokens <- nil // only a Get's receive runs meanwhile: the places are free
		}
		// Nothing idle is held now but a decoder a Get took from tokens
		// and has not yet uncounted, which it does next: setting what is
		// held answers the request when that is nothing, and else the
		// pool sheds until it is.
		p.mem.Set(p.held)
		p.shedding = p.held > 0
		p.mu.Unlock()
	}
}

// Close gives back to the budget what the pool's decoders retained; the
// pool counts nothing after it. Decoders still out may come back, and are
// not counted.
func (p *DecoderPool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	close(p.done)
	p.mem.Close()
	p.closed, p.kept, p.held = true, nil, 0
}

// decoderSource hands decodePartition the decoders of its chunks: a
// table's [DecoderPool], or a split range's (see rangeDecoders).
type decoderSource interface {
	// Get takes a decoder and the schema version it decodes into; an
	// error when ctx ends first, or when no decoder could be made.
	Get(ctx context.Context) (*decode.Decoder, int, error)
	// Put gives back a decoder get returned.
	Put(d *decode.Decoder)
}

// decodePartition decodes the batches the source sends on in for tp, a
// chunk at a time, and sends the chunks on out in order, until ctx ends or,
// when until is positive, a batch reaches it (a triggered run's end, or a
// split range's, where the batch is cut). next is the offset the partition is read from: the
// records of a batch before it, which another subscriber of the partition
// asked for, are skipped. What it cannot deliver goes back: decoders to the
// pool, batches to the source. Since the chunks it did deliver point into
// the batch it releases, ctx must end only once nothing writes them.
func decodePartition(ctx context.Context, tp kafka.TopicPartition, in <-chan *SharedBatch, out chan<- Decoded, pool decoderSource,
	next, until int64) {
	for {
		var b *SharedBatch
		select {
		case <-ctx.Done():
			return
		case b = <-in:
		}
		recs, bnext, epoch := b.Records, b.Next, b.LeaderEpoch
		if until > 0 && bnext > until {
			epoch = -1 // the batch's is past until
			i := 0
			for i < len(recs) && recs[i].Offset < until {
				i++
			}
			recs, bnext = recs[:i], until
		}
		skip := 0
		for skip < len(recs) && recs[skip].Offset < next {
			skip++
		}
		recs = recs[skip:] // none when the batch has nothing new; it still reports its end
		for start := 0; ; start += DecodeChunk {
			d := Decoded{TP: tp, Next: next, Epoch: -1}
			if chunk := recs[start:min(start+DecodeChunk, len(recs))]; len(chunk) > 0 {
				d.Next = chunk[len(chunk)-1].Offset + 1
				dec, version, err := pool.Get(ctx)
				if err != nil && ctx.Err() != nil {
					b.Release()
					return
				}
				d.Dec, d.Err, d.Recs, d.Version = dec, err, chunk, version
				if err == nil {
					d.Batch, d.Err = dec.Decode(ctx, chunk)
				}
			}
			if start+DecodeChunk >= len(recs) {
				d.Last, d.Next, d.End, d.src, d.Epoch = true, max(bnext, next), b.End, b, epoch
			}
			select {
			case out <- d:
			case <-ctx.Done():
				if d.Dec != nil {
					pool.Put(d.Dec)
				}
				b.Release()
				return
			}
			if d.Last {
				break
			}
		}
		next = max(bnext, next)
		if until > 0 && next >= until {
			return
		}
	}
}
