package decode

import (
	"context"
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/avro"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registry"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/avroschema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// staticPart decodes unframed data with one decoder: Avro written with an
// inline or file schema, Protobuf messages of a descriptor set.
type staticPart struct {
	b            *rows.Builder
	first, width int
	dec          datumDecoder
}

func (p *staticPart) Decode(_ context.Context, data []byte) error {
	if data == nil {
		return nil
	}
	if err := p.dec.Decode(p.b, p.first, data); err != nil {
		p.b.DiscardFields(p.first, p.first+p.width)
		return badInput(err)
	}
	return nil
}

// newAvroPart returns the part of an Avro transformer: plain binary Avro of
// its inline or file schema, or registry-framed Avro resolved to the
// subject's version the table started with. The schema's top-level fields
// dropped reports (nil: none) are skipped.
func newAvroPart(b *rows.Builder, first int, sp *spec.Part, src *Source, dropped func(string) bool) (Part, error) {
	ao := sp.Transformer.AvroOptions
	if ao.SchemaRegistry == nil {
		text := ao.Schema
		if ao.SchemaFilePath != "" {
			text = ao.SchemaFileContent
		}
		s, err := avroschema.Parse(text)
		if err != nil {
			return nil, fmt.Errorf("the Avro schema: %w", err)
		}
		dec, err := avro.NewDecoder(s, s, sp.Fields, sp.Column, dropped)
		if err != nil {
			return nil, fmt.Errorf("the Avro schema: %w", err)
		}
		return &staticPart{b: b, first: first, width: len(sp.Fields), dec: dec}, nil
	}
	if src == nil || src.avroReader == nil {
		return nil, fmt.Errorf("subject %q is not resolved", ao.SchemaRegistry.ConfluentOptions.Subject)
	}
	cols, column := sp.Fields, sp.Column
	compile := func(ctx context.Context, id int, _ []int) (*writer, error) {
		s, w, err := fetchWriter(ctx, src, id, registry.TypeAvro)
		if w != nil || err != nil {
			return w, err
		}
		ws, err := parseAvro(s)
		if err != nil {
			return &writer{err: fmt.Errorf("schema id %d: %w", id, err)}, nil
		}
		if wcols, err := avroschema.Columns(ws, column); err == nil {
			if err := checkEvolution(ctx, src, id, cols, wcols); err != nil {
				return nil, err
			}
		}
		dec, err := avro.NewDecoder(ws, src.avroReader, cols, column, dropped)
		if err != nil {
			return &writer{err: fmt.Errorf("schema id %d cannot be read as the table's schema (subject %q, schema id %d): %w",
				id, src.Subject, src.Latest.ID, err)}, nil
		}
		return &writer{dec: dec}, nil
	}
	return &registryPart{b: b, first: first, width: len(cols), compile: compile, writers: map[int]map[string]*writer{}}, nil
}
