package fanout

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/expr"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// RouteFunc evaluates a fanout_by expression on a raw record: its STRING
// result, or null for NULL, or a runtime error of the expression.
type RouteFunc func(*record.Record) (name string, null bool, err error)

// Route is a fanout schema's fanout_by expression, ready to evaluate.
type Route struct {
	// Func evaluates it on a raw record.
	Func RouteFunc
	// Path is its JSON path when it is one on the value's text (see
	// [expr.Program.ValuePath]): a router that parses the values, for
	// tables that keep them as VARIANT, takes the name from what it
	// parsed, and the tables write what it parsed, rather than each
	// reading the text again. Nil for other expressions.
	Path []expr.PathStep
}

// NewRoute makes a Route of a fanout schema's fanout_by expression. A
// Route is used by one goroutine at a time, as a compiled expression is,
// so a run makes one for each partition it routes.
type NewRoute func() (Route, error)

// Compiled returns what makes the routes of the fanout_by expression src,
// each compiled anew.
func Compiled(src string) NewRoute {
	return func() (Route, error) {
		prog, err := expr.Compile(src)
		if err != nil {
			return Route{}, err
		}
		path, _ := prog.ValuePath()
		return Route{Func: prog.EvalString, Path: path}, nil
	}
}

// router names the table of each record of one partition: one per
// partition a run reads, used by the goroutine that relays the
// partition's batches to the run.
type router struct {
	route RouteFunc
	// path is the route's JSON path on the value, when the router parses
	// the values for the tables (see [Route.Path]); nil when it does not.
	path []expr.PathStep
	// enc parses the values, when path is set; budget counts what holds a
	// batch's routes and parsed values (nil when none does).
	enc    variant.Encoder
	budget *memory.Budget
	// skipTombstones says a record without a value has no table and is
	// skipped: the tombstone that follows a delete in a changelog stream
	// routed by the default route, which reads the source table from the
	// value (see [skipsTombstones]).
	skipTombstones bool
	// index holds the index in names of each table of the batch being
	// routed; reused from batch to batch.
	index map[string]int32
	// tables maps the names the route returned that are valid table names
	// to those tables' names, in lower case: a name is checked and lowered
	// once, not at each of its records, while there are few.
	tables map[string]string
}

// maxRoutedNames bounds a router's tables: a route that returns more
// distinct names has each checked at each record past it.
const maxRoutedNames = 4096

// What a routed batch holds, for a record that has no table, in place of
// the index of its table's name: skipped for one no table takes, and from
// unroutable down, unroutable-k for one that cannot be routed, whose
// error is the batch's k-th.
const (
	skipped    int32 = -1
	unroutable int32 = -2
)

// routedBatch is a fetched batch with the table of each of its records
// named, by the router of its partition.
type routedBatch struct {
	*ingest.SharedBatch
	// names lists the batch's tables in the order of their first record.
	names []string
	// at holds, for each record of the batch, the index of its table in
	// names, or skipped, or unroutable-k (see above).
	at []int32
	// errs holds why each record that cannot be routed has no table, in
	// the order of the records.
	errs []*routeError
	// values holds, when the router parses the values, each record's
	// value encoded as a VARIANT, or nothing (nil Metadata) for one that
	// is not a JSON text the encoder accepts; in arena.
	values []variant.Encoded
	arena  []byte
	// budget counts at, values and the arena's arrays, charged bytes in
	// all; counted says that it counts the arena's current array; nil when
	// none does.
	budget  *memory.Budget
	charged int64
	counted bool
}

// arenas holds the arenas of routed batches the run is done with.
var arenas = sync.Pool{New: func() any { return new([]byte) }}

// Release releases the fetched batch, and the arena of the values parsed,
// which another router may fill at once: the run releases a batch once
// every table it went to wrote its rows, and no table keeps a view of
// the values it wrote (the Parquet writer copies them), as none keeps one
// of a record's bytes.
func (rb *routedBatch) Release() {
	rb.SharedBatch.Release()
	if rb.arena != nil {
		a := rb.arena[:0]
		rb.arena, rb.values = nil, nil
		arenas.Put(&a)
	}
	if rb.budget != nil {
		rb.budget.Release(rb.charged)
		rb.charged = 0
	}
}

// grow gives the arena room for n more bytes, in a new array when it has
// not (the values kept so far keep the old one), and has the budget count
// the array.
func (rb *routedBatch) grow(n int) {
	if len(rb.arena)+n > cap(rb.arena) {
		rb.arena = make([]byte, 0, max(cap(rb.arena), n, 64<<10))
		rb.counted = false
	}
	if !rb.counted {
		rb.charge(cap(rb.arena))
	}
	rb.counted = true
}

// charge counts n bytes of the batch in the budget, if any, until
// Release. The batch is read already: it is routed (and its values parsed,
// when the router parses them) whatever the budget holds, which then has
// the tables flush.
func (rb *routedBatch) charge(n int) {
	if rb.budget != nil {
		rb.budget.Grow(int64(n))
		rb.charged += int64(n)
	}
}

// keep notes v, record i's value parsed, copied into the batch's arena.
func (rb *routedBatch) keep(i int, v variant.Encoded) {
	n := len(v.Metadata) + len(v.Value)
	rb.grow(n)
	at := len(rb.arena)
	rb.arena = append(append(rb.arena, v.Metadata...), v.Value...)
	m := at + len(v.Metadata)
	rb.values[i] = variant.Encoded{Metadata: rb.arena[at:m:m], Value: rb.arena[m : at+n : at+n]}
}

// routeBatch names the table of every record of b. It routes the whole
// batch, past the offsets the run has routed too: which of them the run
// takes is the run's to say (see [fanoutRun.add]), and a record it does
// not take is neither written nor failed for.
func (rt *router) routeBatch(b *ingest.SharedBatch) *routedBatch {
	rb := &routedBatch{SharedBatch: b, at: make([]int32, len(b.Records)), budget: rt.budget}
	rb.charge(len(rb.at) * int(unsafe.Sizeof(rb.at[0])))
	if rt.path != nil {
		rb.values = make([]variant.Encoded, len(b.Records))
		rb.charge(len(rb.values) * int(unsafe.Sizeof(variant.Encoded{})))
		size := 0
		for i := range b.Records {
			size += len(b.Records[i].Value)
		}
		// The encoding of a text is mostly no longer than the text: half
		// as much again leaves room for short values, whose headers weigh
		// more.
		rb.arena = *arenas.Get().(*[]byte)
		if cap(rb.arena) > 2*size+64<<10 {
			rb.arena = nil // one of a batch much larger: let it go
		}
		rb.grow(size + size/2)
	}
	clear(rt.index)
	for i := range b.Records {
		name, skip, why := rt.table(rb, i)
		switch {
		case skip:
			rb.at[i] = skipped
		case why != nil:
			rb.at[i] = unroutable - int32(len(rb.errs))
			rb.errs = append(rb.errs, why)
		default:
			k, ok := rt.index[name]
			if !ok {
				k = int32(len(rb.names))
				rt.index[name] = k
				rb.names = append(rb.names, name)
			}
			rb.at[i] = k
		}
	}
	return rb
}

// skipsTombstones reports whether the fanout schema f skips the records
// without a value: its value is a changelog format and it routes by the
// default route (neither fanout_by nor table_id_fields), which names a
// record's table after the source table its value names. A tombstone has
// none; the delete event before it carries the row.
func skipsTombstones(f *spec.FanoutSchema) bool {
	fo := &f.FanoutOptions
	return fo.FanoutBy == "" && len(fo.TableIDFields) == 0 && f.ConnectorOptions.KafkaOptions.ValueTransformer.Changelog()
}

// table returns the lower-case name of the table of rb's record i, or
// skip true for a record no table takes, or why it cannot be routed.
func (rt *router) table(rb *routedBatch, i int) (name string, skip bool, why *routeError) {
	r := &rb.Records[i]
	if rt.skipTombstones && r.Value == nil {
		return "", true, nil
	}
	name, null, err := rt.evaluate(rb, i)
	switch {
	case err != nil:
		return "", false, newRouteError(r, fmt.Errorf("fanout_by failed: %w", err))
	case null:
		return "", false, newRouteError(r, fmt.Errorf("fanout_by returned NULL"))
	}
	if t, ok := rt.tables[name]; ok {
		return t, false, nil
	}
	if err := spec.CheckRoutedName(name); err != nil {
		return "", false, newRouteError(r, err)
	}
	// The name may be part of the record's value, which goes with the
	// batch: ToLower copies one it changes, the others are copied here.
	t := strings.ToLower(name)
	if t == name {
		t = strings.Clone(name)
	}
	if rt.tables != nil && len(rt.tables) < maxRoutedNames {
		k := t
		if t != name {
			k = strings.Clone(name)
		}
		rt.tables[k] = t
	}
	return t, false, nil
}

// evaluate evaluates the route on rb's record i. When the router parses
// the values, it parses this one, keeps it in rb, and reads the name from
// what it parsed; a value the VARIANT encoder refuses (not JSON, a key
// twice, say) is read again by the route itself, whose reading of JSON is
// more lenient, and so is one whose tokens the encoder did not keep (of
// very many values), which rb keeps all the same.
func (rt *router) evaluate(rb *routedBatch, i int) (name string, null bool, err error) {
	r := &rb.Records[i]
	if rt.path != nil && r.Value != nil {
		if meta, value, err := rt.enc.Encode(r.Value); err == nil {
			rb.keep(i, variant.Encoded{Metadata: meta, Value: value})
			if root, ok := rt.enc.Root(r.Value); ok {
				name, null = expr.VariantPath(root, rt.path)
				return name, null, nil
			}
		}
	}
	return rt.route(r)
}

// routeError is a record that has no valid table name.
type routeError struct {
	// record names the record: topic[partition]@offset.
	record string
	err    error
}

// newRouteError returns the routeError of r, which it does not keep.
func newRouteError(r *record.Record, err error) *routeError {
	return &routeError{record: fmt.Sprintf("%s[%d]@%d", r.Topic, r.Partition, r.Offset), err: err}
}

// Error names the record and says why it has no table.
func (e *routeError) Error() string {
	return fmt.Sprintf("record %s cannot be routed: %v", e.record, e.err)
}

// Unwrap returns why.
func (e *routeError) Unwrap() error { return e.err }

// fanoutErrorsColumns are the columns of [spec.FanoutErrorsTable]: the raw
// record (its key, its value and the fields of the source metadata column)
// and why it could not be routed.
var fanoutErrorsColumns = append(deltasink.RawRecordColumns("timestampType"),
	schema.Field{Name: "error", Type: &schema.Type{Kind: schema.String}, Nullable: true})
