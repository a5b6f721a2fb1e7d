package table_test

import (
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// statsFields and statsParquet hold a column of every kind; parquet.Group
// orders the columns by name, and so do the stats.
var (
	statsFields = func() []schema.Field {
		f := func(name string, t *schema.Type) schema.Field {
			return schema.Field{Name: name, Type: t, Nullable: true}
		}
		k := func(k schema.Kind) *schema.Type { return &schema.Type{Kind: k} }
		dec := func(p, s int) *schema.Type { return &schema.Type{Kind: schema.Decimal, Precision: p, Scale: s} }
		return []schema.Field{
			{Name: "id", Type: k(schema.Long)},
			f("name", k(schema.String)), f("note", k(schema.String)), f("empty", k(schema.String)),
			f("amount", k(schema.Double)), f("ratio", k(schema.Float)),
			f("flag", k(schema.Boolean)), f("bin", k(schema.Binary)),
			f("tiny", k(schema.Byte)), f("small", k(schema.Short)), f("num", k(schema.Int)),
			f("day", k(schema.Date)), f("at", k(schema.Timestamp)), f("local", k(schema.TimestampNTZ)),
			f("price", dec(10, 2)), f("p5", dec(5, 2)), f("big", dec(25, 3)), f("mixed", dec(25, 3)),
			f("tags", &schema.Type{Kind: schema.Array, Elem: k(schema.String)}),
			f("s", &schema.Type{Kind: schema.Struct, Fields: []schema.Field{f("a", k(schema.Int)), f("b", k(schema.String))}}),
		}
	}()
	statsParquet = parquet.NewSchema("spark_schema", parquet.Group{
		"id":     parquet.Int(64),
		"name":   parquet.Optional(parquet.String()),
		"note":   parquet.Optional(parquet.String()),
		"empty":  parquet.Optional(parquet.String()),
		"amount": parquet.Optional(parquet.Leaf(parquet.DoubleType)),
		"ratio":  parquet.Optional(parquet.Leaf(parquet.FloatType)),
		"flag":   parquet.Optional(parquet.Leaf(parquet.BooleanType)),
		"bin":    parquet.Optional(parquet.Leaf(parquet.ByteArrayType)),
		"tiny":   parquet.Optional(parquet.Int(8)),
		"small":  parquet.Optional(parquet.Int(16)),
		"num":    parquet.Optional(parquet.Leaf(parquet.Int32Type)),
		"day":    parquet.Optional(parquet.Date()),
		"at":     parquet.Optional(parquet.TimestampAdjusted(parquet.Microsecond, true)),
		"local":  parquet.Optional(parquet.TimestampAdjusted(parquet.Microsecond, false)),
		"price":  parquet.Optional(parquet.Decimal(2, 10, parquet.Int64Type)),
		"p5":     parquet.Optional(parquet.Decimal(2, 5, parquet.Int32Type)),
		"big":    parquet.Optional(parquet.Decimal(3, 25, parquet.FixedLenByteArrayType(11))),
		"mixed":  parquet.Optional(parquet.Decimal(3, 25, parquet.FixedLenByteArrayType(11))),
		"tags":   parquet.Optional(parquet.List(parquet.Optional(parquet.String()))),
		"s":      parquet.Optional(parquet.Group{"a": parquet.Optional(parquet.Leaf(parquet.Int32Type)), "b": parquet.Optional(parquet.String())}),
	})
)

// statsRows are five rows of statsParquet; nil is null.
func statsRows(t *testing.T) []parquet.Row {
	at := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC).UnixMicro()
	fixed := func(unscaled int64) []byte { // DECIMAL(25,3) as 11 bytes of two's complement
		n := big.NewInt(unscaled)
		if n.Sign() < 0 {
			n.Add(n, new(big.Int).Lsh(big.NewInt(1), 88))
		}
		return n.FillBytes(make([]byte, 11))
	}
	bigMin, _ := new(big.Int).SetString("-1234567890123456789012", 10)
	bigMinBytes := bigMin.Add(bigMin, new(big.Int).Lsh(big.NewInt(1), 88)).FillBytes(make([]byte, 11))
	cols := map[string][]any{
		"name":   {"m", "a", nil, "zz", "a"},
		"note":   {strings.Repeat("x", 40), strings.Repeat("y", 40), nil, nil, nil},
		"empty":  {nil, nil, nil, nil, nil},
		"amount": {1.5, -2.25, nil, 0.0, 3.0},
		"ratio":  {float32(0.5), nil, float32(0.25), nil, nil},
		"flag":   {true, false, nil, true, true},
		"bin":    {[]byte{0, 1}, nil, nil, nil, nil},
		"tiny":   {int32(-3), int32(7), nil, nil, int32(1)},
		"small":  {int32(300), int32(-300), nil, nil, nil},
		"num":    {int32(5), nil, int32(-5), nil, nil},
		"day":    {int32(0), int32(19000), nil, int32(-1), nil},
		"at":     {at + 123456, at + 999999, nil, nil, at},
		"local":  {at + 123456, at + 999999, nil, nil, at},
		"price":  {int64(-150), int64(1), nil, nil, nil},
		"p5":     {int32(12345), int32(-5), nil, nil, nil},
		"big":    {bigMinBytes, fixed(-7), fixed(5), nil, nil},
		"mixed":  {fixed(-1), fixed(1), nil, nil, nil},
	}
	val := func(v any) parquet.Value {
		if b, ok := v.([]byte); ok && len(b) == 11 {
			return parquet.FixedLenByteArrayValue(b)
		}
		return parquet.ValueOf(v)
	}
	var rows []parquet.Row
	for id := range 5 {
		vals := map[string][]parquet.Value{"id": {parquet.ValueOf(int64(id))}}
		for col, vs := range cols {
			if vs[id] == nil {
				vals[col] = []parquet.Value{parquet.NullValue()}
			} else {
				vals[col] = []parquet.Value{val(vs[id]).Level(0, 1, 0)}
			}
		}
		switch id { // tags: ["a"], null, [], ["b", "c"], null
		case 0:
			vals["tags.list.element"] = []parquet.Value{parquet.ValueOf("a").Level(0, 3, 0)}
		case 2:
			vals["tags.list.element"] = []parquet.Value{parquet.NullValue().Level(0, 1, 0)}
		case 3:
			vals["tags.list.element"] = []parquet.Value{parquet.ValueOf("b").Level(0, 3, 0), parquet.ValueOf("c").Level(1, 3, 0)}
		default:
			vals["tags.list.element"] = []parquet.Value{parquet.NullValue()}
		}
		// s: {1, "x"}, null, {null, "y"}, {3, null}, null
		a, b := parquet.NullValue(), parquet.NullValue()
		switch id {
		case 0:
			a, b = parquet.ValueOf(int32(1)).Level(0, 2, 0), parquet.ValueOf("x").Level(0, 2, 0)
		case 2:
			a, b = parquet.NullValue().Level(0, 1, 0), parquet.ValueOf("y").Level(0, 2, 0)
		case 3:
			a, b = parquet.ValueOf(int32(3)).Level(0, 2, 0), parquet.NullValue().Level(0, 1, 0)
		}
		vals["s.a"], vals["s.b"] = []parquet.Value{a}, []parquet.Value{b}
		rows = append(rows, buildRow(t, statsParquet, vals))
	}
	return rows
}

// statsWant are the stats of statsRows in row groups of two rows. Lists
// have none; BOOLEAN and BINARY only a nullCount; the 40-character note
// keeps a 32-character prefix as its minimum and no maximum; timestamps are
// truncated to milliseconds. A DECIMAL in a byte array whose values in a
// row group have both signs (mixed) has no bounds: parquet-go compares its
// bytes as unsigned.
const statsWant = `{"numRecords":5,` +
	`"minValues":{"amount":-2.25,"at":"2024-05-06T07:08:09.000Z","big":-1234567890123456789.012,"day":"1969-12-31","id":0,` +
	`"local":"2024-05-06T07:08:09.000","name":"a","note":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx","num":-5,"p5":-0.05,"price":-1.50,` +
	`"ratio":0.25,"s":{"a":1,"b":"x"},"small":-300,"tiny":-3},` +
	`"maxValues":{"amount":3,"at":"2024-05-06T07:08:09.999Z","big":0.005,"day":"2022-01-08","id":4,` +
	`"local":"2024-05-06T07:08:09.999","name":"zz","num":5,"p5":123.45,"price":0.01,` +
	`"ratio":0.5,"s":{"a":3,"b":"y"},"small":300,"tiny":7},` +
	`"nullCount":{"amount":1,"at":2,"big":2,"bin":4,"day":2,"empty":5,"flag":1,"id":0,"local":2,"mixed":3,"name":1,"note":3,` +
	`"num":3,"p5":3,"price":3,"ratio":3,"s":{"a":3,"b":3},"small":3,"tiny":2}}`

// TestFileStats writes statsRows in row groups of two rows, so that the
// stats fold three row groups, and checks the add action's stats; then,
// when the tool venv is there, that delta-rs parses every one of them.
func TestFileStats(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{RowGroupRows: 2})
	fw, err := tb.NewFile(statsParquet)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeRows(fw, statsRows(t)); err != nil {
		t.Fatal(err)
	}
	add, err := fw.Close()
	if err != nil {
		t.Fatal(err)
	}
	if add.Stats != statsWant {
		t.Errorf("stats =\n%s\nwant\n%s", add.Stats, statsWant)
	}
	mustCommit(t, tb, table.Commit{Schema: statsFields, Files: []table.AddFile{add}})
	var logged struct{ Add struct{ Stats string } }
	if err := json.Unmarshal([]byte(readLog(t, dir, 0)[3]), &logged); err != nil || logged.Add.Stats != statsWant {
		t.Errorf("logged add = %s (%v), want the stats", readLog(t, dir, 0)[3], err)
	}

	var parsed []map[string]any
	runDeltaRS(t, toolPython(t), &parsed, "stats", dir)
	if len(parsed) != 1 {
		t.Fatalf("delta-rs sees %d files, want 1", len(parsed))
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(statsWant), &want); err != nil {
		t.Fatal(err)
	}
	flat := map[string]any{"num_records": want["numRecords"]}
	flatten(flat, "min", want["minValues"])
	flatten(flat, "max", want["maxValues"])
	flatten(flat, "null_count", want["nullCount"])
	got := parsed[0]
	for k, v := range got { // delta-rs lists the columns it has no stats for
		if _, ok := flat[k]; !ok && v == nil {
			delete(got, k)
		}
	}
	for _, k := range []string{"min.price", "max.price", "min.p5", "max.p5", "min.big", "max.big"} {
		flat[k] = decimalText(flat[k]) // delta-rs decimals are strings of the column's scale
	}
	if !reflect.DeepEqual(got, flat) {
		t.Errorf("delta-rs parsed the stats as\n%v\nwant\n%v", got, flat)
	}
}

// flatten adds the leaves of v to m under prefix, as delta-rs flattens
// stats: "min.s.a".
func flatten(m map[string]any, prefix string, v any) {
	if o, ok := v.(map[string]any); ok {
		for k, x := range o {
			flatten(m, prefix+"."+k, x)
		}
		return
	}
	m[prefix] = v
}

// decimalText is the text of a decimal bound as the test writes it.
func decimalText(v any) any {
	for _, s := range []string{"-1.50", "0.01", "123.45", "-0.05", "-1234567890123456789.012", "0.005"} {
		if f, _ := json.Number(s).Float64(); f == v {
			return s
		}
	}
	return v
}
