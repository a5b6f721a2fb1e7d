package decode

import (
	"context"
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Part decodes one side of a record, its key or its value, into that side's
// top-level columns of the Builder's open row. Each format has its own;
// package changelog wraps the key of a Debezium table whose events carry
// their Connect schema.
type Part interface {
	// Decode writes the columns of data, which is nil for a null key or
	// value (every column null). It returns nil; an error wrapping
	// errBadInput when data cannot be decoded, with what it wrote of the
	// record discarded or, where the format keeps the fields that did
	// decode (JSON, as Spark's from_json), kept; or another error, which
	// stops the batch (see [Decoder.Decode]).
	Decode(ctx context.Context, data []byte) error
}

// newPart returns the part decoder of sp, whose columns start at top-level
// field first of b's rows; src is its registry source, nil when its schema
// does not come from a registry; dropped tests the names of the fields
// the table leaves out (see droppedFields), nil for none.
func newPart(b *rows.Builder, first int, sp *spec.Part, src *Source, dropped func(string) bool) (Part, error) {
	switch {
	case sp.Format == "" || sp.Format == spec.FormatString:
		return &bytesPart{b: b, field: first, text: sp.Format == spec.FormatString}, nil
	case sp.Variant():
		return &variantPart{b: b, field: first}, nil
	case sp.Format == spec.FormatJSON && sp.Fields != nil:
		d, err := newJSONDecoder(b, sp.Transformer)
		if err != nil {
			return nil, err
		}
		return &jsonPart{d: d, t: compileJSON(&schema.Type{Kind: schema.Struct, Fields: sp.Fields}, false), first: first}, nil
	case sp.Format == spec.FormatAvro && sp.Transformer != nil && sp.Transformer.AvroOptions != nil:
		return newAvroPart(b, first, sp, src, dropped)
	case sp.Format == spec.FormatProtobuf && sp.Transformer != nil && sp.Transformer.ProtobufOptions != nil:
		return newProtobufPart(b, first, sp, src)
	}
	return nil, fmt.Errorf("format %q without a schema is not supported", sp.Format)
}

// bytesPart writes the bytes to one column: as they are to a BINARY
// column, or, for a STRING column, as UTF-8 with invalid sequences replaced
// as Spark does.
type bytesPart struct {
	b     *rows.Builder
	field int
	text  bool
}

func (p *bytesPart) Decode(_ context.Context, data []byte) error {
	p.b.Field(p.field)
	switch {
	case data == nil:
		p.b.Null()
	case p.text:
		p.b.Bytes(validUTF8(p.b, data))
	default:
		p.b.Bytes(data)
	}
	return nil
}

// jsonPart parses a JSON object into the fields of a schema, as Spark's
// from_json does in PERMISSIVE mode.
type jsonPart struct {
	d     jsonDecoder
	t     *jtype
	first int
}

func (p *jsonPart) Decode(_ context.Context, data []byte) error {
	if data != nil && p.d.decode(p.t, p.first, data) {
		return errBadJSON
	}
	return nil
}
