package pipeline

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/columns"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafkasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// This file is the manager's side of the Kafka sinks: it applies,
// removes and reports them, and finds the table a sink's source_table
// names among the tables its pipelines and fanout schemas write. The
// sinks themselves run in package kafkasink.

// CheckSink reports whether ApplySink would refuse sink k, with the same
// [spec.Errors], and changes nothing. k must be normalized and valid.
func (m *Manager) CheckSink(k *spec.KafkaSink, _ *spec.Connection, _ map[string]spec.SchemaRegistry) error {
	if k.SourceTable != "" {
		return m.checkSourceTable(k)
	}
	t := k.SourceTableSpec()
	layout, errs := t.Layout()
	if len(errs) > 0 {
		return errs
	}
	if _, err := columns.InferredPart(layout); err != nil {
		return spec.Errors{{Path: "source", Detail: err.Error()}}
	}
	return nil
}

// ApplySink starts Kafka sink k writing through conn, or restarts it when
// its spec or connection changed: the running session stops (its open
// transaction is aborted by the new session's start) and a new one resumes
// from the sink's consumer group. regs holds the schema registries of the
// other connections k's source's transformers name.
func (m *Manager) ApplySink(ctx context.Context, k *spec.KafkaSink, conn *spec.Connection, regs map[string]spec.SchemaRegistry) error {
	if err := m.CheckSink(k, conn, regs); err != nil {
		return err
	}
	m.changeMu.Lock()
	defer m.changeMu.Unlock()
	if m.cfg.Members != nil {
		return m.applySharedSink(ctx, k, conn, regs)
	}
	m.mu.Lock()
	old := m.sinks[k.Name]
	m.mu.Unlock()
	if old != nil {
		if old.Runs(k, conn, regs) && old.Status().State != spec.StateFailed {
			return nil
		}
		old.Stop()
	}
	r, err := kafkasink.Start(ctx, k, conn, regs, m.sinkDeps())
	if err != nil {
		if old != nil {
			// Not left behind stopped: a sink the manager does not run is
			// applied again (see SinkStatus).
			m.mu.Lock()
			delete(m.sinks, k.Name)
			m.mu.Unlock()
		}
		return err
	}
	m.mu.Lock()
	m.sinks[k.Name] = r
	m.mu.Unlock()
	m.log.Info("kafka sink applied", "kafka_sink", k.Name)
	return nil
}

// sinkDeps returns what the manager gives the sinks it starts.
func (m *Manager) sinkDeps() kafkasink.Deps {
	return kafkasink.Deps{Memory: m.cfg.Memory, Registries: &m.registries, SourceTable: m.sourceTable, Log: m.log}
}

// RemoveSink stops the named sink and forgets it. Its consumer group
// stays.
func (m *Manager) RemoveSink(ctx context.Context, name string) error {
	if m.cfg.Members != nil {
		m.changeMu.Lock()
		defer m.changeMu.Unlock()
		m.mu.Lock()
		sh := m.sinkShares[name]
		m.mu.Unlock()
		if sh != nil {
			m.stopSharedSink(ctx, name, sh)
			m.log.Info("kafka sink stopped and removed", "kafka_sink", name)
		}
		return nil
	}
	removeRunner(m, m.sinks, name, (*kafkasink.Runner).Stop, "kafka_sink", "kafka sink stopped and removed")
	return nil
}

// SinkStatus reports the named sink; ok is false when it does not run.
func (m *Manager) SinkStatus(name string) (status spec.KafkaSinkStatus, ok bool) {
	if status, ok = runnerStatus(m, m.sinks, name, (*kafkasink.Runner).Status); ok {
		return status, true
	}
	return m.sharedSinkStatus(name)
}

// stopSinks stops every sink, and leaves the members groups of those
// applied in a cluster; the caller holds changeMu.
func (m *Manager) stopSinks(ctx context.Context) {
	m.mu.Lock()
	shares := maps.Clone(m.sinkShares)
	m.mu.Unlock()
	for name, sh := range shares {
		m.stopSharedSink(ctx, name, sh)
	}
	m.mu.Lock()
	sinks := maps.Clone(m.sinks)
	clear(m.sinks)
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range sinks {
		wg.Go(r.Stop)
	}
	wg.Wait()
}

// sourceTable returns the table named qualified ("<catalog>.<schema>.<table>",
// any case) that a pipeline of m writes, as one of its tables or as a
// table a fanout schema routes to (which may not exist yet: its changes
// come when it does); ok is false when none does.
func (m *Manager) sourceTable(qualified string) (src kafkasink.SourceTable, ok bool, err error) {
	want := strings.ToLower(qualified)
	parts := strings.Split(want, ".")
	if len(parts) != 3 {
		return kafkasink.SourceTable{}, false, nil
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
		return kafkasink.SourceTable{}, false, nil
	}
	layout, errs := t.Layout()
	if len(errs) > 0 {
		return kafkasink.SourceTable{}, true, fmt.Errorf("the layout of table %s: %w", qualified, errs)
	}
	return kafkasink.SourceTable{Dir: dir, Layout: layout, Schema: parts[1], Table: parts[2]}, true, nil
}

// checkSourceTable is CheckSink's check of k's source_table: some
// pipeline of m writes it, and, when the table has no _source column (so
// that every row's table id is the table's own "<schema>.<table>"), each
// pattern of table_topic_mapping matches that id.
func (m *Manager) checkSourceTable(k *spec.KafkaSink) error {
	src, ok, err := m.sourceTable(k.SourceTable)
	if ok && err == nil && !src.Layout.Source {
		id := src.Schema + "." + src.Table
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
