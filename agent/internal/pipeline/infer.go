package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// inferColumns gives the inferred part of layout, if any (json_options with
// a schema_evolution_mode), its columns. A table with a schema (prev)
// starts from the part's columns there; a new one from its
// json_options.initial_schemas entry, if any, with the columns inferred
// from the latest infer_records_per_partition records of each partition it
// will read after them (see startColumns). The schema hints apply over
// either (see withHints).
func (r *tableRunner) inferColumns(ctx context.Context, layout *spec.Layout, prev []schema.Field) error {
	p, err := inferredPart(layout)
	if p == nil || err != nil {
		return err
	}
	base := ownColumns(layout, prev)
	if prev == nil {
		sampled, err := r.sample(ctx, p)
		if err != nil {
			return err
		}
		if base, err = startColumns(p, r.cfg.Table.DestinationTable, sampled); err != nil {
			return err
		}
	}
	return withHints(layout, p, base)
}

// startColumns returns the columns a new table's inferred part p starts
// with: those json_options.initial_schemas gives table (its key names the
// table, ignoring case as spec does when no key spells it exactly), in
// their order and with their types (STRUCT columns flattened with
// flatten_nested_columns), then the inferred fields they lack (names
// compare ignoring case). Without an entry for table, inferred.
func startColumns(p *spec.Part, table string, inferred []schema.Field) ([]schema.Field, error) {
	jo := p.Transformer.RowOptions()
	ddl, ok := jo.InitialSchemas[table]
	for name, d := range jo.InitialSchemas {
		if !ok && strings.EqualFold(name, table) {
			ddl, ok = d, true
		}
	}
	if !ok {
		return inferred, nil
	}
	initial, err := schema.ParseDDL(ddl)
	if err != nil {
		return nil, runner.Fatal(fmt.Errorf("json_options.initial_schemas[%q]: %w", table, err))
	}
	if decode.InferOptions(jo).FlattenNested {
		initial = schema.Flatten(initial)
	}
	cols := make([]schema.Field, 0, len(initial)+len(inferred))
	for _, f := range initial {
		cols = append(cols, schema.Nullable(f))
	}
	for _, f := range inferred {
		if !slices.ContainsFunc(initial, func(i schema.Field) bool { return strings.EqualFold(i.Name, f.Name) }) {
			cols = append(cols, f)
		}
	}
	return cols, nil
}

// inferredPart returns the part of layout whose columns are inferred, nil
// for none.
func inferredPart(layout *spec.Layout) (*spec.Part, error) {
	switch k, v := layout.Key.Inferred(), layout.Value.Inferred(); {
	case k && v:
		return nil, runner.Fatal(errors.New("schema_evolution_mode on both the key and the value transformer is not supported: " +
			"infer the schema of one of them only"))

	case k:
		return &layout.Key, nil
	case v:
		return &layout.Value, nil
	}
	return nil, nil
}

// ownColumns returns the fields of the inferred part of layout, whose
// Fields are unset, that table columns prev hold: the columns of prev that
// none of layout's columns claims and that start with the part's prefix
// (key_fields_prefix or value_fields_prefix), named without it.
func ownColumns(layout *spec.Layout, prev []schema.Field) []schema.Field {
	prefix := layout.Value.Prefix
	if layout.Key.Inferred() {
		prefix = layout.Key.Prefix
	}
	taken := map[string]bool{}
	for _, f := range layout.Columns() {
		taken[strings.ToLower(f.Name)] = true
	}
	var own []schema.Field
	for _, f := range prev {
		name, ok := strings.CutPrefix(f.Name, prefix)
		if ok && name != "" && !taken[strings.ToLower(f.Name)] {
			f.Name = name
			own = append(own, f)
		}
	}
	return own
}

// withHints sets the Fields of inferred part p of layout: base with the
// schema hints applied, which may declare columns no record had yet. A
// field whose column name (the part's prefix, then the field's name) is
// one of the table's other columns (ignoring case, as Delta does) or an
// earlier field's is left out: its values are rescued.
func withHints(layout *spec.Layout, p *spec.Part, base []schema.Field) error {
	hints, err := schema.ParseHints(p.Transformer.RowOptions().SchemaHints)
	if err != nil {
		return runner.Fatal(fmt.Errorf("json_options.schema_hints: %w", err))
	}
	taken := map[string]bool{}
	for _, f := range layout.Columns() {
		taken[strings.ToLower(f.Name)] = true
	}
	hinted, err := schema.ApplyHints(base, hints)
	if err != nil {
		return runner.Fatal(fmt.Errorf("json_options.schema_hints: %w", err))
	}
	fields := []schema.Field{}
	for _, f := range hinted {
		if k := strings.ToLower(p.Prefix + f.Name); !taken[k] {
			taken[k] = true
			fields = append(fields, schema.Nullable(f))
		}
	}
	p.Fields = fields
	return deltasink.TooWide(layout)
}

// sample infers the columns of part p from the latest records of each
// partition the table reads, at most infer_records_per_partition of them,
// as Flink's scan.max.pre.fetch.records does: the records a table is
// about to read are best described by the newest ones, whatever offset it
// starts at. 0 samples nothing (the columns are then the initial schema's
// and the hints', Flink's fixed types).
func (r *tableRunner) sample(ctx context.Context, p *spec.Part) ([]schema.Field, error) {
	ko := &r.cfg.Table.ConnectorOptions.KafkaOptions
	jo := p.Transformer.RowOptions()
	n := int64(spec.DefaultInferRecordsPerPartition)
	if jo.InferRecordsPerPartition != nil {
		n = *jo.InferRecordsPerPartition
	}
	if n <= 0 {
		return nil, nil
	}
	tps, err := r.client.Partitions(ctx, ko)
	if err != nil {
		return nil, err
	}
	latest := kafka.Latest
	if ko.ReadCommitted() {
		latest = kafka.LastStable
	}
	earliest, err := r.client.Offsets(ctx, tps, kafka.Earliest)
	if err != nil {
		return nil, err
	}
	ends, err := r.client.Offsets(ctx, tps, latest)
	if err != nil {
		return nil, err
	}
	in := schema.NewInferrer(decode.InferOptions(jo))
	records := 0
	// A changelog part's columns are those of its row images, which
	// decoding the change events gives (see imageColumns).
	changelog := p.Transformer.Changelog()
	var events []record.Record
	for _, tp := range tps {
		// Offsets below ends[tp]-n that transaction markers or compaction
		// took hold no record: the sample is then smaller than n.
		from := max(earliest[tp], ends[tp]-n)
		err := r.head(ctx, tp, from, ends[tp], n, ko.ReadCommitted(), func(rec *record.Record) {
			if changelog {
				events = append(events, deltasink.CopyRecord(rec))
				return
			}
			data := rec.Value
			if p.Column == spec.KeyColumn {
				data = rec.Key
			}
			// A record that is not a JSON object tells nothing of the
			// columns: it will be corrupt.
			if data != nil && in.Add(data) == nil {
				records++
			}
		})
		if err != nil {
			return nil, fmt.Errorf("read the latest records of %s to infer the schema: %w", tp, err)
		}
	}
	if changelog {
		r.log.Info("schema inferred from the row images", "records", len(events), "partitions", len(tps))
		return imageColumns(ctx, p, events)
	}
	r.log.Info("schema inferred", "records", records, "partitions", len(tps))
	return in.Fields(), nil
}

// head passes fn the first n records of tp from offset from, reading no
// further than until. The records are valid only during the call.
func (r *tableRunner) head(ctx context.Context, tp kafka.TopicPartition, from, until, n int64, readCommitted bool,
	fn func(*record.Record)) error {
	if from >= until || n <= 0 {
		return nil
	}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := &kafka.Fetcher{Client: r.client, TP: tp, ReadCommitted: readCommitted, Until: until,
		OnRetry: func(err error) { r.log.Warn("fetch retries", "err", err) }}
	out := make(chan kafka.Batch)
	done := make(chan error, 1)
	go func() { done <- f.Run(hctx, from, out) }()
	var seen int64
	for seen < n {
		select {
		case b := <-out:
			for i := range b.Records {
				if seen < n {
					fn(&b.Records[i])
					seen++
				}
			}
			b.Release()
			if b.Next >= until {
				seen = n
			}
		case err := <-done:
			return err
		}
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}
