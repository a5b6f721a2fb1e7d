package encode_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/changelog"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/encode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// beforeRows decodes recs with a decoder of l and fills their updates'
// decodeAll decodes recs with layout l, failing tb on any error.
func decodeAll(tb testing.TB, l *spec.Layout, recs []record.Record) decode.Batch {
	tb.Helper()
	d, err := changelog.New(l, nil)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := d.Decode(tb.Context(), recs)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// before images with a second one, as the sink does.
func beforeRows(t *testing.T, l *spec.Layout, recs []record.Record) []encode.Row {
	t.Helper()
	return beforeRowsOf(t, l, recs, recs)
}

// beforeRowsOf decodes recs and fills the before images of their updates
// from events instead, records of the same rows.
func beforeRowsOf(t *testing.T, l *spec.Layout, recs, events []record.Record) []encode.Row {
	t.Helper()
	b := decodeAll(t, l, recs)
	rows, err := encode.Rows(l, l.Columns(), &b, recs)
	if err != nil {
		t.Fatal(err)
	}
	before, err := changelog.New(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := encode.Befores(t.Context(), before, l, l.Columns(), &b, events, rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// member returns member name of the JSON object of each record's value,
// inside payload when the value has one, as JSON text.
func member(t *testing.T, recs []record.Record, name string) []string {
	t.Helper()
	var out []string
	for _, r := range recs {
		var event map[string]json.RawMessage
		if err := json.Unmarshal(r.Value, &event); err != nil {
			t.Fatal(err)
		}
		if p, ok := event["payload"]; ok {
			if err := json.Unmarshal(p, &event); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, string(event[name]))
	}
	return out
}

// TestBeforesDebezium: an update's before image comes from its event's
// before (also inside payload), typed as the after image; Debezium output
// writes it, only the changed fields with keep_changed_fields_only. A
// delete keeps its row in before, an update with a null before writes
// null.
func TestBeforesDebezium(t *testing.T) {
	l := layoutOf(t, nil, &spec.Transformer{Format: spec.FormatDebeziumJSON,
		JSONOptions: &spec.JSONOptions{Schema: "id INT, name STRING, price DECIMAL(5,2)"}}, spec.TableConfiguration{})
	src := `"source":{"db":"inv","table":"t","ts_ms":1700000000000}`
	recs := []record.Record{
		{Topic: "src", Value: []byte(`{"before":{"id":1,"name":"a","price":1.5},"after":{"id":1,"name":"b","price":1.50},"op":"u",` + src + `}`)},
		{Topic: "src", Value: []byte(`{"schema":{},"payload":{"before":{"id":2,"name":"c","price":2},"after":{"id":2,"name":"c","price":3},"op":"u",` + src + `}}`)},
		{Topic: "src", Value: []byte(`{"before":null,"after":{"id":3,"name":"d","price":1},"op":"u",` + src + `}`)},
		{Topic: "src", Value: []byte(`{"before":{"id":4,"name":"e","price":1},"after":null,"op":"d",` + src + `}`)},
	}
	rows := beforeRows(t, l, recs)
	want := [][]any{{int32(1), "a", "1.50"}, {int32(2), "c", "2.00"}, nil, nil}
	for i, w := range want {
		if !reflect.DeepEqual(rows[i].Before, w) {
			t.Errorf("row %d: before %#v, want %#v", i, rows[i].Before, w)
		}
	}
	all := member(t, encodeRows(t, encode.New(&spec.KafkaSink{}), rows), "before")
	if w := []string{`{"id":1,"name":"a","price":1.50}`, `{"id":2,"name":"c","price":2.00}`, "null",
		`{"id":4,"name":"e","price":1.00}`}; !reflect.DeepEqual(all, w) {
		t.Errorf("before %q, want %q", all, w)
	}
	yes := true
	only := member(t, encodeRows(t, encode.New(&spec.KafkaSink{KeepChangedFieldsOnly: &yes}), rows), "before")
	if w := []string{`{"name":"a"}`, `{"price":2.00}`, "null", `{"id":4,"name":"e","price":1.00}`}; !reflect.DeepEqual(only, w) {
		t.Errorf("changed fields only: before %q, want %q", only, w)
	}
}

// TestBeforesCanal: the before image of a Canal event's i-th row is
// data[i] with old[i] over it, its strings typed as the columns; Canal
// output writes old, only the changed fields with
// keep_changed_fields_only, and Debezium output before. An update whose
// old does not have a row for each row of data has no before image.
func TestBeforesCanal(t *testing.T) {
	l := layoutOf(t, nil, &spec.Transformer{Format: spec.FormatCanalJSON,
		JSONOptions: &spec.JSONOptions{Schema: "id INT, name STRING, qty INT"}}, spec.TableConfiguration{})
	tail := `"database":"inv","table":"t","es":1700000000000,"ts":1700000000001,"isDdl":false}`
	recs := []record.Record{
		{Topic: "src", Value: []byte(`{"data":[{"id":"1","name":"b","qty":"5"},{"id":"2","name":"c","qty":"7"}],` +
			`"old":[{"name":"a"},{"qty":"6"}],"type":"UPDATE",` + tail)},
		{Topic: "src", Value: []byte(`{"data":[{"id":"3","name":"d","qty":"1"}],"old":null,"type":"UPDATE",` + tail)},
		{Topic: "src", Value: []byte(`{"data":[{"id":"4","name":"e","qty":"1"}],"old":null,"type":"INSERT",` + tail)},
		{Topic: "src", Value: []byte(`{"data":[{"id":"5","name":"f","qty":"1"}],"old":[],"type":"UPDATE",` + tail)},
	}
	rows := beforeRows(t, l, recs)
	want := [][]any{{int32(1), "a", int32(5)}, {int32(2), "c", int32(6)}, nil, nil, nil}
	for i, w := range want {
		if !reflect.DeepEqual(rows[i].Before, w) {
			t.Errorf("row %d: before %#v, want %#v", i, rows[i].Before, w)
		}
	}
	yes := true
	old := member(t, encodeRows(t, encode.New(&spec.KafkaSink{ValueFormat: spec.SinkFormatCanalJSON, KeepChangedFieldsOnly: &yes}), rows), "old")
	if w := []string{`[{"name":"a"}]`, `[{"qty":6}]`, "null", "null", "null"}; !reflect.DeepEqual(old, w) {
		t.Errorf("old %q, want %q", old, w)
	}
	all := member(t, encodeRows(t, encode.New(&spec.KafkaSink{ValueFormat: spec.SinkFormatCanalJSON}), rows), "old")
	if w := []string{`[{"id":1,"name":"a","qty":5}]`, `[{"id":2,"name":"c","qty":6}]`, "null", "null", "null"}; !reflect.DeepEqual(all, w) {
		t.Errorf("old %q, want %q", all, w)
	}
	before := member(t, encodeRows(t, encode.New(&spec.KafkaSink{}), rows), "before")
	if w := `{"id":2,"name":"c","qty":6}`; before[1] != w {
		t.Errorf("Debezium before %s, want %s", before[1], w)
	}
}

// TestBeforesBadEvents: an event whose before image cannot be had (not
// JSON, a before that is not an object, an old with another number of
// rows than data or a row that is not an object) leaves Before nil.
func TestBeforesBadEvents(t *testing.T) {
	for _, c := range []struct {
		format, event string
		bad           []string
	}{
		{spec.FormatDebeziumJSON, `{"before":{"id":1},"after":{"id":2},"op":"u"}`,
			[]string{`{`, `[]`, `{"before":[1],"after":{"id":2},"op":"u"}`, `{"before":"x","op":"u"}`, `{"payload":7}`,
				`{"payload":{"before":null}}`}},
		{spec.FormatCanalJSON, `{"data":[{"id":"2"}],"old":[{"id":"1"}],"type":"UPDATE","database":"d","table":"t"}`,
			[]string{`{`, `{"data":[{"id":"2"}],"old":[]}`, `{"data":[{"id":"2"}],"old":[null]}`, `{"data":[null],"old":[{"id":"1"}]}`,
				`{"data":{"id":"2"},"old":{"id":"1"}}`, `{"data":[],"old":[]}`,
				`{"data":[{"id":"2"}],"old":[{"id":"x"}],"type":"UPDATE"}`}},
	} {
		l := layoutOf(t, nil, &spec.Transformer{Format: c.format, JSONOptions: &spec.JSONOptions{Schema: "id INT"}},
			spec.TableConfiguration{})
		recs := []record.Record{{Topic: "src", Value: []byte(c.event)}}
		if rows := beforeRows(t, l, recs); !reflect.DeepEqual(rows[0].Before, []any{int32(1)}) {
			t.Fatalf("%s: before %#v", c.format, rows[0].Before)
		}
		for _, bad := range c.bad {
			rows := beforeRowsOf(t, l, recs, []record.Record{{Topic: "src", Value: []byte(bad)}})
			if rows[0].Before != nil {
				t.Errorf("%s %s: before %#v", c.format, bad, rows[0].Before)
			}
		}
	}
}

// TestBeforesOneBad: a before image that does not decode leaves its own
// update without Before, not the others of the batch.
func TestBeforesOneBad(t *testing.T) {
	l := layoutOf(t, nil, &spec.Transformer{Format: spec.FormatDebeziumJSON, JSONOptions: &spec.JSONOptions{Schema: "id INT"}},
		spec.TableConfiguration{})
	recs := []record.Record{
		{Topic: "src", Value: []byte(`{"before":{"id":1},"after":{"id":2},"op":"u"}`)},
		{Topic: "src", Value: []byte(`{"before":{"id":3},"after":{"id":4},"op":"u"}`)},
	}
	for _, bad := range []string{
		`{"before":{"id":{"a":1}},"after":{"id":4},"op":"u"}`,      // a row that does not decode
		`{"before":{"id":3},"after":{"id":4},"op":"u","source":7}`, // an event that does not
	} {
		events := []record.Record{recs[0], {Topic: "src", Value: []byte(bad)}}
		rows := beforeRowsOf(t, l, recs, events)
		if !reflect.DeepEqual(rows[0].Before, []any{int32(1)}) || rows[1].Before != nil {
			t.Errorf("%s: befores %#v, %#v", bad, rows[0].Before, rows[1].Before)
		}
	}
}
