package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/encode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// This file runs the second source of a Kafka sink, source_table: the
// changelog of a table a pipeline of this agent writes (one of its tables,
// or a table one of its fanout schemas routes to), that is every row
// its commits appended, in commit order (the tables are append only), read
// from its Delta log and data files while the pipeline writes them.
//
// The position is the next table version to read. It lives where a topic
// source's offsets live, in the sink's consumer group
// "tributary-sink.<name>", as the offset of partition 0 of the topic
// _tributary_sink_positions: a group's offsets must name a topic partition
// that exists (the broker refuses an OffsetCommit or TxnOffsetCommit for
// an unknown one), so the sink creates that topic, with one partition,
// when it is missing. Nothing is ever written to it. An exactly-once sink
// commits the position in the same transaction as the records of the
// versions before it, so a restart resumes exactly after the last
// committed transaction.
//
// A transaction holds whole versions, never part of one: one version, or
// several small ones up to maxSinkPendingBytes of records. So the position
// needs no row index within a version, and a version is either all in the
// sink's topics or not at all. The cost is that one very large commit of
// the table is held in memory, encoded, before it is written.

// sinkPositionsTopic is the topic whose partition 0 holds, in a sink's
// consumer group, the next version of its source_table to read.
const sinkPositionsTopic = "_tributary_sink_positions"

// sinkVersionPosition is the key of a table source's position in
// [spec.KafkaSinkStatus.Positions].
const sinkVersionPosition = "version"

// sinkSource is a table a pipeline of this agent writes, as a sink reads
// it.
type sinkSource struct {
	// dir is the table's location, layout how its columns are laid out
	// (which are the key fields, _op, _source, metadata columns).
	dir    string
	layout *spec.Layout
	// schema and table name it: the table id of rows that carry no
	// _source.
	schema, table string
}

// sourceTable returns the table named qualified ("<catalog>.<schema>.<table>",
// any case) that a pipeline of m writes, as one of its tables or as a
// table a fanout schema routes to (which may not exist yet: its changes
// come when it does); ok is false when none does.
func (m *Manager) sourceTable(qualified string) (src sinkSource, ok bool, err error) {
	want := strings.ToLower(qualified)
	parts := strings.Split(want, ".")
	if len(parts) != 3 {
		return sinkSource{}, false, nil
	}
	m.mu.Lock()
	var dir string
	var t spec.Table
	for _, p := range m.pipelines {
		for _, r := range p.tables {
			if r.cfg.Qualified == want {
				dir, t, ok = r.cfg.Dir, r.cfg.Table, true
			}
		}
	}
	for _, r := range m.fanouts {
		cfg := r.Config()
		f := &cfg.Fanout
		if !ok && strings.ToLower(f.QualifiedSchema()) == parts[0]+"."+parts[1] &&
			spec.CheckRoutedName(parts[2]) == nil {
			dir, t, ok = spec.JoinLocation(cfg.Dir, parts[2]), f.TableSpec(parts[2]), true
		}
	}
	m.mu.Unlock()
	if !ok {
		return sinkSource{}, false, nil
	}
	layout, errs := t.Layout()
	if len(errs) > 0 {
		return sinkSource{}, true, fmt.Errorf("the layout of table %s: %w", qualified, errs)
	}
	return sinkSource{dir: dir, layout: layout, schema: parts[1], table: parts[2]}, true, nil
}

// checkSourceTable is CheckSink's check of k's source_table: some
// pipeline of m writes it, and, when the table has no _source column (so
// that every row's table id is the table's own "<schema>.<table>"), each
// pattern of table_topic_mapping matches that id.
func (m *Manager) checkSourceTable(k *spec.KafkaSink) error {
	src, ok, err := m.sourceTable(k.SourceTable)
	if ok && err == nil && !src.layout.Source {
		id := src.schema + "." + src.table
		if errs := k.CheckTableIDs([]string{id}, fmt.Sprintf("the id of source_table %q (it has no %s column)",
			k.SourceTable, spec.SourceColumn)); len(errs) > 0 {
			return errs
		}
	}
	switch {
	case err != nil:
		return spec.Errors{{Path: "source_table", Detail: err.Error()}}
	case !ok:
		return spec.Errors{{Path: "source_table", Detail: fmt.Sprintf("no pipeline of this agent writes table %q: "+
			"name a destination table (\"<destination_catalog>.<destination_schema>.<destination_table>\") "+
			"of a pipeline, or a table of a fanout schema's destination schema, applied first", k.SourceTable)}}
	}
	return nil
}

// runTable writes the changes of the sink's source_table until ctx ends
// or an error happens, and returns that error. s has its producer.
func (s *sinkSession) runTable(ctx context.Context) error {
	r := s.r
	src, ok, err := r.m.sourceTable(r.spec.SourceTable)
	if err != nil {
		return runner.Fatal(err)
	}
	if !ok {
		return fmt.Errorf("no pipeline of this agent writes table %q (any more): the sink waits for one", r.spec.SourceTable)
	}
	if err := r.client.EnsureTopic(ctx, sinkPositionsTopic, 1); err != nil {
		return fmt.Errorf("the sink's position topic: %w", err)
	}
	tp := kafka.TopicPartition{Topic: sinkPositionsTopic}
	held, err := r.client.StableGroupOffsets(ctx, r.spec.Group(), []kafka.TopicPartition{tp})
	if err != nil {
		return fmt.Errorf("read the sink's position: %w", err)
	}
	next := held[tp] // 0 when the group has none: from the table's first version
	reader, err := table.OpenChanges(src.dir)
	if err != nil {
		return fmt.Errorf("open table %s: %w", r.spec.SourceTable, err)
	}
	defer reader.Close()
	r.committedVersion(0, next)
	r.sup.SetState(spec.StateRunning, nil)
	tick := time.NewTicker(r.spec.FlushEvery())
	defer tick.Stop()
	for {
		n, moved, err := s.tableRound(ctx, reader, &src, next)
		if err != nil {
			return err
		}
		if moved > next {
			next = moved
			r.committedVersion(n, next)
			continue // there may be more
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// tableRound writes the changes of the versions from next on, whole
// versions up to maxSinkPendingBytes of records, and commits the version
// after them. It returns how many records it wrote and the new position
// (next when there was no new version).
func (s *sinkSession) tableRound(ctx context.Context, reader *table.ChangeReader, src *sinkSource, next int64) (int, int64, error) {
	out := map[string]map[int32][]kafka.OutRecord{}
	n, size := 0, 0
	pos := next
	for size < maxSinkPendingBytes {
		changes, err := reader.Changes(pos, 1)
		if err != nil {
			err = fmt.Errorf("read the changes of table %s: %w", s.r.spec.SourceTable, err)
			if errors.Is(err, table.ErrNotChangelog) {
				// Reading again gives the same: the sink stops, FAILED.
				err = runner.Fatal(err)
			}
			return 0, next, err
		}
		if len(changes) == 0 {
			break
		}
		c := changes[0]
		for _, f := range c.Files {
			k, b, err := s.encodeFile(ctx, reader, src, f, out)
			if err != nil {
				return 0, next, fmt.Errorf("table %s version %d: %w", s.r.spec.SourceTable, c.Version, err)
			}
			n, size = n+k, size+b
		}
		pos = c.Version + 1
	}
	if pos == next {
		return 0, next, nil
	}
	offsets := map[string]map[int32]int64{sinkPositionsTopic: {0: pos}}
	if err := s.write(ctx, out, offsets); err != nil {
		return 0, next, s.recover(ctx, err)
	}
	return n, pos, nil
}

// encodeFile reads data file f of the source table and appends the
// records of its rows to out. It returns how many records it added and
// their size in bytes.
func (s *sinkSession) encodeFile(ctx context.Context, reader *table.ChangeReader, src *sinkSource, f string, out map[string]map[int32][]kafka.OutRecord) (int, int, error) {
	cols, n, err := reader.ReadFile(f)
	if err != nil || n == 0 {
		return 0, 0, err
	}
	fields := reader.Schema()
	// Rows takes the source record of each row for its key when the key
	// is not parsed, and for messages: a table's row has its key column
	// instead.
	recs := make([]record.Record, n)
	keyCol := len(fields) > 0 && fields[0].Name == src.layout.Key.Column && src.layout.Key.Fields == nil &&
		!src.layout.Key.Inferred() && (fields[0].Type.Kind == schema.Binary || fields[0].Type.Kind == schema.String)
	for i := range recs {
		recs[i].Topic, recs[i].Offset = f, int64(i)
		if keyCol && i < len(cols[0]) && !cols[0][i].IsNull() {
			recs[i].Key = cols[0][i].ByteArray()
		}
	}
	batch := decode.Batch{Columns: cols, Rows: n}
	rows, err := encode.Rows(src.layout, fields, &batch, recs)
	if err != nil {
		return 0, 0, fmt.Errorf("data file %s: %w", f, err)
	}
	now := time.Now()
	size := 0
	for i := range rows {
		row := &rows[i]
		// A row without _source is a change of the table itself: its id
		// is "<schema>.<table>", or the table alone without
		// full_table_id.
		if row.Table == "" {
			row.DB, row.Table = src.schema, src.table
		}
		row.Topic = ""
		if err := s.add(ctx, row, now, out); err != nil {
			return 0, 0, fmt.Errorf("data file %s, row %d: %w", f, i, err)
		}
		size += len(s.value) + len(row.Key)
	}
	return n, size, nil
}

// committedVersion records a round written: n records, and the next
// version of the source table to read, now committed (at a session's
// start: where it resumes).
func (r *sinkRunner) committedVersion(n int, next int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status.Records += int64(n)
	r.status.Positions = map[string]int64{sinkVersionPosition: next}
}
