package fanout

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// benchTables is how many tables BenchmarkFanout routes to, as make bench's
// fanout row does.
const benchTables = 50

// routeByTypeField routes a record of benchEvent to the table its "type"
// names, without decoding the whole record: the benchmark measures the
// runner, not the route.
func routeByTypeField(r *record.Record) (string, bool, error) {
	const key = `"type":"`
	i := bytes.Index(r.Value, []byte(key))
	if i < 0 {
		return "", true, nil
	}
	v := r.Value[i+len(key):]
	return string(v[:bytes.IndexByte(v, '"')]), false, nil
}

// benchEvent is record i of BenchmarkFanout: an event of about 120 bytes
// whose type is one of benchTables.
func benchEvent(i int) string {
	return fmt.Sprintf(`{"type":"t%02d","id":%d,"user":"u%06d","amount":%d.25,"tags":["a","b"],"pad":"%s"}`,
		i%benchTables, i, i%100000, i%1000, strings.Repeat("x", 20+i%20))
}

// BenchmarkFanout runs a triggered fanout schema over 200,000 records
// routed to 50 tables read as VARIANT (JSON without a schema), from the
// first record to the commit of every table, each run into tables of its
// own: the runner's routing, decoding and writing, with kfake as the
// broker. route=field routes with a byte search for the type field, which
// leaves out the cost of the route; route=fanout_by with the compiled
// fanout_by, cast(value AS STRING):type, one for each partition, as the
// agent does; route=one_table sends every record to one table, so that its
// ratio to route=field is what the 50 tables cost.
func BenchmarkFanout(b *testing.B) {
	fx := newFanoutFixture(b)
	const n = 200_000
	produce(b, fx.producer, 0, n, benchEvent)
	cfg := testFanoutConfig(b.TempDir(), "events", fx.conn)
	cfg.Continuous, cfg.FlushEvery = false, time.Hour
	cfg.Fanout.FanoutOptions.Transforms[0].JSONOptions = nil // VARIANT
	for _, bm := range []struct {
		name     string
		newRoute NewRoute
	}{
		{"route=field", func() (Route, error) { return Route{Func: routeByTypeField}, nil }},
		{"route=one_table", func() (Route, error) {
			return Route{Func: func(*record.Record) (string, bool, error) { return "t00", false, nil }}, nil
		}},
		{"route=fanout_by", Compiled(cfg.Fanout.RouteExpression())},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for i := 0; b.Loop(); i++ {
				cfg.Dir = filepath.Join(b.TempDir(), fmt.Sprintf("run%d", i))
				r := fx.runWith(b, cfg, bm.newRoute, nil, nil)
				waitFor(b, time.Minute, "IDLE", func() bool { return r.Status().State == spec.StateIdle })
				if rows := fanoutRows(r); rows != n {
					b.Fatalf("%d rows, want %d", rows, n)
				}
				r.Stop()
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(n*b.N), "allocs/record")
		})
	}
}
