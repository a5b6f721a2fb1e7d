package encode

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Befores fills [Row.Before] of the updates among rows, which [Rows] made
// from b, a batch that a decoder of layout built from recs, when layout's
// value is DEBEZIUM_JSON or CANAL_JSON. The before image comes from the
// update's own event: a Debezium event's before (inside payload when the
// event has its schema), or for the i-th row of a Canal event the row
// data[i] with the fields of old[i] over it (Canal's old holds only the
// changed columns' previous values). Each such event is rewritten as an
// insert of its before image and decoded again with dec, a decoder of
// layout that is not the one that built b (b's columns are its memory),
// so a before value has the same Go type and text as the after value of
// its field: a Canal string "1" of an INT column is 1 in both.
//
// An update keeps a nil Before when its event has no before image (a
// Debezium before that is null or not an object, a Canal event without
// old), when the image does not decode (also when it brings columns the
// table does not have yet), or not to as many rows as the event had. Only
// the end of ctx is an error.
func Befores(ctx context.Context, dec *decode.Decoder, layout *spec.Layout, fields []schema.Field, b *decode.Batch,
	recs []record.Record, rows []Row) error {
	format := layout.Value.Format
	if format != spec.FormatDebeziumJSON && format != spec.FormatCanalJSON {
		return nil
	}
	// The updates of each record, in order; and the records rewritten.
	updates := map[int][]int{}
	var order []int
	for i := range rows {
		if rows[i].Op != 'u' {
			continue
		}
		rec := RecordOf(b, i)
		if updates[rec] == nil {
			order = append(order, rec)
		}
		updates[rec] = append(updates[rec], i)
	}
	var befores []record.Record
	var from []int // the record each of befores rewrites
	for _, rec := range order {
		r := recs[rec]
		var ok bool
		if format == spec.FormatDebeziumJSON {
			r.Value, ok = debeziumBefore(r.Value)
		} else {
			r.Value, ok = canalBefore(r.Value)
		}
		if ok {
			befores = append(befores, r)
			from = append(from, rec)
		}
	}
	if len(befores) == 0 {
		return nil
	}
	images, err := beforeImages(ctx, dec, layout, fields, befores)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("decode the before images: %w", err)
		}
		// One of them does not decode: each alone, without those.
		images = make([][][]any, len(befores))
		for j := range befores {
			if one, err := beforeImages(ctx, dec, layout, fields, befores[j:j+1]); err == nil {
				images[j] = one[0]
			}
		}
	}
	for j, imgs := range images {
		ups := updates[from[j]]
		if len(imgs) != len(ups) {
			continue
		}
		for k, img := range imgs {
			rows[ups[k]].Before = img
		}
	}
	return nil
}

// beforeImages decodes befores, events rewritten as inserts of their
// before images, with dec and returns the row images of each: nil for a
// row that does not decode (_corrupt_record). A record that does not
// decode, or columns the table does not have yet, fail them all.
func beforeImages(ctx context.Context, dec *decode.Decoder, layout *spec.Layout, fields []schema.Field,
	befores []record.Record) ([][][]any, error) {
	b, err := dec.Decode(ctx, befores)
	if err != nil {
		return nil, err
	}
	rows, err := Rows(layout, fields, &b, befores)
	if err != nil {
		return nil, err
	}
	corrupt := corruptColumn(fields, &b)
	images := make([][][]any, len(befores))
	for i := range rows {
		var img []any
		if corrupt == nil || corrupt[i].IsNull() {
			img = rows[i].Values
		}
		j := RecordOf(&b, i)
		images[j] = append(images[j], img)
	}
	return images, nil
}

// RecordOf returns the index of the record that row i of b was decoded
// from.
func RecordOf(b *decode.Batch, i int) int {
	if b.RowRecord != nil {
		return int(b.RowRecord[i])
	}
	return i
}

// debeziumBefore returns Debezium event v rewritten as the insert of its
// before image ({"op": "c", "after": <before>}, inside payload when v has
// one); false when v has no before object.
func debeziumBefore(v []byte) ([]byte, bool) {
	var event map[string]json.RawMessage
	if json.Unmarshal(v, &event) != nil {
		return nil, false
	}
	if p, ok := event["payload"]; ok {
		inner, ok := debeziumBefore(p)
		if !ok {
			return nil, false
		}
		event["payload"] = inner
		return marshal(event)
	}
	before := event["before"]
	if !isObject(before) {
		return nil, false
	}
	event["op"], event["after"], event["before"] = json.RawMessage(`"c"`), before, json.RawMessage("null")
	return marshal(event)
}

// canalBefore returns Canal event v rewritten as the INSERT of its rows'
// before images: each row of data with the fields of its old row over
// it; false when v has no old array of as many objects as data.
func canalBefore(v []byte) ([]byte, bool) {
	var event map[string]json.RawMessage
	var data, old []map[string]json.RawMessage
	if json.Unmarshal(v, &event) != nil || json.Unmarshal(event["data"], &data) != nil ||
		json.Unmarshal(event["old"], &old) != nil || len(old) != len(data) || len(data) == 0 {
		return nil, false
	}
	for i, o := range old {
		if data[i] == nil || o == nil {
			return nil, false
		}
		for k, x := range o {
			data[i][k] = x
		}
	}
	d, err := json.Marshal(data)
	if err != nil {
		return nil, false
	}
	event["data"], event["old"], event["type"] = d, json.RawMessage("null"), json.RawMessage(`"INSERT"`)
	return marshal(event)
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{'
	}
	return false
}

// marshal returns the JSON of event; false when it has none.
func marshal(event map[string]json.RawMessage) ([]byte, bool) {
	b, err := json.Marshal(event)
	return b, err == nil
}
