package columns

import (
	"context"
	"errors"
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// maxImageRounds bounds the decodings Images makes: each adds the
// columns the records ask for, and nested fields may take a round per
// level.
const maxImageRounds = 64

// Images returns the columns of the row images of recs, records of
// the changelog value part p (DEBEZIUM_JSON, CANAL_JSON): the records are
// decoded as a table whose part has no columns yet would decode them, all
// of them at once (so that a field's type is that of every record that
// has it, as JSON sampling gives), adding the columns each decoding asks
// for, until none is new. So the
// columns are those of the rows, typed as the decoder types them (by the
// event's schema, Canal's DDL and types, or inference), never those of
// the change events' envelopes; and in the order the rows bring them. A
// record that does not decode tells nothing.
func Images(ctx context.Context, p *spec.Part, recs []record.Record) ([]schema.Field, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	tr := *p.Transformer
	jo := spec.JSONOptions{}
	if tr.JSONOptions != nil {
		jo = *tr.JSONOptions
	}
	// Static modes (NONE, RESCUE) take the sample's columns too: only the
	// sampling adds them.
	jo.SchemaEvolutionMode = spec.SchemaEvolutionAddNewColumns
	tr.JSONOptions = &jo
	img := *p
	img.Transformer, img.Fields = &tr, []schema.Field{}
	layout := &spec.Layout{Key: spec.Part{Column: spec.KeyColumn}, Value: img, Op: true, Source: true}
	for range maxImageRounds {
		dec, err := ingest.NewDecoder(layout, nil, decode.Options{SkipBad: true, WholeChunk: true})
		if err != nil {
			return nil, runner.Fatal(fmt.Errorf("build the decoder that samples the row images: %w", err))
		}
		_, err = dec.Decode(ctx, recs)
		var nc *decode.NewColumnsError
		switch {
		case err == nil:
			return layout.Value.Fields, nil
		case !errors.As(err, &nc):
			return nil, fmt.Errorf("sample the row images: %w", err)
		}
		next, changed := nc.Apply(layout.Value.Fields)
		if !changed {
			return nil, runner.Fatal(fmt.Errorf("a bug: sampling the row images asks for columns it has: %w", nc))
		}
		layout.Value.Fields = next
	}
	return nil, runner.Fatal(fmt.Errorf("the row images' columns did not settle after %d rounds", maxImageRounds))
}
