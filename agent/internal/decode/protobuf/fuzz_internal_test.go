package protobuf

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
)

// FuzzDecode decodes arbitrary bytes as an Event (every mapped type) and as
// a Node (recursion expanded twice) and checks that Decode never panics and
// leaves a row that ends: complete when it succeeds, after DiscardFields
// when it fails.
func FuzzDecode(f *testing.F) {
	event, node := message(f, "Event"), message(f, "Node")
	f.Add(encode(f, event, eventFull))
	f.Add(encode(f, event, `{"picked": {"sku": "p"}, "kind": 5, "byId": {"1": {}}}`))
	f.Add(encode(f, node, `{"name": "r", "children": [{"children": [{"name": "x"}]}]}`))
	f.Add([]byte{0x0a, 0x80})
	type target struct {
		d *Decoder
		b *rows.Builder
		n int
	}
	var targets []target
	for _, tc := range []struct {
		md    protoreflect.MessageDescriptor
		depth int
	}{{event, -1}, {node, 3}} {
		cols := columns(f, tc.md, tc.depth)
		d, err := NewDecoder(tc.md, tc.depth, cols)
		if err != nil {
			f.Fatal(err)
		}
		b, err := rows.NewBuilder(cols)
		if err != nil {
			f.Fatal(err)
		}
		targets = append(targets, target{d, b, len(cols)})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tg := range targets {
			tg.b.Reset()
			tg.b.BeginRow()
			if err := tg.d.Decode(tg.b, 0, data); err != nil {
				tg.b.DiscardFields(0, tg.n)
			}
			if err := tg.b.EndRow(); err != nil {
				t.Fatalf("the row does not end: %v", err)
			}
			if rs := rowstest.Rows(tg.b.Columns()); len(rs) != 1 {
				t.Fatalf("%d rows, want 1", len(rs))
			}
		}
	})
}
