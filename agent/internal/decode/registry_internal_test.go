package decode

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/decodetest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/protobuf"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/protobuf/protobuftest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registry"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

const (
	regKey    = "reg-key"
	regSecret = "reg-secret"
)

// Versions of the Avro subject orders-value: v2 adds qty with a default,
// v3 adds note.
const (
	ordersV1 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"}]}`
	ordersV2 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},` +
		`{"name":"qty","type":"int","default":7}]}`
	ordersV3 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},` +
		`{"name":"qty","type":"int","default":7},{"name":"note","type":["null","string"],"default":null}]}`
	// ordersWide is v2 with an extra field, registered under another
	// subject: a writer ahead of the table's subject.
	ordersWide = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},` +
		`{"name":"qty","type":"int","default":7},{"name":"extra","type":"string","default":""}]}`
)

// newRegistry returns a fake registry that wants the test's credentials.
func newRegistry(t *testing.T) *srfake.Registry {
	t.Helper()
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(regKey+":"+regSecret))
	reg := srfake.New(srfake.WithAuth(auth))
	t.Cleanup(reg.Close)
	return reg
}

// regClient returns a client of reg with the test's credentials.
func regClient(t *testing.T, reg *srfake.Registry) *registry.Client {
	t.Helper()
	c, err := registry.New(registry.Config{URL: reg.URL(), APIKey: regKey, APISecret: regSecret})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// register registers s under subject and returns its id.
func register(t *testing.T, reg *srfake.Registry, subject string, s sr.Schema) int {
	t.Helper()
	id, _, err := reg.RegisterSchema(subject, s)
	if err != nil {
		t.Fatalf("registering under %s: %v", subject, err)
	}
	return id
}

// countPaths counts the requests to reg whose path starts with prefix.
func countPaths(reg *srfake.Registry, prefix string) *atomic.Int64 {
	var n atomic.Int64
	reg.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, prefix) {
			n.Add(1)
		}
		return false
	})
	return &n
}

// frame prepends Confluent's header (and Protobuf message indexes) to
// payload.
func frame(t *testing.T, id int, indexes []int, payload []byte) []byte {
	t.Helper()
	var h sr.ConfluentHeader
	b, err := h.AppendEncode(nil, id, indexes)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, payload...)
}

// avroBytes encodes v with the Avro schema text.
func avroBytes(t *testing.T, text string, v any) []byte {
	t.Helper()
	data, err := avro.Marshal(avro.MustParse(text), v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// registryTable returns a table whose value comes from subject of the
// pipeline connection's registry, in format (AVRO or PROTOBUF) and mode.
func registryTable(format, subject, mode, message string) *spec.Table {
	so := &spec.SchemaRegistryOptions{ConfluentOptions: spec.ConfluentOptions{Subject: subject}}
	tr := &spec.Transformer{Format: format}
	if format == spec.FormatAvro {
		tr.AvroOptions = &spec.AvroOptions{SchemaRegistry: so, ParseMode: mode}
	} else {
		so.ProtobufMessageName = message
		tr.ProtobufOptions = &spec.ProtobufOptions{SchemaRegistry: so, ParseMode: mode}
	}
	return &spec.Table{
		DestinationTable: "t",
		ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{"orders"}, ValueTransformer: tr}},
	}
}

// clientsFor answers every connection name with c.
func clientsFor(c *registry.Client) func(string) (*registry.Client, error) {
	return func(string) (*registry.Client, error) { return c, nil }
}

// resolved resolves layout against c and returns its decoder.
func resolved(t *testing.T, layout *spec.Layout, prev []schema.Field, c *registry.Client) *Decoder {
	t.Helper()
	srcs, err := Resolve(context.Background(), layout, prev, clientsFor(c))
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	d, err := New(layout, srcs)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return d
}

// rendered decodes recs with d and renders every row; the batch must not
// fail.
func rendered(t *testing.T, d *Decoder, recs []record.Record) ([]map[string]string, Stats) {
	t.Helper()
	rs, st, err := decodeRows(d, recs)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	out := make([]map[string]string, len(rs))
	for i, row := range rs {
		if out[i], err = rowstest.Render(d.Schema(), row); err != nil {
			t.Fatal(err)
		}
	}
	return out, st
}

// pick, names, quoteBytes and layoutOf are decodetest's.
var pick, names, quoteBytes, layoutOf = decodetest.Pick, decodetest.Names, decodetest.QuoteBytes, decodetest.Layout

// ordersRegistry registers v1 and v2 of orders-value and a Protobuf schema
// under another subject; it returns their ids.
func ordersRegistry(t *testing.T) (reg *srfake.Registry, v1, v2, pb int) {
	reg = newRegistry(t)
	v1 = register(t, reg, "orders-value", sr.Schema{Schema: ordersV1})
	v2 = register(t, reg, "orders-value", sr.Schema{Schema: ordersV2})
	pb = register(t, reg, "other-value", sr.Schema{Type: sr.TypeProtobuf, Schema: "syntax = \"proto3\";\nmessage M { int32 a = 1; }\n"})
	return reg, v1, v2, pb
}

type order struct {
	ID    int64   `avro:"id"`
	Name  string  `avro:"name"`
	Qty   int32   `avro:"qty"`
	Note  *string `avro:"note"`
	Extra string  `avro:"extra"`
}

func TestRegistryAvro(t *testing.T) {
	reg, v1, v2, pb := ordersRegistry(t)
	c := regClient(t, reg)
	layout := layoutOf(t, registryTable(spec.FormatAvro, "orders-value", "", ""))
	if !layout.Value.Pending() || !layout.CorruptRecord {
		t.Fatalf("a registry Avro value is pending and PERMISSIVE: %+v", layout)
	}
	d := resolved(t, layout, nil, c)
	if got := names(layout.Columns()); got != "key,id,name,qty,_corrupt_record" {
		t.Fatalf("columns %s, want the latest version's", got)
	}

	good2 := frame(t, v2, nil, avroBytes(t, ordersV2, order{ID: 2, Name: "b", Qty: 3}))
	good1 := frame(t, v1, nil, avroBytes(t, ordersV1, order{ID: 1, Name: "a"}))
	truncated := good2[:len(good2)-2]
	tests := []struct {
		name    string
		value   []byte
		want    string // id name qty
		corrupt bool
	}{
		{"latest", good2, `2 "b" 3`, false},
		{"older version takes the default", good1, `1 "a" 7`, false},
		{"tombstone", nil, `null null null`, false},
		{"unknown id", frame(t, 9999, nil, avroBytes(t, ordersV2, order{ID: 2, Name: "b"})), `null null null`, true},
		{"bad magic byte", append([]byte{1}, good2[1:]...), `null null null`, true},
		{"three bytes", []byte{0, 0, 0}, `null null null`, true},
		{"empty", []byte{}, `null null null`, true},
		{"protobuf schema id", frame(t, pb, nil, []byte{8, 1}), `null null null`, true},
		{"truncated payload", truncated, `null null null`, true},
	}
	var recs []record.Record
	for i, tc := range tests {
		recs = append(recs, record.Record{Topic: "orders", Partition: 1, Offset: int64(i), Key: []byte("k"), Value: tc.value})
	}
	rows, st := rendered(t, d, recs)
	wantCorrupt := 0
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pick(rows[i], "id", "name", "qty"); got != tc.want {
				t.Errorf("id name qty = %s, want %s", got, tc.want)
			}
			if got := rows[i]["key"]; got != `b"k"` {
				t.Errorf("key = %s, want the record's key", got)
			}
			want := "null"
			if tc.corrupt {
				want = "b" + quoteBytes(tc.value)
			}
			if got := rows[i][spec.CorruptRecordColumn]; got != want {
				t.Errorf("_corrupt_record = %s, want %s", got, want)
			}
		})
		if tc.corrupt {
			wantCorrupt++
		}
	}
	if st.Corrupt != wantCorrupt {
		t.Errorf("Stats.Corrupt = %d, want %d", st.Corrupt, wantCorrupt)
	}

	// FAILFAST: the first bad record stops the batch with a RecordError.
	fl := layoutOf(t, registryTable(spec.FormatAvro, "orders-value", spec.ParseModeFailFast, ""))
	if fl.CorruptRecord {
		t.Error("a FAILFAST-only layout has a _corrupt_record column")
	}
	fd := resolved(t, fl, nil, c)
	for i, tc := range tests {
		if !tc.corrupt {
			continue
		}
		_, err := fd.Decode(context.Background(), []record.Record{
			{Topic: "orders", Partition: 1, Offset: 10, Value: good2},
			{Topic: "orders", Partition: 1, Offset: 11, Value: nil},
			{Topic: "orders", Partition: 1, Offset: 12 + int64(i), Value: tc.value},
		})
		var re *RecordError
		if !errors.As(err, &re) {
			t.Errorf("%s, FAILFAST: %v, want a *RecordError", tc.name, err)
			continue
		}
		if re.Topic != "orders" || re.Partition != 1 || re.Offset != 12+int64(i) || re.Side != "value" {
			t.Errorf("%s, FAILFAST: %+v, want orders[1]@%d value", tc.name, re, 12+i)
		}
		if msg := err.Error(); !strings.Contains(msg, "orders[1]@") || !strings.Contains(msg, "FAILFAST") {
			t.Errorf("%s, FAILFAST: %q does not name the record and the mode", tc.name, msg)
		}
	}
	// The good ones still decode in FAILFAST.
	if rows, st := rendered(t, fd, []record.Record{{Value: good1}, {Value: good2}, {Value: nil}}); st.Corrupt != 0 ||
		pick(rows[0], "id", "qty") != "1 7" || pick(rows[1], "id", "qty") != "2 3" || pick(rows[2], "id") != "null" {
		t.Errorf("FAILFAST good records: %v %+v", rows, st)
	}
}

func TestRegistryAvroEvolution(t *testing.T) {
	reg, _, v2, _ := ordersRegistry(t)
	wide := register(t, reg, "wide-value", sr.Schema{Schema: ordersWide})
	c := regClient(t, reg)
	d := resolved(t, layoutOf(t, registryTable(spec.FormatAvro, "orders-value", "", "")), nil, c)

	// A writer with more fields than the table, while the subject has not
	// moved on: the extra field is skipped.
	rows, st := rendered(t, d, []record.Record{{Value: frame(t, wide, nil, avroBytes(t, ordersWide, order{ID: 5, Name: "w", Qty: 1, Extra: "x"}))}})
	if got := pick(rows[0], "id", "name", "qty", "extra"); got != `5 "w" 1 <none>` || st.Corrupt != 0 {
		t.Fatalf("wide writer: %s (%d corrupt), want its known fields", got, st.Corrupt)
	}

	// v3 adds a field: a record with its id stops the batch.
	v3 := register(t, reg, "orders-value", sr.Schema{Schema: ordersV3})
	note := "n"
	_, err := d.Decode(context.Background(), []record.Record{
		{Value: frame(t, v2, nil, avroBytes(t, ordersV2, order{ID: 1, Name: "a"}))},
		{Value: frame(t, v3, nil, avroBytes(t, ordersV3, order{ID: 2, Name: "b", Note: &note}))},
	})
	var changed *SchemaChangedError
	if !errors.As(err, &changed) || changed.Subject != "orders-value" || changed.From != v2 || changed.To != v3 {
		t.Fatalf("a record with v3: %v, want a SchemaChangedError from %d to %d", err, v2, v3)
	}
	var re *RecordError
	if errors.As(err, &re) {
		t.Errorf("a schema change is not a record error: %v", err)
	}

	// Resolved again, with the previous columns, the table gains note.
	l := layoutOf(t, registryTable(spec.FormatAvro, "orders-value", "", ""))
	d = resolved(t, l, []schema.Field{null("key", &schema.Type{Kind: schema.Binary}), null("id", tLong), null("name", tString), null("qty", tInt)}, c)
	if got := names(l.Columns()); got != "key,id,name,qty,note,_corrupt_record" {
		t.Fatalf("columns after v3: %s", got)
	}
	rows, st = rendered(t, d, []record.Record{{Value: frame(t, v3, nil, avroBytes(t, ordersV3, order{ID: 2, Name: "b", Note: &note}))}})
	if got := pick(rows[0], "id", "qty", "note"); got != `2 0 "n"` || st.Corrupt != 0 {
		t.Errorf("v3 record after the restart: %s", got)
	}
}

func TestRegistryAvroUnavailable(t *testing.T) {
	reg, v1, v2, _ := ordersRegistry(t)
	c := regClient(t, reg)
	d := resolved(t, layoutOf(t, registryTable(spec.FormatAvro, "orders-value", "", "")), nil, c)
	var down atomic.Bool
	down.Store(true)
	reg.Intercept(func(w http.ResponseWriter, _ *http.Request) bool {
		if !down.Load() {
			return false
		}
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error_code":50301,"message":"down"}`))
		return true
	})
	ids := countPaths(reg, "/schemas/ids/")
	rec := func(i int) record.Record {
		if i%2 == 0 {
			return record.Record{Topic: "orders", Offset: int64(i), Value: frame(t, v1, nil, avroBytes(t, ordersV1, order{ID: int64(i), Name: "a"}))}
		}
		return record.Record{Topic: "orders", Offset: int64(i), Value: frame(t, v2, nil, avroBytes(t, ordersV2, order{ID: int64(i), Name: "b", Qty: 1}))}
	}
	_, err := d.Decode(context.Background(), []record.Record{rec(0)})
	var re *RecordError
	if !errors.Is(err, registry.ErrUnavailable) || errors.As(err, &re) {
		t.Fatalf("Decode with the registry down: %v, want an error wrapping ErrUnavailable, not a record error", err)
	}

	down.Store(false)
	ids.Store(0)
	var recs []record.Record
	for i := range 200 {
		recs = append(recs, rec(i))
	}
	for range 3 {
		rows, st := rendered(t, d, recs)
		if st.Corrupt != 0 || len(rows) != 200 || pick(rows[199], "id", "qty") != "199 1" || pick(rows[198], "id", "qty") != "198 7" {
			t.Fatalf("Decode once the registry is back: %d rows, %d corrupt, last %v", len(rows), st.Corrupt, rows[len(rows)-1])
		}
	}
	if n := ids.Load(); n != 2 {
		t.Errorf("%d schema id requests for 2 ids over 600 records, want 2", n)
	}
}

// Protobuf subjects: common-proto is referenced by events-value, whose
// second message has a nested one.
const (
	commonProto = `syntax = "proto3";
package tributary.common;
message Source { string host = 1; int32 port = 2; }
`
	eventsProto = `syntax = "proto3";
package tributary.reg;
import "common.proto";
import "google/protobuf/timestamp.proto";
message Click {
  string user = 1;
  google.protobuf.Timestamp at = 2;
  tributary.common.Source source = 3;
}
message View {
  message Inner { string user = 1; string page = 2; }
  string user = 1;
  string page = 2;
  int64 millis = 3;
  Inner inner = 4;
}
`
)

// eventsRegistry registers the Protobuf subjects and returns the id of
// events-value.
func eventsRegistry(t *testing.T) (*srfake.Registry, int) {
	reg := newRegistry(t)
	register(t, reg, "common-proto", sr.Schema{Type: sr.TypeProtobuf, Schema: commonProto})
	id := register(t, reg, "events-value", sr.Schema{Type: sr.TypeProtobuf, Schema: eventsProto,
		References: []sr.SchemaReference{{Name: "common.proto", Subject: "common-proto", Version: 1}}})
	return reg, id
}

// compileEvents compiles eventsProto as a producer would.
func compileEvents(t *testing.T) protoreflect.FileDescriptor {
	t.Helper()
	fd, err := protobuf.Compile(context.Background(), eventsProto, map[string]string{"common.proto": commonProto})
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

func TestRegistryProtobuf(t *testing.T) {
	reg, id := eventsRegistry(t)
	c := regClient(t, reg)
	fd := compileEvents(t)
	click := fd.Messages().ByName("Click")
	view := fd.Messages().ByName("View")
	inner := view.Messages().ByName("Inner")

	clickRec := frame(t, id, []int{0}, protobuftest.Encode(t, click, `{"user":"u1","at":"2024-01-02T03:04:05Z","source":{"host":"h","port":9}}`))
	if clickRec[5] != 0 || len(clickRec) < 7 {
		t.Fatalf("[0] is not framed in its short form: % x", clickRec[:6])
	}
	viewRec := frame(t, id, []int{1}, protobuftest.Encode(t, view, `{"user":"u2","page":"p","millis":"5","inner":{"page":"q"}}`))
	innerRec := frame(t, id, []int{1, 0}, protobuftest.Encode(t, inner, `{"user":"u3","page":"r"}`))
	outOfRange := frame(t, id, []int{2}, protobuftest.Encode(t, view, `{"user":"u4"}`))
	nestedOutOfRange := frame(t, id, []int{1, 3}, protobuftest.Encode(t, view, `{"user":"u5"}`))
	badIndexes := append(frame(t, id, nil, nil), 0x7f)

	t.Run("first message", func(t *testing.T) {
		l := layoutOf(t, registryTable(spec.FormatProtobuf, "events-value", "", ""))
		d := resolved(t, l, nil, c)
		if got := names(l.Columns()); got != "key,user,at,source,_corrupt_record" {
			t.Fatalf("columns %s, want Click's", got)
		}
		rows, st := rendered(t, d, []record.Record{{Value: clickRec}, {Value: viewRec}, {Value: innerRec}, {Value: outOfRange},
			{Value: nestedOutOfRange}, {Value: badIndexes}, {Value: nil}})
		want := []string{
			`"u1" 2024-01-02T03:04:05Z {host="h" port=9}`,
			`"u2" null null`,
			`"u3" null null`,
			`null null null`,
			`null null null`,
			`null null null`,
			`null null null`,
		}
		for i, w := range want {
			if got := pick(rows[i], "user", "at", "source"); got != w {
				t.Errorf("row %d: user at source = %s, want %s", i, got, w)
			}
			corrupt := i >= 3 && i <= 5
			if got := rows[i][spec.CorruptRecordColumn]; (got != "null") != corrupt {
				t.Errorf("row %d: _corrupt_record = %s, corrupt %v", i, got, corrupt)
			}
		}
		if st.Corrupt != 3 {
			t.Errorf("Stats.Corrupt = %d, want 3", st.Corrupt)
		}
	})

	t.Run("protobuf_message_name", func(t *testing.T) {
		for _, name := range []string{"View", "tributary.reg.View"} {
			l := layoutOf(t, registryTable(spec.FormatProtobuf, "events-value", "", name))
			d := resolved(t, l, nil, c)
			if got := names(l.Columns()); got != "key,user,page,millis,inner,_corrupt_record" {
				t.Fatalf("%s: columns %s, want View's", name, got)
			}
			rows, st := rendered(t, d, []record.Record{{Value: viewRec}, {Value: innerRec}, {Value: clickRec}})
			for i, w := range []string{`"u2" "p" 5 {user=null page="q"}`, `"u3" "r" null null`, `"u1" null null null`} {
				if got := pick(rows[i], "user", "page", "millis", "inner"); got != w {
					t.Errorf("%s row %d: %s, want %s", name, i, got, w)
				}
			}
			if st.Corrupt != 0 {
				t.Errorf("%s: %d corrupt", name, st.Corrupt)
			}
		}
		l := layoutOf(t, registryTable(spec.FormatProtobuf, "events-value", "", "Nope"))
		if _, err := Resolve(context.Background(), l, nil, clientsFor(c)); err == nil || !strings.Contains(err.Error(), "Nope") {
			t.Errorf("Resolve with an unknown message: %v", err)
		}
	})

	t.Run("FAILFAST", func(t *testing.T) {
		l := layoutOf(t, registryTable(spec.FormatProtobuf, "events-value", spec.ParseModeFailFast, ""))
		d := resolved(t, l, nil, c)
		for _, bad := range [][]byte{outOfRange, nestedOutOfRange, badIndexes} {
			_, err := d.Decode(context.Background(), []record.Record{{Topic: "ev", Partition: 2, Offset: 40, Value: clickRec},
				{Topic: "ev", Partition: 2, Offset: 41, Value: bad}})
			var re *RecordError
			if !errors.As(err, &re) || re.Offset != 41 || re.Partition != 2 || re.Topic != "ev" {
				t.Errorf("FAILFAST % x: %v, want a RecordError at ev[2]@41", bad, err)
			}
		}
	})
}

func TestResolveMergesPrevious(t *testing.T) {
	reg, _, _, _ := ordersRegistry(t)
	register(t, reg, "orders-key", sr.Schema{Schema: `{"type":"record","name":"K","fields":[{"name":"kid","type":"long"}]}`})
	c := regClient(t, reg)
	tbl := registryTable(spec.FormatAvro, "orders-value", "", "")
	tbl.ConnectorOptions.KafkaOptions.KeyTransformer = &spec.Transformer{Format: spec.FormatAvro, AvroOptions: &spec.AvroOptions{
		SchemaRegistry: &spec.SchemaRegistryOptions{ConfluentOptions: spec.ConfluentOptions{Subject: "orders-key"}}}}
	tbl.TableConfiguration.SourceMetadataColumn = "_kafka"
	l := layoutOf(t, tbl)
	// The table has columns of earlier versions: an old key field, an old
	// value field, the metadata and _corrupt_record.
	prev := []schema.Field{
		null("kid", tLong), null("kold", tString),
		null("id", tLong), null("gone", tString), null("name", tString),
		null("_kafka", spec.MetadataType), null(spec.CorruptRecordColumn, &schema.Type{Kind: schema.Binary}),
	}
	srcs, err := Resolve(context.Background(), l, prev, clientsFor(c))
	if err != nil {
		t.Fatal(err)
	}
	if srcs == nil || srcs.Key == nil || srcs.Value == nil {
		t.Fatalf("sources %+v, want both", srcs)
	}
	if got, want := names(l.Columns()), "kid,kold,id,gone,name,qty,_kafka,_corrupt_record"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	for _, f := range l.Columns() {
		if !f.Nullable {
			t.Errorf("column %s is not nullable", f.Name)
		}
	}
	if _, err := New(l, srcs); err != nil {
		t.Fatal(err)
	}
}

// TestResolveRefusesCollidingColumns checks that registry fields are held
// to the column rules plan time applies to the others: no name twice
// (ignoring case), none reserved.
func TestResolveRefusesCollidingColumns(t *testing.T) {
	reg, _, _, _ := ordersRegistry(t)
	register(t, reg, "ids-key", sr.Schema{Schema: `{"type":"record","name":"K","fields":[{"name":"ID","type":"long"}]}`})
	register(t, reg, "corrupt-key", sr.Schema{Schema: `{"type":"record","name":"K","fields":[{"name":"_corrupt_record","type":"string"}]}`})
	register(t, reg, "fine-key", sr.Schema{Schema: `{"type":"record","name":"K","fields":[{"name":"kid","type":"long"}]}`})
	c := regClient(t, reg)
	const kp = "connector_options.kafka_options."
	tests := []struct {
		name, keySubject, metadata string
		prev                       []schema.Field
		path, detail               string
	}{
		{"key and value fields", "ids-key", "", nil, kp + "value_transformer.avro_options.schema_registry", `column "id" from the value schema collides`},
		{"reserved field", "corrupt-key", "", nil, kp + "key_transformer.avro_options.schema_registry", "reserved"},
		{"metadata column", "fine-key", "name", nil, "table_configuration.source_metadata_column", "collides"},
		// The key's new version takes a column the value had.
		{"key takes a value column", "ids-key", "", []schema.Field{null("kid", tLong), null("id", tLong), null("name", tString)},
			kp + "value_transformer.avro_options.schema_registry", "collides"},
		{"fine", "fine-key", "_kafka", nil, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl := registryTable(spec.FormatAvro, "orders-value", "", "")
			tbl.TableConfiguration.SourceMetadataColumn = tc.metadata
			tbl.ConnectorOptions.KafkaOptions.KeyTransformer = &spec.Transformer{Format: spec.FormatAvro, AvroOptions: &spec.AvroOptions{
				SchemaRegistry: &spec.SchemaRegistryOptions{ConfluentOptions: spec.ConfluentOptions{Subject: tc.keySubject}}}}
			l := layoutOf(t, tbl)
			_, err := Resolve(context.Background(), l, tc.prev, clientsFor(c))
			if tc.path == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var errs spec.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Resolve: %v, want spec.Errors", err)
			}
			for _, e := range errs {
				if e.Path == tc.path && strings.Contains(e.Detail, tc.detail) {
					return
				}
			}
			t.Fatalf("Resolve: %v, want a problem at %s containing %q", errs, tc.path, tc.detail)
		})
	}
}
