package protobuf

import (
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/protobuf/protobuftest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
)

// FuzzDecode decodes arbitrary bytes as each differential target's message
// (Event, with every mapped type; Node, recursion expanded; P2, proto2) and
// checks that Decode never panics, leaves a row that ends (complete when it
// succeeds, after DiscardFields when it fails), fails only where the
// reference decoder fails, and otherwise gives the reference's row.
func FuzzDecode(f *testing.F) {
	event, node := message(f, "Event"), message(f, "Node")
	f.Add(protobuftest.Encode(f, event, eventFull))
	f.Add(protobuftest.Encode(f, event, `{"picked": {"sku": "p"}, "kind": 5, "byId": {"1": {}}}`))
	f.Add(protobuftest.Encode(f, node, `{"name": "r", "children": [{"children": [{"name": "x"}]}]}`))
	f.Add([]byte{0x0a, 0x80})
	targets := diffTargets(f)
	for _, tg := range targets {
		tg.strict = false // malformed messages: Decode checks less than protobuf-go
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tg := range targets {
			tg.check(t, data)
			tg.b.Reset()
			tg.b.BeginRow()
			if err := tg.d.Decode(tg.b, 0, data); err != nil {
				tg.b.DiscardFields(0, len(tg.cols))
			}
			if err := tg.b.EndRow(); err != nil {
				t.Fatalf("%s: the row does not end: %v", tg.name, err)
			}
			if rs := rowstest.Rows(tg.b.Columns()); len(rs) != 1 {
				t.Fatalf("%s: %d rows, want 1", tg.name, len(rs))
			}
		}
	})
}
