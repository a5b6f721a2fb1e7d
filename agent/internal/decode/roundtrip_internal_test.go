package decode

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// roundTripLayout has every type, nested arrays of structs and maps, the
// metadata column and _corrupt_record.
func roundTripLayout() *spec.Layout {
	l := jsonValue(
		null("b", tBool), null("i8", tByte), null("i16", tShort), null("i32", tInt), notNull("i64", tLong),
		null("f32", tFloat), null("f64", tDouble),
		null("d9", tDec(9, 2)), null("d18", tDec(18, 4)), null("d38", tDec(38, 6)),
		null("s", tString), null("vc", tVarchar), null("bin", tBinary),
		null("dt", tDate), null("ts", tTS), null("ntz", tNTZ),
		null("items", tArr(tStruct(null("sku", tString), null("qty", tInt), null("opts", tMap(tString, tArr(tDouble)))))),
		null("m", tMap(tString, tStruct(null("x", tLong)))),
		null("nested", tArr(tArr(tInt))),
	)
	l.Key = spec.Part{Format: spec.FormatString, Column: spec.KeyColumn}
	l.MetadataColumn = "source"
	return l
}

var roundTripValues = []string{
	`{"b":true,"i8":-8,"i16":300,"i32":70000,"i64":1234567890123,"f32":1.5,"f64":-2.25,` +
		`"d9":"1234567.891","d18":12345678901234.5678,"d38":-12345678901234567890123456789012.123456,` +
		`"s":"héllo","vc":"v","bin":"AAEC","dt":"2024-05-01","ts":"2024-05-01T12:34:56.789Z","ntz":"2024-05-01T12:34:56",` +
		`"items":[{"sku":"a","qty":1,"opts":{"w":[1.5,null],"e":[]}},null,{"opts":null}],` +
		`"m":{"k1":{"x":1},"k2":null},"nested":[[1,2],[],null,[3]]}`,
	`{"i64":2}`,
	`{"i64":"not a number","s":"kept"}`,
}

// roundTripRows decodes roundTripValues.
func roundTripRows(t *testing.T) (*Decoder, []parquet.Row) {
	t.Helper()
	d, err := New(roundTripLayout(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var recs []record.Record
	for i, v := range roundTripValues {
		recs = append(recs, record.Record{
			Topic: "t", Partition: 2, Offset: int64(i), Timestamp: time.UnixMilli(1714566896789),
			Key: []byte("k"), Value: []byte(v),
			Headers: []record.Header{{Key: "h", Value: []byte{0}}},
		})
	}
	got, _, err := decodeRows(d, recs)
	if err != nil {
		t.Fatal(err)
	}
	return d, got
}

// writeFile writes rows to a Parquet file in a temporary folder.
func writeFile(t *testing.T, s *parquet.Schema, rs []parquet.Row) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "part-0.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[any](f, s)
	if _, err := w.WriteRows(rs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRoundTripParquetGo writes decoded rows to a file and reads them back
// with parquet-go: same schema, same values.
func TestRoundTripParquetGo(t *testing.T) {
	d, rs := roundTripRows(t)
	path := writeFile(t, d.Schema(), rs)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.Schema().String(), d.Schema().String(); got != want {
		t.Errorf("file schema =\n%s\nwant\n%s", got, want)
	}
	r := parquet.NewReader(f)
	back := make([]parquet.Row, len(rs)+1)
	n, err := r.ReadRows(back)
	if n != len(rs) || (err != nil && !errors.Is(err, io.EOF)) {
		t.Fatalf("read %d rows, %v; want %d", n, err, len(rs))
	}
	for i := range rs {
		want, err := rowstest.Render(d.Schema(), rs[i])
		if err != nil {
			t.Fatal(err)
		}
		got, err := rowstest.Render(f.Schema(), back[i])
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range f.Schema().Fields() {
			if got[c.Name()] != want[c.Name()] {
				t.Errorf("row %d column %s = %s, want %s", i, c.Name(), got[c.Name()], want[c.Name()])
			}
		}
	}
	want := `{b=true i8=-8 i16=300 i32=70000 i64=1234567890123 f32=1.5 f64=-2.25 d9=1234567.89 d18=12345678901234.5678 ` +
		`d38=-12345678901234567890123456789012.123456 s="héllo" vc="v" bin=b"\x00\x01\x02" dt=2024-05-01 ` +
		`ts=2024-05-01T12:34:56.789Z ntz=2024-05-01T12:34:56 ` +
		`items=[{sku="a" qty=1 opts={"w":[1.5 null],"e":[]}} null {sku=null qty=null opts=null}] ` +
		`m={"k1":{x=1},"k2":null} nested=[[1 2] [] null [3]]}`
	cols, _ := rowstest.Render(d.Schema(), rs[0])
	var sb strings.Builder
	for _, c := range d.Schema().Fields()[1:20] {
		sb.WriteString(" " + c.Name() + "=" + cols[c.Name()])
	}
	if got := "{" + sb.String()[1:] + "}"; got != want {
		t.Errorf("row 0 =\n%s\nwant\n%s", got, want)
	}
}

// pythonPath is the project's Python with pyarrow, built by tools/.
const pythonPath = "../../../.tools/py/bin/python"

// TestRoundTripPyarrow reads the file with pyarrow, an independent reader;
// it skips when the project's Python environment is absent.
func TestRoundTripPyarrow(t *testing.T) {
	py, err := filepath.Abs(pythonPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(py); err != nil {
		t.Skipf("no Python environment at %s (built by tools/)", py)
	}
	if err := exec.Command(py, "-c", "import pyarrow").Run(); err != nil {
		t.Skipf("pyarrow is not installed in %s", py)
	}
	d, rs := roundTripRows(t)
	path := writeFile(t, d.Schema(), rs)
	script := `
import sys, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
print(",".join(t.schema.names))
for f in t.schema:
    print(f.name, f.type, f.nullable)
for r in t.to_pylist():
    print(r)
`
	out, err := exec.Command(py, "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("pyarrow: %v\n%s", err, out)
	}
	want := strings.TrimLeft(pyarrowWant, "\n")
	if got := string(out); got != want {
		t.Errorf("pyarrow read:\n%s\nwant\n%s", got, want)
	}
}

// pyarrowWant is what pyarrow reads: names and order, types, nullability
// and values.
const pyarrowWant = `
key,b,i8,i16,i32,i64,f32,f64,d9,d18,d38,s,vc,bin,dt,ts,ntz,items,m,nested,source,_corrupt_record
key string True
b bool True
i8 int8 True
i16 int16 True
i32 int32 True
i64 int64 True
f32 float True
f64 double True
d9 decimal128(9, 2) True
d18 decimal128(18, 4) True
d38 decimal128(38, 6) True
s string True
vc string True
bin binary True
dt date32[day] True
ts timestamp[us, tz=UTC] True
ntz timestamp[us] True
items list<element: struct<sku: string, qty: int32, opts: map<string, list<element: double> ('opts')>>> True
m map<string, struct<x: int64> ('m')> True
nested list<element: list<element: int32>> True
source struct<topic: string, partition: int32, offset: int64, timestamp: timestamp[us, tz=UTC], timestampType: int32, headers: list<element: struct<key: string, value: binary>>> True
_corrupt_record binary True
{'key': 'k', 'b': True, 'i8': -8, 'i16': 300, 'i32': 70000, 'i64': 1234567890123, 'f32': 1.5, 'f64': -2.25, 'd9': Decimal('1234567.89'), 'd18': Decimal('12345678901234.5678'), 'd38': Decimal('-12345678901234567890123456789012.123456'), 's': 'héllo', 'vc': 'v', 'bin': b'\x00\x01\x02', 'dt': datetime.date(2024, 5, 1), 'ts': datetime.datetime(2024, 5, 1, 12, 34, 56, 789000, tzinfo=zoneinfo.ZoneInfo(key='UTC')), 'ntz': datetime.datetime(2024, 5, 1, 12, 34, 56), 'items': [{'sku': 'a', 'qty': 1, 'opts': [('w', [1.5, None]), ('e', [])]}, None, {'sku': None, 'qty': None, 'opts': None}], 'm': [('k1', {'x': 1}), ('k2', None)], 'nested': [[1, 2], [], None, [3]], 'source': {'topic': 't', 'partition': 2, 'offset': 0, 'timestamp': datetime.datetime(2024, 5, 1, 12, 34, 56, 789000, tzinfo=zoneinfo.ZoneInfo(key='UTC')), 'timestampType': 0, 'headers': [{'key': 'h', 'value': b'\x00'}]}, '_corrupt_record': None}
{'key': 'k', 'b': None, 'i8': None, 'i16': None, 'i32': None, 'i64': 2, 'f32': None, 'f64': None, 'd9': None, 'd18': None, 'd38': None, 's': None, 'vc': None, 'bin': None, 'dt': None, 'ts': None, 'ntz': None, 'items': None, 'm': None, 'nested': None, 'source': {'topic': 't', 'partition': 2, 'offset': 1, 'timestamp': datetime.datetime(2024, 5, 1, 12, 34, 56, 789000, tzinfo=zoneinfo.ZoneInfo(key='UTC')), 'timestampType': 0, 'headers': [{'key': 'h', 'value': b'\x00'}]}, '_corrupt_record': None}
{'key': 'k', 'b': None, 'i8': None, 'i16': None, 'i32': None, 'i64': None, 'f32': None, 'f64': None, 'd9': None, 'd18': None, 'd38': None, 's': 'kept', 'vc': None, 'bin': None, 'dt': None, 'ts': None, 'ntz': None, 'items': None, 'm': None, 'nested': None, 'source': {'topic': 't', 'partition': 2, 'offset': 2, 'timestamp': datetime.datetime(2024, 5, 1, 12, 34, 56, 789000, tzinfo=zoneinfo.ZoneInfo(key='UTC')), 'timestampType': 0, 'headers': [{'key': 'h', 'value': b'\x00'}]}, '_corrupt_record': b'{"i64":"not a number","s":"kept"}'}
`
