package protobuf

import (
	"errors"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/protoschema"
)

// ddl formats columns as DDL, checking they are all nullable.
func ddl(cols []schema.Field) string {
	for _, c := range cols {
		if !c.Nullable {
			return c.Name + " is NOT NULL"
		}
	}
	return schema.FormatDDL(cols)
}

func TestColumnsEvent(t *testing.T) {
	want := strings.Join([]string{
		"i32 INT, s32 INT, sf32 INT, u32 INT, f32 INT",
		"i64 BIGINT, s64 BIGINT, sf64 BIGINT, u64 BIGINT, f64 BIGINT",
		"fl FLOAT, db DOUBLE, b BOOLEAN, s STRING, by BINARY, kind STRING",
		"item STRUCT<sku: STRING, qty: INT>, tags ARRAY<STRING>, items ARRAY<STRUCT<sku: STRING, qty: INT>>",
		"counts MAP<STRING, BIGINT>, by_id MAP<INT, STRUCT<sku: STRING, qty: INT>>",
		"text STRING, number BIGINT, picked STRUCT<sku: STRING, qty: INT>, ts TIMESTAMP",
		"w_double DOUBLE, w_float FLOAT, w_int64 BIGINT, w_uint64 BIGINT, w_int32 INT, w_uint32 INT",
		"w_bool BOOLEAN, w_string STRING, w_bytes BINARY, opt INT, source STRUCT<host: STRING, port: INT>",
		"times ARRAY<TIMESTAMP>, kinds ARRAY<STRING>, flags MAP<BOOLEAN, INT>",
	}, ", ")
	if got := ddl(columns(t, message(t, "Event"), -1)); got != want {
		t.Errorf("Event columns\n got %s\nwant %s", got, want)
	}
}

func TestColumnsRecursion(t *testing.T) {
	node := message(t, "Node")
	for _, tc := range []struct {
		depth int
		want  string
	}{
		{0, "name STRING"},
		{1, "name STRING, children ARRAY<STRUCT<name: STRING>>"},
		{2, "name STRING, children ARRAY<STRUCT<name: STRING, children: ARRAY<STRUCT<name: STRING>>>>"},
	} {
		if got := ddl(columns(t, node, tc.depth)); got != tc.want {
			t.Errorf("depth %d: %s, want %s", tc.depth, got, tc.want)
		}
	}
	if got := strings.Count(ddl(columns(t, node, protoschema.MaxDepth)), "children"); got != protoschema.MaxDepth {
		t.Errorf("depth %d expands children %d times", protoschema.MaxDepth, got)
	}
	_, err := protoschema.Columns(node, -1)
	want := "mapping tributary.events.Node to columns: children: recursive message tributary.events.Node: " +
		"tributary.events.Node.children → tributary.events.Node; " +
		"set recursive_fields_max_depth to 0 to drop recursive fields or 1..10 to expand them"
	if err == nil || err.Error() != want || !errors.Is(err, protoschema.ErrRecursive) {
		t.Errorf("depth -1: error %v, want %s (ErrRecursive)", err, want)
	}
	for _, depth := range []int{-2, 11} {
		if _, err := protoschema.Columns(node, depth); err == nil || !strings.Contains(err.Error(), "outside -1..10") {
			t.Errorf("depth %d: error %v", depth, err)
		}
	}

	// Recursion through another message counts each message on the path,
	// as Spark does: at depth 0, A's field b keeps B's fields but a.
	fd := compile(t, `syntax = "proto3";
package r;
message A { B b = 1; int32 x = 2; }
message B { A a = 1; string y = 2; map<string, A> m = 3; }
message Top { A a = 1; }
`, nil)
	a, top := fd.Messages().Get(0), fd.Messages().Get(2)
	for _, tc := range []struct {
		depth int
		want  string
	}{
		{0, "b STRUCT<y: STRING>, x INT"},
		{1, "b STRUCT<a: STRUCT<b: STRUCT<y: STRING>, x: INT>, y: STRING, m: MAP<STRING, STRUCT<b: STRUCT<y: STRING>, x: INT>>>, x INT"},
	} {
		if got := ddl(columns(t, a, tc.depth)); got != tc.want {
			t.Errorf("A depth %d:\n got %s\nwant %s", tc.depth, got, tc.want)
		}
	}
	_, err = protoschema.Columns(top, -1)
	if want := "a.b.a: recursive message r.A: r.A.b → r.B.a → r.A; set"; err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, protoschema.ErrRecursive) {
		t.Errorf("Top: error %v, want %s (ErrRecursive)", err, want)
	}
	_, err = protoschema.Columns(fd.Messages().Get(1), -1)
	if want := "a.b: recursive message r.B: r.B.a → r.A.b → r.B"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("B: error %v, want %s", err, want)
	}
	// Through a map, the cycle names the map field.
	m := compile(t, "syntax = \"proto3\";\npackage m;\nmessage M { map<string, M> kids = 1; int32 v = 2; }\n", nil).Messages().Get(0)
	_, err = protoschema.Columns(m, -1)
	if want := "kids: recursive message m.M: m.M.kids → m.M; set"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("M: error %v, want %s", err, want)
	}
	if got, want := ddl(columns(t, m, 1)), "kids MAP<STRING, STRUCT<v: INT>>, v INT"; got != want {
		t.Errorf("M depth 1: %s, want %s", got, want)
	}
}

func TestColumnsProto2AndDrops(t *testing.T) {
	fd := compile(t, `syntax = "proto2";
package p;
import "google/protobuf/empty.proto";
import "google/protobuf/duration.proto";
message M {
  required int32 r = 1;
  optional string s = 2 [default = "x"];
  optional group G = 3 { optional int64 g = 4; }
  optional google.protobuf.Empty e = 5;
  optional Nothing n = 6;
  repeated Nothing ns = 7;
  optional google.protobuf.Duration d = 8;
}
message Nothing {}
`, nil)
	got := ddl(columns(t, fd.Messages().Get(0), -1))
	if want := "r INT, s STRING, g STRUCT<g: BIGINT>, d STRUCT<seconds: BIGINT, nanos: INT>"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	if _, err := protoschema.Columns(fd.Messages().Get(1), -1); err == nil || err.Error() != "mapping p.Nothing to columns: it has no fields to map" {
		t.Errorf("message without fields: error %v", err)
	}
}
