package decode

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registry"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// datumDecoder decodes one Avro datum or Protobuf message into a part's
// columns, from top-level field first of b's open row.
type datumDecoder interface {
	Decode(b *rows.Builder, first int, data []byte) error
}

// writer is how a part decodes data written with one writer schema: its
// compiled decoder, or why records written with it cannot be decoded (an
// id the registry does not know, a schema of another format, a schema the
// table's cannot read).
type writer struct {
	dec datumDecoder
	err error
	// retry is when a writer whose id the registry did not know is looked
	// up again (a registry replica behind a new registration knows it by
	// then); zero for every other writer.
	retry time.Time
}

// Bounds of what a part remembers of writers that cannot decode.
const (
	// unknownRetry is how long an id the registry did not know stays
	// unknown to the part.
	unknownRetry = time.Minute
	// maxErrorWriters is how many writers that cannot decode a part
	// keeps; past it, records with other bad ids or message indexes are
	// looked at anew each time (the registry client remembers unknown ids
	// itself), so that hostile framing cannot grow the cache.
	maxErrorWriters = 256
)

// writerCompiler compiles the writer of schema id; for Protobuf, indexes
// are the record's message indexes. An error is the registry's or a
// [*SchemaChangedError], not the record's: the batch stops.
type writerCompiler func(ctx context.Context, id int, indexes []int) (*writer, error)

// registryPart decodes data in Confluent's wire format: a zero byte, the
// 4-byte schema id, for Protobuf the message indexes, then the datum. It
// compiles a decoder per writer schema (and message) on first sight and
// keeps it for the decoder's life.
type registryPart struct {
	b            *rows.Builder
	first, width int
	// indexes says records carry Protobuf message indexes.
	indexes bool
	compile writerCompiler
	// writers holds the writers by schema id, then by the raw bytes of
	// the message indexes ("" without); errorWriters counts those that
	// cannot decode.
	writers      map[int]map[string]*writer
	errorWriters int
}

func (p *registryPart) Decode(ctx context.Context, data []byte) error {
	if data == nil {
		return nil
	}
	id, payload, err := registry.ParseHeader(data)
	if err != nil {
		return badInput(err)
	}
	var raw []byte
	if p.indexes {
		var rest []byte
		if len(payload) > 0 && payload[0] == 0 {
			rest = payload[1:] // [0], the common case, in its short form
		} else if _, rest, err = registry.ParseMessageIndexes(payload); err != nil {
			return badInput(fmt.Errorf("message indexes: %w", err))
		}
		raw, payload = payload[:len(payload)-len(rest)], rest
	}
	byIndexes := p.writers[id]
	w := byIndexes[string(raw)]
	if w == nil || w.err != nil && !w.retry.IsZero() && time.Now().After(w.retry) {
		if w, err = p.newWriter(ctx, id, raw); err != nil {
			return err
		}
	}
	if w.err != nil {
		return badInput(w.err)
	}
	if err := w.dec.Decode(p.b, p.first, payload); err != nil {
		p.b.DiscardFields(p.first, p.first+p.width)
		return badInput(err)
	}
	return nil
}

// newWriter compiles and keeps the writer of schema id and raw message
// indexes.
func (p *registryPart) newWriter(ctx context.Context, id int, raw []byte) (*writer, error) {
	var indexes []int
	if p.indexes {
		indexes = []int{0}
		if len(raw) > 1 || len(raw) == 1 && raw[0] != 0 {
			var err error
			if indexes, _, err = registry.ParseMessageIndexes(raw); err != nil {
				return nil, err
			}
		}
	}
	w, err := p.compile(ctx, id, indexes)
	if err != nil {
		return nil, err
	}
	if w.err != nil {
		if p.errorWriters >= maxErrorWriters {
			return w, nil
		}
		p.errorWriters++
	}
	if p.writers[id] == nil {
		p.writers[id] = map[string]*writer{}
	}
	p.writers[id][string(raw)] = w
	return w, nil
}

// fetchWriter fetches writer schema id of type wantType from src's
// registry. When records written with id cannot be decoded at all (the
// registry does not know it, or it is a schema of another type), it returns
// a writer with err set instead; an error is the registry's.
func fetchWriter(ctx context.Context, src *Source, id int, wantType string) (registry.Schema, *writer, error) {
	s, err := src.Client.SchemaByID(ctx, id)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return s, &writer{err: fmt.Errorf("schema id %d is not in the registry", id), retry: time.Now().Add(unknownRetry)}, nil
	case err != nil:
		return s, nil, fmt.Errorf("fetching schema id %d: %w", id, err)
	case s.Type != wantType:
		return s, &writer{err: fmt.Errorf("schema id %d is a %s schema, not %s", id, s.Type, wantType)}, nil
	}
	return s, nil, nil
}

// checkEvolution returns a [*SchemaChangedError] when writer columns wcols
// add columns to the table's cols and the subject of src has moved on since
// the table started; nil otherwise, in which case the added columns are
// not the table's and are skipped.
func checkEvolution(ctx context.Context, src *Source, id int, cols, wcols []schema.Field) error {
	if id == src.Latest.ID || !schema.Adds(cols, wcols) {
		return nil
	}
	return src.changed(ctx)
}
