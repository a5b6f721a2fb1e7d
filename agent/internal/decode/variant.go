package decode

import (
	"context"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
)

// variantPart parses a key or value as one JSON text into a VARIANT column,
// as Spark's parse_json does. A null key or value is a null VARIANT, and so
// is an empty or all-blank one (not corrupt, as for JSON with a schema);
// the JSON text null is a VARIANT null, not a SQL NULL. Bytes that are not
// one JSON text leave the column null and make the record corrupt.
type variantPart struct {
	b     *rows.Builder
	field int
	enc   variant.Encoder
}

func (p *variantPart) Decode(_ context.Context, data []byte) error {
	p.b.Field(p.field)
	if blank(data) {
		p.b.Null()
		return nil
	}
	if err := writeVariant(p.b, &p.enc, data); err != nil {
		p.b.Null()
		return badInput(err)
	}
	return nil
}

// blank reports whether data holds only JSON whitespace (nil included).
func blank(data []byte) bool {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	return true
}

// writeVariant encodes the JSON text json with enc and writes it to b's
// current position; the error (wrapping [variant.ErrSyntax]) says json is
// not one JSON text a VARIANT holds, and nothing is written then. The
// encoded bytes are copied into b's arena, since enc reuses its buffers.
func writeVariant(b *rows.Builder, enc *variant.Encoder, json []byte) error {
	meta, value, err := enc.Encode(json)
	if err != nil {
		return err
	}
	buf := b.Alloc(len(meta) + len(value))
	n := copy(buf, meta)
	copy(buf[n:], value)
	b.Variant(buf[:n:n], buf[n:])
	return nil
}

// write writes v, a value encoded already (see [Decoder.DecodeParsed]),
// without copying it: as a record's bytes, it stays unchanged until the
// batch is written.
func (p *variantPart) write(v variant.Encoded) {
	p.b.Field(p.field)
	p.b.Variant(v.Metadata, v.Value)
}
