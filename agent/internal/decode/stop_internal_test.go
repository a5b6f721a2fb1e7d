package decode

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// piece is what one decoding of the records from start on gave, as a
// writer that evolves the table would see it.
type piece struct {
	start int
	rows  []map[string]string
	bad   []int
	stats Stats
}

// evolveThrough decodes recs as the table writer does: each decoding stops
// at the record that asks for new columns, whose columns are added before
// the records from that one on are decoded with a new decoder. It returns
// the pieces, the final columns and how many records the decoders went
// through.
func evolveThrough(t *testing.T, l *spec.Layout, o Options, recs []record.Record) ([]piece, []schema.Field, int) {
	t.Helper()
	var pieces []piece
	decoded, start := 0, 0
	for range len(recs) + 1 {
		d, err := New(l, nil)
		if err != nil {
			t.Fatal(err)
		}
		d.SetOptions(o)
		b, err := d.Decode(context.Background(), recs[start:])
		decoded += d.decoded
		var nc *NewColumnsError
		if err != nil && !errors.As(err, &nc) {
			t.Fatalf("Decode from record %d: %v", start, err)
		}
		p := piece{start: start, rows: renderBatch(t, d, &b), bad: badIndexes(b), stats: b.Stats}
		pieces = append(pieces, p)
		if nc == nil {
			return pieces, l.Value.Fields, decoded
		}
		if nc.Record < 0 || start+nc.Record >= len(recs) || recs[start+nc.Record].Offset != nc.Offset {
			t.Fatalf("stopped at record %d of %d, offset %d: %v", nc.Record, len(recs)-start, nc.Offset, nc)
		}
		fields, changed := nc.Apply(l.Value.Fields)
		if !changed {
			t.Fatalf("a stop at record %d asks for columns the table has: %v", start+nc.Record, nc)
		}
		l.Value.Fields = fields
		start += nc.Record
	}
	t.Fatal("the columns did not settle")
	return nil, nil, 0
}

// TestDecodeStopsAtNewColumns checks that a chunk whose records 3 and 7
// bring new fields is decoded as 10 records plus the two that asked, not
// twice: each decoding stops at the record that asks, with the rows of
// the records before it, and goes on from it with the new columns. The
// records left out and the corrupt ones are counted in the piece they are
// in, once.
func TestDecodeStopsAtNewColumns(t *testing.T) {
	var recs []record.Record
	for i := range 10 {
		v := `{"id":` + string(rune('0'+i)) + `}`
		switch i {
		case 1:
			v = `{"id":1,"x":` // malformed: left out
		case 3:
			v = `{"id":3,"a":"x"}`
		case 5:
			v = `{"id":"five"}` // rescued
		case 7:
			v = `{"id":7,"a":"y","s":{"b":true}}`
		case 8:
			v = `{"id":8,"s":{"b":false}}`
		case 9:
			v = `not json`
		}
		recs = append(recs, record.Record{Topic: "t", Offset: int64(100 + i), Value: []byte(v)})
	}
	l := inferredValue(spec.SchemaEvolutionAddNewColumns, null("id", tLong))
	pieces, fields, decoded := evolveThrough(t, l, Options{SkipBad: true}, recs)
	if decoded != len(recs)+2 {
		t.Errorf("the decoders went through %d records, want %d (each once, and the two that asked twice)", decoded, len(recs)+2)
	}
	if got, want := schema.FormatDDL(fields), "id BIGINT, a STRING, s STRUCT<b: BOOLEAN>"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	var starts []int
	var ids, bad []string
	for _, p := range pieces {
		starts = append(starts, p.start)
		for _, r := range p.rows {
			ids = append(ids, pick(r, "id", "a", "s"))
		}
		for _, b := range p.bad {
			bad = append(bad, string(recs[p.start+b].Value))
		}
		if p.stats.Corrupt != 0 {
			t.Errorf("piece from %d: %d corrupt", p.start, p.stats.Corrupt)
		}
	}
	if !slices.Equal(starts, []int{0, 3, 7}) {
		t.Errorf("pieces start at %v, want [0 3 7]", starts)
	}
	want := []string{"0", "2", `3 "x"`, "4 null", "null null", "6 null", `7 "y" {b=true}`, `8 null {b=false}`}
	got := strings.Join(ids, "|")
	// The first piece's rows lack a and s, the second's s.
	got = strings.NewReplacer(" <none>", "").Replace(got)
	if got != strings.Join(want, "|") {
		t.Errorf("rows %s, want %s", got, strings.Join(want, "|"))
	}
	if !slices.Equal(bad, []string{`{"id":1,"x":`, "not json"}) {
		t.Errorf("left out %q", bad)
	}
}

// TestDecodeFailOnNewColumnsWholeChunk checks that FAIL_ON_NEW_COLUMNS
// still goes through the whole chunk, for its error to name every new
// column of it, and gives no rows.
func TestDecodeFailOnNewColumnsWholeChunk(t *testing.T) {
	recs := []record.Record{
		{Topic: "t", Offset: 1, Value: []byte(`{"id":1}`)},
		{Topic: "t", Offset: 2, Value: []byte(`{"id":2,"a":1}`)},
		{Topic: "t", Offset: 3, Value: []byte(`{"id":3,"b":1}`)},
	}
	d, err := New(inferredValue(spec.SchemaEvolutionFailOnNewColumns, null("id", tLong)), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Decode(context.Background(), recs)
	var nc *NewColumnsError
	if !errors.As(err, &nc) || !nc.Fail || nc.Record != 1 || nc.Offset != 2 || strings.Join(nc.Columns, ",") != "a,b" || b.Rows != 0 {
		t.Fatalf("Decode: %d rows, %v; want no rows and a failure at record 1 naming a and b", b.Rows, err)
	}
}
