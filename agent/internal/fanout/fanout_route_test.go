package fanout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestDeadLetterRaw checks that a row of the dead letter table, and of the
// dirty records table, holds a record's key, value and metadata as a table
// of raw records, with a source metadata column, does: headers whose keys
// are not valid UTF-8, no timestamp and no headers included.
func TestDeadLetterRaw(t *testing.T) {
	recs := []record.Record{
		{Topic: "t", Partition: 2, Offset: 7, Timestamp: time.UnixMilli(1700000000123), TimestampType: 1, Key: []byte("k"),
			Value: []byte(`{"a":1}`), Headers: []record.Header{{Key: "ok", Value: []byte("v")}, {Key: "bad\xed\xa0A\xff\xfe"}}},
		{Topic: "t", Offset: 8, Timestamp: time.UnixMilli(-1), Value: []byte("v")},
	}
	for _, tt := range []struct {
		name string
		cols []schema.Field
	}{{spec.FanoutErrorsTable, fanoutErrorsColumns}, {spec.DirtyRecordsTable, deltasink.DirtyColumns}} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := deltasink.NewLetters(tt.name, tt.cols)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Batch(recs, func(b *rows.Builder, i int) {
				b.Field(deltasink.RawRecordWidth)
				b.Bytes(fmt.Appendf(nil, "e%d", i+1))
				for f := deltasink.RawRecordWidth + 1; f < len(tt.cols); f++ {
					b.Field(f)
					b.Null()
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			checkRawColumns(t, got, recs)
		})
	}
}

// checkRawColumns checks that the first columns of got, a batch of letters
// rows of recs, are those of a table of raw records with a source metadata
// column, and that the next holds e1, e2.
func checkRawColumns(t *testing.T, got decode.Batch, recs []record.Record) {
	t.Helper()
	dec, err := decode.New(&spec.Layout{Key: spec.Part{Column: spec.KeyColumn}, Value: spec.Part{Column: spec.ValueColumn},
		MetadataColumn: "m"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := dec.Decode(context.Background(), recs)
	if err != nil {
		t.Fatal(err)
	}
	// Columns 0 to 8: key, value, then topic to headers' key and value.
	for c := range 9 {
		if len(got.Columns[c]) != len(want.Columns[c]) {
			t.Fatalf("column %d: %d values, want %d", c, len(got.Columns[c]), len(want.Columns[c]))
		}
		for i, v := range got.Columns[c] {
			w := want.Columns[c][i]
			if v.IsNull() != w.IsNull() || v.String() != w.String() {
				t.Errorf("column %d, value %d: %v, want %v", c, i, v, w)
			}
		}
	}
	if errs := got.Columns[9]; len(errs) != 2 || errs[0].String() != "e1" || errs[1].String() != "e2" {
		t.Errorf("error column %v, want e1 and e2", errs)
	}
}

// TestRouterSkipsChangelogTombstones checks that a fanout schema of a
// changelog value routed by the default route skips the tombstone after a
// delete, which names no source table, and that any other fanout schema
// still refuses a record its route finds no table for.
func TestRouterSkipsChangelogTombstones(t *testing.T) {
	nullRoute := func(*record.Record) (string, bool, error) { return "", true, nil }
	rb := &routedBatch{SharedBatch: &ingest.SharedBatch{Batch: kafka.Batch{Records: []record.Record{
		{Topic: "t", Offset: 2, Key: []byte(`{"id":1004}`), Value: []byte(`{"op":"d"}`)}, // a change event
		{Topic: "t", Offset: 3, Key: []byte(`{"id":1004}`)},                              // its tombstone
	}}}}
	const event, tombstone = 0, 1
	for _, tt := range []struct {
		name   string
		format string
		fo     spec.FanoutOptions
		skip   bool
	}{
		{"debezium default route", spec.FormatDebeziumJSON, spec.FanoutOptions{}, true},
		{"canal default route", spec.FormatCanalJSON, spec.FanoutOptions{}, true},
		{"debezium fanout_by", spec.FormatDebeziumJSON, spec.FanoutOptions{FanoutBy: "cast(key AS STRING)"}, false},
		{"debezium table_id_fields", spec.FormatDebeziumJSON, spec.FanoutOptions{TableIDFields: []string{"t"}}, false},
		{"json", spec.FormatJSON, spec.FanoutOptions{FanoutBy: "cast(value AS STRING):t"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &spec.FanoutSchema{FanoutOptions: tt.fo, ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				ValueTransformer: &spec.Transformer{Format: tt.format}}}}
			rt := router{route: nullRoute, skipTombstones: skipsTombstones(f)}
			_, skip, err := rt.table(rb, tombstone)
			if skip != tt.skip || (err == nil) != tt.skip {
				t.Errorf("tombstone: skip %v, error %v; want skip %v", skip, err, tt.skip)
			}
			// A change event is routed whatever the format: NULL is an
			// invalid route.
			var route *routeError
			if _, skip, err := rt.table(rb, event); skip || !errors.As(err, &route) {
				t.Errorf("event: skip %v, error %v; want a route error", skip, err)
			}
		})
	}
}

// Each partition's batches are routed on a goroutine of their own, with a
// route of their own: a compiled fanout_by, which evaluates on one
// goroutine at a time, routes every record of four partitions to its
// table (under the race detector in make unit, a route shared between
// partitions is a race).
func TestFanoutRoutesEachPartitionWithItsOwnRoute(t *testing.T) {
	fx := newFanoutFixture(t)
	const n = 2000
	produce(t, fx.producer, 0, n, fanoutEvent)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	var made atomic.Int32
	compiled := Compiled(cfg.Fanout.RouteExpression())
	newRoute := func() (Route, error) {
		made.Add(1)
		return compiled()
	}
	r := fx.runWith(t, cfg, newRoute, nil, nil)
	waitFor(t, 20*time.Second, "every record", func() bool { return fanoutRows(r) == n })
	r.Stop()
	checkRouted(t, cfg.Dir, n, nil)
	// A run that restarts (after a retryable error) makes them again.
	if got := made.Load(); got < 4 {
		t.Errorf("%d routes made, want one for each of the 4 partitions", got)
	}
}

// routeBatch names each record's table in a batch: the names once each,
// lower-cased, in the order of their first record, and for each record the
// index of its name, or that it is skipped, or the index of why it cannot
// be routed, which names the record.
func TestRouteBatch(t *testing.T) {
	byValue := func(r *record.Record) (string, bool, error) {
		if len(r.Value) == 0 {
			return "", true, nil // NULL
		}
		return string(r.Value), false, nil
	}
	budget := memory.New(1 << 30)
	rt := router{route: byValue, skipTombstones: true, budget: budget, index: map[string]int32{}, tables: map[string]string{}}
	var recs []record.Record
	for i, v := range []string{"a", "B", "A", "", "bad/name", "b", "-"} {
		r := record.Record{Topic: "t", Partition: 1, Offset: int64(10 + i), Value: []byte(v)}
		if v == "-" {
			r.Value = nil // a tombstone
		}
		recs = append(recs, r)
	}
	// The router forgets a batch's names before the next, and the second
	// batch finds the valid names it saw checked.
	for range 2 {
		rb := rt.routeBatch(&ingest.SharedBatch{Batch: kafka.Batch{Records: recs}})
		if want := []string{"a", "b"}; !slices.Equal(rb.names, want) {
			t.Errorf("names %q, want %q", rb.names, want)
		}
		if want := []int32{0, 1, 0, unroutable, unroutable - 1, 1, skipped}; !slices.Equal(rb.at, want) {
			t.Errorf("at %v, want %v", rb.at, want)
		}
		if len(rb.errs) != 2 || !strings.Contains(rb.errs[0].Error(), "t[1]@13") || !strings.Contains(rb.errs[1].Error(), "t[1]@14") {
			t.Errorf("errors %v, want those of offsets 13 and 14", rb.errs)
		}
		// The routes count in the budget until the batch is released.
		if used, want := budget.Stats().Used, int64(4*len(recs)); used != want {
			t.Errorf("the budget holds %d bytes for the routes, want %d", used, want)
		}
		rb.Release()
		if used := budget.Stats().Used; used != 0 {
			t.Errorf("the budget holds %d bytes once the batch is released", used)
		}
	}
	if want := map[string]string{"a": "a", "B": "b", "A": "a", "b": "b"}; !maps.Equal(rt.tables, want) {
		t.Errorf("checked names %v, want %v: the valid ones, and only those", rt.tables, want)
	}
}

// TestRouterParsesValues: a router with the route's path parses each value
// once, takes its table from what it parsed, and keeps the encoding for
// the table; a value the encoder refuses is routed by the route itself,
// which reads its text, and has no encoding kept.
func TestRouterParsesValues(t *testing.T) {
	read := 0
	compiled, err := Compiled("cast(value AS STRING):type")()
	if err != nil {
		t.Fatal(err)
	}
	if compiled.Path == nil {
		t.Fatal("no path for a JSON path on the value")
	}
	counted := func(r *record.Record) (string, bool, error) {
		read++
		return compiled.Func(r)
	}
	budget := memory.New(1 << 30)
	rt := router{route: counted, path: compiled.Path, budget: budget, index: map[string]int32{}, tables: map[string]string{}}
	values := []string{`{"type":"a","n":1}`, `{"Type":"B"}`, `{'type':'a'}`, `{"n":2}`}
	var recs []record.Record
	for i, v := range values {
		recs = append(recs, record.Record{Topic: "t", Offset: int64(i), Value: []byte(v)})
	}
	rb := rt.routeBatch(&ingest.SharedBatch{Batch: kafka.Batch{Records: recs}})
	if want := []string{"a", "b"}; !slices.Equal(rb.names, want) {
		t.Errorf("names %q, want %q", rb.names, want)
	}
	if want := []int32{0, 1, 0, unroutable}; !slices.Equal(rb.at, want) {
		t.Errorf("at %v, want %v", rb.at, want)
	}
	if read != 1 {
		t.Errorf("the route read %d texts, want 1: the one the encoder refuses", read)
	}
	var enc variant.Encoder
	for i, v := range values {
		meta, value, err := enc.Encode([]byte(v))
		got := rb.values[i]
		switch {
		case err != nil && got.Metadata != nil:
			t.Errorf("value %d: an encoding kept for %s", i, v)
		case err == nil && (!bytes.Equal(got.Metadata, meta) || !bytes.Equal(got.Value, value)):
			t.Errorf("value %d: kept %x %x, want %x %x", i, got.Metadata, got.Value, meta, value)
		}
	}
	if budget.Stats().Used == 0 {
		t.Error("the budget does not count the parsed values")
	}
	rb.Release()
	if used := budget.Stats().Used; used != 0 {
		t.Errorf("the budget holds %d bytes once the batch is released", used)
	}
}
