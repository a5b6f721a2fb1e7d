package encode

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// fixed returns the encoder of s with its clock at 5 s past the epoch.
func fixed(s *spec.KafkaSink) Encoder {
	e := New(s)
	now := func() time.Time { return time.UnixMilli(5000) }
	switch x := e.(type) {
	case *debezium:
		x.now = now
	case *canal:
		x.now = now
	case *plainJSON:
		x.now = now
	}
	return e
}

var (
	intType = &schema.Type{Kind: schema.Int}
	strType = &schema.Type{Kind: schema.String}
	decType = &schema.Type{Kind: schema.Decimal, Precision: 5, Scale: 2}
)

// update is an update of table inv.t whose name changed.
func update() *Row {
	return &Row{Op: 'u', DB: "inv", Table: "t", TS: time.UnixMilli(1000), Topic: "src",
		Fields: []schema.Field{{Name: "id", Type: intType}, {Name: "name", Type: strType}, {Name: "price", Type: decType}},
		Values: []any{int32(1), "a", "1.50"}, Before: []any{int32(1), "b", "1.50"}}
}

func TestEncoders(t *testing.T) {
	yes := true
	del := update()
	del.Op, del.Before = 'd', nil
	ins := update()
	ins.Op, ins.Before, ins.DB, ins.Table, ins.TS = 'r', nil, "", "", time.Time{}
	for _, tc := range []struct {
		name string
		sink spec.KafkaSink
		row  *Row
		want string
	}{
		{"debezium update", spec.KafkaSink{}, update(),
			`{"before":{"id":1,"name":"b","price":1.50},"after":{"id":1,"name":"a","price":1.50},` +
				`"source":{"db":"inv","table":"t","ts_ms":1000},"op":"u","ts_ms":5000}`},
		{"debezium changed only, full table id", spec.KafkaSink{KeepChangedFieldsOnly: &yes, FullTableID: &yes}, update(),
			`{"before":{"name":"b"},"after":{"id":1,"name":"a","price":1.50},` +
				`"source":{"db":"inv","table":"inv.t","ts_ms":1000},"op":"u","ts_ms":5000}`},
		{"debezium delete", spec.KafkaSink{}, del,
			`{"before":{"id":1,"name":"a","price":1.50},"after":null,` +
				`"source":{"db":"inv","table":"t","ts_ms":1000},"op":"d","ts_ms":5000}`},
		{"debezium read of a topic", spec.KafkaSink{}, ins,
			`{"before":null,"after":{"id":1,"name":"a","price":1.50},` +
				`"source":{"db":null,"table":"src","ts_ms":null},"op":"r","ts_ms":5000}`},
		{"canal update", spec.KafkaSink{ValueFormat: spec.SinkFormatCanalJSON}, update(),
			`{"data":[{"id":1,"name":"a","price":1.50}],"old":[{"id":1,"name":"b","price":1.50}],"type":"UPDATE",` +
				`"database":"inv","table":"t","es":1000,"ts":5000,"isDdl":false}`},
		{"canal changed only", spec.KafkaSink{ValueFormat: spec.SinkFormatCanalJSON, KeepChangedFieldsOnly: &yes}, update(),
			`{"data":[{"id":1,"name":"a","price":1.50}],"old":[{"name":"b"}],"type":"UPDATE",` +
				`"database":"inv","table":"t","es":1000,"ts":5000,"isDdl":false}`},
		{"canal delete", spec.KafkaSink{ValueFormat: spec.SinkFormatCanalJSON}, del,
			`{"data":[{"id":1,"name":"a","price":1.50}],"old":null,"type":"DELETE",` +
				`"database":"inv","table":"t","es":1000,"ts":5000,"isDdl":false}`},
		{"canal read is an insert", spec.KafkaSink{ValueFormat: spec.SinkFormatCanalJSON}, ins,
			`{"data":[{"id":1,"name":"a","price":1.50}],"old":null,"type":"INSERT",` +
				`"database":null,"table":"src","es":5000,"ts":5000,"isDdl":false}`},
		{"json", spec.KafkaSink{ValueFormat: spec.SinkFormatJSON}, update(), `{"id":1,"name":"a","price":1.50}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fixed(&tc.sink).Value([]byte("x"), tc.row)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "x"+tc.want {
				t.Fatalf("got  %s\nwant x%s", got, tc.want)
			}
		})
	}
	if v, err := fixed(&spec.KafkaSink{ValueFormat: spec.SinkFormatJSON}).Value(nil, del); v != nil || err != nil {
		t.Fatalf("a JSON delete: %q, %v; want a tombstone", v, err)
	}
}

// TestDebeziumSchema: with include_schema the event is wrapped with the
// Connect schema of its row, and values follow the schema's types.
func TestDebeziumSchema(t *testing.T) {
	yes := true
	r := update()
	r.Fields = append(r.Fields,
		schema.Field{Name: "born", Type: &schema.Type{Kind: schema.Date}, Nullable: true},
		schema.Field{Name: "local", Type: &schema.Type{Kind: schema.TimestampNTZ}},
		schema.Field{Name: "tags", Type: &schema.Type{Kind: schema.Array, Elem: strType}})
	r.Values = append(r.Values, time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), time.UnixMicro(1_500_001).UTC(), []any{"x", nil})
	r.Values[2] = "-1.50"
	r.Before = nil
	out, err := fixed(&spec.KafkaSink{IncludeSchema: &yes}).Value(nil, r)
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Schema struct {
			Name   string `json:"name"`
			Fields []struct {
				Field  string            `json:"field"`
				Name   string            `json:"name"`
				Fields []json.RawMessage `json:"fields"`
			} `json:"fields"`
		} `json:"schema"`
		Payload struct {
			After map[string]any `json:"after"`
			Op    string         `json:"op"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(out, &ev); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if ev.Schema.Name != "inv.t.Envelope" || len(ev.Schema.Fields) != 5 || ev.Schema.Fields[1].Field != "after" ||
		ev.Schema.Fields[1].Name != "inv.t.Value" || len(ev.Schema.Fields[1].Fields) != 6 {
		t.Fatalf("schema: %s", out)
	}
	wantField := map[int]string{
		2: `{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"5"},"optional":false,"field":"price"}`,
		3: `{"type":"int32","name":"io.debezium.time.Date","version":1,"optional":true,"field":"born"}`,
		4: `{"type":"int64","name":"io.debezium.time.MicroTimestamp","version":1,"optional":false,"field":"local"}`,
		5: `{"type":"array","items":{"type":"string","optional":true},"optional":false,"field":"tags"}`,
	}
	for i, want := range wantField {
		if got := string(ev.Schema.Fields[1].Fields[i]); got != want {
			t.Errorf("field %d schema %s, want %s", i, got, want)
		}
	}
	// -150 unscaled is 0xff6a; 1969-12-31 is day -1.
	a := ev.Payload.After
	if a["price"] != "/2o=" || a["born"] != float64(-1) || a["local"] != float64(1_500_001) || ev.Payload.Op != "u" {
		t.Fatalf("payload: %s", out)
	}
}

func TestValues(t *testing.T) {
	for _, tc := range []struct {
		typ  *schema.Type
		v    any
		want string
	}{
		{strType, "a\"\\\n\r\t\x01é\xff<", `"a\"\\\n\r\t\u0001é` + "\ufffd" + `<"`},
		{&schema.Type{Kind: schema.Double}, math.NaN(), `"NaN"`},
		{&schema.Type{Kind: schema.Double}, math.Inf(-1), `"-Infinity"`},
		{&schema.Type{Kind: schema.Float}, float32(0.1), `0.1`},
		{&schema.Type{Kind: schema.Binary}, []byte{0, 1, 255}, `"AAH/"`},
		{&schema.Type{Kind: schema.Timestamp}, time.UnixMicro(1_700_000_000_123_456), `"2023-11-14T22:13:20.123456Z"`},
		{&schema.Type{Kind: schema.TimestampNTZ}, time.UnixMilli(0).UTC(), `"1970-01-01T00:00:00"`},
		{&schema.Type{Kind: schema.Date}, time.UnixMilli(0).UTC(), `"1970-01-01"`},
		{&schema.Type{Kind: schema.Decimal, Precision: 38, Scale: 0}, "-12345678901234567890123", `-12345678901234567890123`},
		{&schema.Type{Kind: schema.Map, Key: intType, Value: strType}, [][2]any{{int32(1), "a"}, {int32(2), nil}}, `{"1":"a","2":null}`},
		{&schema.Type{Kind: schema.Struct, Fields: []schema.Field{{Name: "b", Type: intType}, {Name: "a", Type: intType}}},
			map[string]any{"a": int32(1)}, `{"b":null,"a":1}`},
	} {
		got, err := appendValue(nil, tc.typ, tc.v, false)
		if err != nil || string(got) != tc.want || !json.Valid(got) {
			t.Errorf("%s %#v: %s, %v; want %s", tc.typ, tc.v, got, err, tc.want)
		}
	}
	if _, err := appendValue(nil, intType, "x", false); err == nil {
		t.Error("a string in an INT column: no error")
	}
	for n, want := range map[int64]string{0: "AA==", 127: "fw==", 128: "AIA=", -1: "/w==", -128: "gA==", -129: "/38="} {
		got, err := appendValue(nil, &schema.Type{Kind: schema.Decimal, Precision: 10}, decimalFor(n), true)
		if err != nil || string(got) != `"`+want+`"` {
			t.Errorf("decimal %d as Connect bytes: %s, %v; want %s", n, got, err, want)
		}
	}
}

// decimalFor returns n as decimal text.
func decimalFor(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
