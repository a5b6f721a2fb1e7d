package changelog

import (
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/decodetest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// kind returns the type of kind k, for the column types below.
func kind(k schema.Kind) *schema.Type { return &schema.Type{Kind: k} }

// The column types the tests declare.
var (
	tBool, tInt, tLong, tDouble = kind(schema.Boolean), kind(schema.Int), kind(schema.Long), kind(schema.Double)
	tString, tBinary, tDate     = kind(schema.String), kind(schema.Binary), kind(schema.Date)
	tNTZ                        = kind(schema.TimestampNTZ)
)

func tDec(p, s int) *schema.Type { return &schema.Type{Kind: schema.Decimal, Precision: p, Scale: s} }

func null(name string, t *schema.Type) schema.Field {
	return schema.Field{Name: name, Type: t, Nullable: true}
}

// pick, names, quoteBytes and layoutOf are decodetest's.
var pick, names, quoteBytes, layoutOf = decodetest.Pick, decodetest.Names, decodetest.QuoteBytes, decodetest.Layout

// renderBatch renders the rows of b, which d decoded.
func renderBatch(t *testing.T, d *decode.Decoder, b *decode.Batch) []map[string]string {
	return decodetest.Render(t, d.Schema(), b.Columns, b.Rows)
}

// benchBatch is the number of records per Decode call in the benchmarks.
const benchBatch = 1000
