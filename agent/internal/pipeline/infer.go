package pipeline

import (
	"context"
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/columns"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// inferColumns gives the inferred part of layout, if any (json_options with
// a schema_evolution_mode), its columns. A table with a schema (prev)
// starts from the part's columns there; a new one from its
// json_options.initial_schemas entry, if any, with the columns inferred
// from the latest infer_records_per_partition records of each partition it
// will read after them (see columns.Start). The schema hints apply over
// either (see columns.WithHints).
func (r *tableRunner) inferColumns(ctx context.Context, layout *spec.Layout, prev []schema.Field) error {
	p, err := columns.InferredPart(layout)
	if p == nil || err != nil {
		return err
	}
	base := columns.Own(layout, prev)
	if prev == nil {
		sampled, err := r.sample(ctx, p)
		if err != nil {
			return err
		}
		if base, err = columns.Start(p, r.cfg.Table.DestinationTable, sampled); err != nil {
			return err
		}
	}
	return columns.WithHints(layout, p, base)
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
	// decoding the change events gives (see columns.Images).
	changelog := p.Transformer.Changelog()
	var events []record.Record
	for _, tp := range tps {
		// Offsets below ends[tp]-n that transaction markers or compaction
		// took hold no record: the sample is then smaller than n.
		from := max(earliest[tp], ends[tp]-n)
		err := r.source.Head(ctx, tp, from, ends[tp], n, ko.ReadCommitted(), func(err error) { r.log.Warn("fetch retries", "err", err) }, func(rec *record.Record) {
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
		return columns.Images(ctx, p, events)
	}
	r.log.Info("schema inferred", "records", records, "partitions", len(tps))
	return in.Fields(), nil
}
