package avro

import (
	"math/big"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/avroschema"
)

// fuzzSchema nests records, arrays, maps, unions and decimals, and has a
// writer-only field for the skipping code.
const fuzzSchema = `{"type":"record","name":"F","fields":[
	{"name":"id","type":"long"},
	{"name":"s","type":["null","string"]},
	{"name":"m","type":{"type":"map","values":{"type":"array","items":["null","int",{"type":"record","name":"P","fields":[{"name":"x","type":"double"},{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}}]}]}}},
	{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":20,"scale":2}},
	{"name":"d9","type":{"type":"fixed","name":"D4","size":4,"logicalType":"decimal","precision":9,"scale":0}},
	{"name":"skipped","type":{"type":"array","items":{"type":"map","values":["null","P",{"type":"fixed","name":"Z","size":0}]}}},
	{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
	{"name":"b","type":"boolean"},
	{"name":"f","type":"float"}
]}`

// fuzzReader drops the writer's "skipped" field.
const fuzzReader = `{"type":"record","name":"F","fields":[
	{"name":"id","type":"long"},
	{"name":"s","type":["null","string"]},
	{"name":"m","type":{"type":"map","values":{"type":"array","items":["null","int",{"type":"record","name":"P","fields":[{"name":"x","type":"double"},{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}}]}]}}},
	{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":20,"scale":2}},
	{"name":"d9","type":{"type":"fixed","name":"D4","size":4,"logicalType":"decimal","precision":9,"scale":0}},
	{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
	{"name":"b","type":"boolean"},
	{"name":"f","type":"float"}
]}`

// FuzzDecode decodes arbitrary bytes and checks that Decode never panics,
// that a datum it accepts makes a well-formed row, and that after an error
// DiscardFields leaves the row well formed too.
func FuzzDecode(f *testing.F) {
	w, r := mustParse(f, fuzzSchema), mustParse(f, fuzzReader)
	seed := marshal(f, w, map[string]any{
		"id": int64(1), "s": "x",
		"m": map[string]any{"k": []any{nil, 3, map[string]any{"P": map[string]any{"x": 1.5, "e": "B"}}}},
		"d": big.NewRat(-12345, 100), "d9": big.NewRat(7, 1),
		"skipped": []any{map[string]any{"a": nil, "b": map[string]any{"P": map[string]any{"x": 0.0, "e": "A"}}}},
		"ts":      int64(1714566896789), "b": true, "f": float32(1),
	})
	f.Add(seed)
	f.Add([]byte{})
	f.Add(seed[:len(seed)/2])
	cols, err := avroschema.Columns(r, "value")
	if err != nil {
		f.Fatal(err)
	}
	d, err := NewDecoder(w, r, cols, "value", nil)
	if err != nil {
		f.Fatal(err)
	}
	b, err := rows.NewBuilder(cols)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b.Reset()
		b.BeginRow()
		if err := d.Decode(b, 0, data); err != nil {
			b.DiscardFields(0, len(cols))
		}
		if err := b.EndRow(); err != nil {
			t.Fatalf("EndRow: %v", err)
		}
		if _, err := rowstest.Render(b.Schema(), rowstest.Rows(b.Columns())[0]); err != nil {
			t.Fatalf("the row does not match the schema: %v", err)
		}
	})
}
