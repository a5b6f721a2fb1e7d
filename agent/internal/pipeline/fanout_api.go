package pipeline

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/expr"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/fanout"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// ApplyFanout starts fanout schema f, or updates it in place, inside its
// pipeline (which must be applied: else spec.Errors{{Path:
// "pipeline_name", ...}}). f must be normalized and valid. An unchanged
// fanout schema keeps running; a changed one restarts after a final flush
// and commit.
func (m *Manager) ApplyFanout(_ context.Context, f *spec.FanoutSchema) error {
	m.changeMu.Lock()
	defer m.changeMu.Unlock()
	p := m.applied(f.Pipeline)
	cfg, route, err := m.reviewFanout(f, p)
	if err != nil {
		return err
	}
	m.mu.Lock()
	old := m.fanouts[f.Name]
	m.mu.Unlock()
	if old != nil && old.Client() == p.client && reflect.DeepEqual(old.Config(), cfg) {
		return nil
	}
	if old != nil {
		old.Stop()
	}
	r := fanout.Start(cfg, p.client, p.source, route, &m.registries, m.cfg.Memory, m.log)
	m.mu.Lock()
	m.fanouts[f.Name] = r
	m.mu.Unlock()
	m.log.Info("fanout schema applied", "pipeline", f.Pipeline, "fanout", f.Name)
	return nil
}

// CheckFanout is ApplyFanout's dry run: it returns the same errors without
// starting, stopping or changing anything.
func (m *Manager) CheckFanout(f *spec.FanoutSchema) error {
	_, _, err := m.reviewFanout(f, m.applied(f.Pipeline))
	return err
}

// reviewFanout returns the configuration and the route of fanout schema f
// in pipeline p (nil when not applied), or why it cannot run: as
// [spec.Errors] on the attribute at fault, including the routed tables
// that exist with columns the options cannot keep.
func (m *Manager) reviewFanout(f *spec.FanoutSchema, p *running) (fanout.Config, fanout.RouteFunc, error) {
	if p == nil {
		return fanout.Config{}, nil, spec.Errors{{Path: "pipeline_name",
			Detail: fmt.Sprintf("pipeline %q does not exist; create it first", f.Pipeline)}}
	}
	src := f.RouteExpression()
	prog, err := expr.Compile(src)
	if err != nil {
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
	return cfg, prog.EvalString, nil
}

// fanoutConfig returns the configuration of fanout schema f in pipeline p,
// whose tables go under root.
func (m *Manager) fanoutConfig(root string, p *spec.Pipeline, f *spec.FanoutSchema, conn *spec.Connection) fanout.Config {
	return fanout.Config{
		Pipeline: p.Name,
		Fanout:   *f,
		Dir:      spec.JoinLocation(root, f.DestinationCatalog, f.DestinationSchema),
		Conn:     *conn,
		Settings: m.runSettings(p),
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
	var refused spec.Errors
	for _, name := range created {
		if name == spec.FanoutErrorsTable {
			continue
		}
		tc := tableConfig{Qualified: strings.ToLower(f.DestinationCatalog + "." + f.DestinationSchema + "." + name),
			Dir: spec.JoinLocation(cfg.Dir, name), Table: f.TableSpec(name)}
		if err := checkSchema(&tc, "route to a new destination_schema"); err != nil {
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
func (m *Manager) RemoveFanout(_ context.Context, name string) error {
	removeRunner(m, m.fanouts, name, (*fanout.Runner).Stop, "fanout", "fanout schema stopped and removed; its tables stay")
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
func (m *Manager) reapplyFanouts(p *running) {
	m.mu.Lock()
	rs := m.fanoutsOf(p.spec.Name)
	m.mu.Unlock()
	for _, old := range rs {
		was := old.Config()
		cfg, route, err := m.reviewFanout(&was.Fanout, p)
		if err == nil && old.Client() == p.client && reflect.DeepEqual(was, cfg) {
			continue
		}
		old.Stop()
		m.mu.Lock()
		delete(m.fanouts, was.Fanout.Name)
		m.mu.Unlock()
		if err != nil {
			m.log.Error("fanout schema stopped: the pipeline's new settings do not fit it", "fanout", was.Fanout.Name, "err", err)
			continue
		}
		r := fanout.Start(cfg, p.client, p.source, route, &m.registries, m.cfg.Memory, m.log)
		m.mu.Lock()
		m.fanouts[was.Fanout.Name] = r
		m.mu.Unlock()
	}
}

// stopFanouts stops the fanout runners of the named pipeline, or of every
// pipeline for "", in parallel, and forgets them.
func (m *Manager) stopFanouts(pipeline string) {
	m.mu.Lock()
	rs := m.fanoutsOf(pipeline)
	for _, r := range rs {
		delete(m.fanouts, r.Config().Fanout.Name)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(r.Stop)
	}
	wg.Wait()
}
