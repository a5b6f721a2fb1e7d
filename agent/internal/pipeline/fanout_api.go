package pipeline

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/expr"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/fanout"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// ApplyFanout starts fanout schema f, or updates it in place, inside its
// pipeline (which must be applied: else spec.Errors{{Path:
// "pipeline_name", ...}}). f must be normalized and valid. An unchanged
// fanout schema keeps running; a changed one restarts after a final flush
// and commit.
func (m *Manager) ApplyFanout(ctx context.Context, f *spec.FanoutSchema) error {
	m.changeMu.Lock()
	defer m.changeMu.Unlock()
	p := m.applied(f.Pipeline)
	cfg, newRoute, err := m.reviewFanout(f, p)
	if err != nil {
		return err
	}
	m.mu.Lock()
	old := m.fanouts[f.Name]
	m.mu.Unlock()
	if old != nil && old.Client() == p.client && reflect.DeepEqual(old.Config(), cfg) {
		return nil
	}
	m.stopFanout(ctx, f.Name)
	if err := m.startFanout(ctx, cfg, p, newRoute); err != nil {
		return err
	}
	m.log.Info("fanout schema applied", "pipeline", f.Pipeline, "fanout", f.Name)
	return nil
}

// startFanout starts fanout schema cfg in pipeline p, routing with the
// routes newRoute makes, and, in a cluster, joins its members group: it
// reads only the partitions the group gives the agent, and waits for them. On an error
// joining, the fanout schema stays, waiting, until applied again or
// removed. m.changeMu must be held.
func (m *Manager) startFanout(ctx context.Context, cfg fanout.Config, p *running, newRoute fanout.NewRoute) error {
	name := cfg.Fanout.Name
	var s *share
	if m.cfg.Members != nil {
		s = &share{sources: []spec.KafkaOptions{cfg.Fanout.ConnectorOptions.KafkaOptions}}
		s.reassign = func(map[kafka.TopicPartition]bool) { m.reassignFanout(s, name, p) }
		s.mu.Lock() // the first assignment waits for the runner
		defer s.mu.Unlock()
	}
	r := fanout.Start(cfg, s.ownership(), p.client, p.source, newRoute, &m.registries, m.cfg.Memory, m.log)
	m.mu.Lock()
	m.fanouts[name] = r
	if s != nil {
		m.fanoutShares[name] = s
	}
	m.mu.Unlock()
	if s == nil {
		return nil
	}
	return m.join(ctx, s, fanoutMembersKey(name), &p.conn, p.client)
}

// reassignFanout restarts the named fanout schema, of pipeline p, with its
// share s after an assignment changed it. It returns once the old runner
// stopped, or after the revoke timeout (see reassignTables). s.mu is held.
func (m *Manager) reassignFanout(s *share, name string, p *running) {
	m.mu.Lock()
	old := m.fanouts[name]
	m.mu.Unlock()
	if old == nil {
		return
	}
	if !m.stopWithin(old.Stop) {
		m.log.Warn("a fanout schema losing partitions did not stop within the revoke timeout; "+
			"its final commits fail if the partitions' new owners commit first", "fanout", name, "timeout", m.revokeTimeout())
	}
	r := fanout.Start(old.Config(), s.ownership(), p.client, p.source, old.NewRoute(), &m.registries, m.cfg.Memory, m.log)
	m.mu.Lock()
	m.fanouts[name] = r
	m.mu.Unlock()
	m.log.Info("partitions assigned", "fanout", name, "owned", len(s.owned))
}

// detachFanout takes the named fanout schema out of the manager and
// returns its runner (nil when not running) and its share (nil for a
// single agent), closed first so that no assignment restarts the runner
// from then on. m.changeMu must be held.
func (m *Manager) detachFanout(name string) (*fanout.Runner, *share) {
	m.mu.Lock()
	s := m.fanoutShares[name]
	m.mu.Unlock()
	s.close() // waits for an assignment in progress
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.fanouts[name]
	delete(m.fanouts, name)
	delete(m.fanoutShares, name)
	return r, s
}

// stopFanout stops the named fanout schema, if it runs, after a final
// flush and commit, forgets it and, in a cluster, leaves its members
// group. m.changeMu must be held.
func (m *Manager) stopFanout(ctx context.Context, name string) {
	r, s := m.detachFanout(name)
	if r != nil {
		r.Stop()
	}
	m.leave(ctx, s, fanoutMembersKey(name))
}

// CheckFanout is ApplyFanout's dry run: it returns the same errors without
// starting, stopping or changing anything.
func (m *Manager) CheckFanout(f *spec.FanoutSchema) error {
	_, _, err := m.reviewFanout(f, m.applied(f.Pipeline))
	return err
}

// reviewFanout returns the configuration of fanout schema f in pipeline p
// (nil when not applied) and what makes its routes, or why it cannot run: as
// [spec.Errors] on the attribute at fault, including the routed tables
// that exist with columns the options cannot keep.
func (m *Manager) reviewFanout(f *spec.FanoutSchema, p *running) (fanout.Config, fanout.NewRoute, error) {
	if p == nil {
		return fanout.Config{}, nil, spec.Errors{{Path: "pipeline_name",
			Detail: fmt.Sprintf("pipeline %q does not exist; create it first", f.Pipeline)}}
	}
	src := f.RouteExpression()
	if _, err := expr.Compile(src); err != nil {
		return fanout.Config{}, nil, spec.Errors{{Path: "fanout_options.fanout_by", Detail: err.Error()}}
	}
	root, err := m.root(&p.spec)
	if err != nil {
		return fanout.Config{}, nil, err
	}
	cfg := m.fanoutConfig(root, &p.spec, f, &p.conn)
	if err := checkFanout(&cfg); err != nil {
		return fanout.Config{}, nil, err
	}
	// A compiled expression evaluates on one goroutine at a time: each
	// route has one of its own.
	return cfg, fanout.Compiled(src), nil
}

// fanoutConfig returns the configuration of fanout schema f in pipeline p,
// whose tables go under root.
func (m *Manager) fanoutConfig(root string, p *spec.Pipeline, f *spec.FanoutSchema, conn *spec.Connection) fanout.Config {
	return fanout.Config{
		Pipeline: p.Name,
		Fanout:   *f,
		Dir:      spec.JoinLocation(root, f.DestinationCatalog, f.DestinationSchema),
		Conn:     *conn,
		Settings: m.runSettings(p, f.DestinationCatalog, f.DestinationSchema),
	}
}

// checkFanout reports whether the routed tables' layout is one the agent
// can run, and whether every routed table created so far can take it, as
// [spec.Errors].
func checkFanout(cfg *fanout.Config) error {
	f := &cfg.Fanout
	probe := f.TableSpec("t")
	layout, errs := probe.Layout()
	if len(errs) > 0 {
		return spec.Errors{{Path: "fanout_options.transforms", Detail: errs.Error()}}
	}
	if layout.Key.Inferred() && layout.Value.Inferred() {
		return spec.Errors{{Path: "fanout_options.transforms",
			Detail: "schema_evolution_mode on both the key and the value is not supported: infer the schema of one of them only"}}
	}
	created, err := fanout.CreatedTables(cfg.Dir)
	if err != nil {
		return err
	}
	// Side by side, as a pipeline's tables (see Manager.review).
	checked := runner.SideBySide(len(created), concurrentChecks, func(i int) error {
		name := created[i]
		if name == spec.FanoutErrorsTable {
			return nil
		}
		tc := tableConfig{Qualified: strings.ToLower(f.DestinationCatalog + "." + f.DestinationSchema + "." + name),
			Dir: spec.JoinLocation(cfg.Dir, name), Table: f.TableSpec(name)}
		return checkSchema(&tc, "route to a new destination_schema")
	})
	var refused spec.Errors
	for _, err := range checked {
		if err != nil {
			refused = append(refused, spec.FieldError{Path: "fanout_options.transforms", Detail: err.Error()})
		}
	}
	if len(refused) > 0 {
		return refused
	}
	return nil
}

// RemoveFanout stops the named fanout schema after a final flush and
// commit, and forgets it. Its tables stay.
func (m *Manager) RemoveFanout(ctx context.Context, name string) error {
	m.changeMu.Lock()
	defer m.changeMu.Unlock()
	m.mu.Lock()
	running := m.fanouts[name] != nil
	m.mu.Unlock()
	if running {
		m.stopFanout(ctx, name)
		m.log.Info("fanout schema stopped and removed; its tables stay", "fanout", name)
	}
	return nil
}

// FanoutStatus reports the named fanout schema; ok is false when it is not
// running.
func (m *Manager) FanoutStatus(name string) (spec.FanoutStatus, bool) {
	return runnerStatus(m, m.fanouts, name, (*fanout.Runner).Status)
}

// fanoutsOf returns the fanout runners of the named pipeline, or of every
// pipeline for "". m.mu must be held.
func (m *Manager) fanoutsOf(pipeline string) []*fanout.Runner {
	var rs []*fanout.Runner
	for _, r := range m.fanouts {
		if pipeline == "" || r.Config().Pipeline == pipeline {
			rs = append(rs, r)
		}
	}
	return rs
}

// reapplyFanouts restarts the fanout runners of pipeline p, just applied,
// whose configuration or client changed with it. m.changeMu must be held.
func (m *Manager) reapplyFanouts(ctx context.Context, p *running) {
	m.mu.Lock()
	rs := m.fanoutsOf(p.spec.Name)
	m.mu.Unlock()
	for _, old := range rs {
		was := old.Config()
		cfg, newRoute, err := m.reviewFanout(&was.Fanout, p)
		if err == nil && old.Client() == p.client && reflect.DeepEqual(was, cfg) {
			continue
		}
		m.stopFanout(ctx, was.Fanout.Name)
		if err != nil {
			m.log.Error("fanout schema stopped: the pipeline's new settings do not fit it", "fanout", was.Fanout.Name, "err", err)
			continue
		}
		if err := m.startFanout(ctx, cfg, p, newRoute); err != nil {
			m.log.Error("fanout schema restarted with the pipeline but could not join its members group; apply it again",
				"fanout", was.Fanout.Name, "err", err)
		}
	}
}

// stopFanouts stops the fanout runners of the named pipeline, or of every
// pipeline for "", in parallel, forgets them and, in a cluster, leaves
// their members groups. m.changeMu must be held.
func (m *Manager) stopFanouts(ctx context.Context, pipeline string) {
	m.mu.Lock()
	var names []string
	for _, r := range m.fanoutsOf(pipeline) {
		names = append(names, r.Config().Fanout.Name)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Go(func() { m.stopFanout(ctx, name) })
	}
	wg.Wait()
}
