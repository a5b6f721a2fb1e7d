package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/fanout"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// StartRun starts the next run of the named triggered pipeline: each of its
// table loops and fanout schemas starts again from its log and reads up to
// the end offsets it fixes as it starts. Every one of them must have
// finished its last run (IDLE). Otherwise, and for a continuous pipeline or
// one the manager does not run, StartRun returns a [*spec.RunRefusedError]
// and changes nothing.
func (m *Manager) StartRun(_ context.Context, name string) error {
	m.changeMu.Lock()
	defer m.changeMu.Unlock()
	r := m.applied(name)
	if r != nil && r.share != nil {
		// No assignment restarts the loops while the run starts them.
		r.share.mu.Lock()
		defer r.share.mu.Unlock()
	}
	m.mu.Lock()
	r = m.pipelines[name]
	fanouts := m.fanoutsOf(name)
	m.mu.Unlock()
	if r == nil {
		return &spec.RunRefusedError{Reason: fmt.Sprintf("pipeline %q does not run on the agent; apply it first", name)}
	}
	if r.spec.IsContinuous() {
		return &spec.RunRefusedError{Reason: fmt.Sprintf("pipeline %q is continuous: it reads new records as they come, "+
			"so there is no run to start; set continuous = false for runs that end", name)}
	}
	var busy []string
	for _, t := range r.tables {
		if st := t.snapshot(); st.State != spec.StateIdle {
			busy = append(busy, notIdle("table "+t.cfg.Qualified, st.State, st.LastError))
		}
	}
	for _, f := range fanouts {
		if st := f.Status(); st.State != spec.StateIdle {
			busy = append(busy, notIdle(fmt.Sprintf("fanout schema %q", f.Config().Fanout.Name), st.State, st.LastError))
		}
	}
	if len(busy) > 0 {
		return &spec.RunRefusedError{Reason: fmt.Sprintf("pipeline %q cannot start a run until every table and fanout schema "+
			"of it is %s: %s. Wait for a run in progress to end; a FAILED one runs again once a change fixing it is applied",
			name, spec.StateIdle, strings.Join(busy, "; "))}
	}

	next := *r
	next.tables = make([]*tableRunner, len(r.tables))
	for i, t := range r.tables {
		t.stop() // its run is over: this only waits for its goroutine
		next.tables[i] = startTable(t.cfg, r.share.ownership(), r.client, r.source, &m.registries, m.cfg.Memory, m.log)
	}
	m.mu.Lock()
	m.pipelines[name] = &next
	m.mu.Unlock()
	for _, f := range fanouts {
		m.restartFanout(f.Config().Fanout.Name, r)
	}
	m.log.Info("run started", "pipeline", name, "tables", len(next.tables), "fanout_schemas", len(fanouts))
	return nil
}

// restartFanout starts the named fanout schema of pipeline r again, with
// the partitions it reads now: for its next run. m.changeMu must be held.
func (m *Manager) restartFanout(name string, r *running) {
	m.mu.Lock()
	s := m.fanoutShares[name]
	m.mu.Unlock()
	if s != nil {
		// No assignment restarts the runner meanwhile.
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	m.mu.Lock()
	f := m.fanouts[name]
	m.mu.Unlock()
	if f == nil {
		return
	}
	f.Stop() // its run is over: this only waits for its goroutine
	started := fanout.Start(f.Config(), s.ownership(), r.client, r.source, f.NewRoute(), &m.registries, m.cfg.Memory, m.log)
	m.mu.Lock()
	m.fanouts[name] = started
	m.mu.Unlock()
}

// notIdle describes what, in state with the last error lastErr, for a
// refused run.
func notIdle(what, state, lastErr string) string {
	if lastErr == "" {
		return what + " is " + state
	}
	return what + " is " + state + " (" + lastErr + ")"
}
