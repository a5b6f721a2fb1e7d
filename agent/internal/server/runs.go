package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// startRun answers POST /v1/pipelines/{name}/runs: it starts the next run
// of a triggered pipeline whose last run is over (IDLE), and answers 202
// with the pipeline and its status. A stored pipeline the engine does not
// run (its apply failed, so its run never started) is applied again, which
// starts its run. An unknown pipeline is a 404; a continuous one, or one
// with a run in progress or a failure, a 409 saying which. The request has
// no body.
func (s *Server) startRun(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if n, _ := r.Body.Read(make([]byte, 1)); n > 0 {
		return problemf(http.StatusBadRequest, "POST %s takes no body: a run reads with the pipeline's options", r.URL.Path)
	}
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	p, err := s.store.Pipelines.Get(name)
	if err != nil {
		return notFoundOr(err, "pipeline", name)
	}
	if p.IsContinuous() {
		return problemf(http.StatusConflict, "pipeline %q is continuous: it reads new records as they come, so there is no run to start; "+
			"set continuous = false for runs that end", name)
	}
	// The engine's work must not stop half-way because the client gave up.
	ctx := context.WithoutCancel(r.Context())
	if s.store.Shared() {
		if err := s.shareRun(&p); err != nil {
			return err
		}
	}
	if _, known := s.engine.Status(name); !known {
		if err := s.applyStored(ctx, &p); err != nil {
			return fmt.Errorf("pipeline %q did not start (it is retried on the next PUT, run or agent restart): %w", name, err)
		}
		_ = s.applyFanouts(ctx, name) // a failure is logged and shown by GET, as after a PUT
	} else if err := s.engine.StartRun(ctx, name); err != nil {
		var refused *spec.RunRefusedError
		if errors.As(err, &refused) {
			return problemf(http.StatusConflict, "%s", refused.Reason)
		}
		return fmt.Errorf("starting a run of pipeline %q: %w", name, err)
	}
	return writeJSON(w, http.StatusAccepted, s.pipelineResponse(&p))
}

// shareRun records the start of the next run of triggered pipeline p in
// the cluster's shared state, so that every agent starts its share of it
// (see startSharedRuns). The run starts only when every agent finished its
// share of the last one: the cluster's status of every table and fanout
// schema of p is IDLE; otherwise a 409 says which is not. The caller holds
// changeMu.
func (s *Server) shareRun(p *spec.Pipeline) error {
	var busy []string
	for _, t := range s.status(p).Tables {
		if t.State != spec.StateIdle {
			busy = append(busy, fmt.Sprintf("table %s is %s", t.DestinationTable, t.State))
		}
	}
	fanouts, err := s.fanoutsOf(p.Name)
	if err != nil {
		return err
	}
	for i := range fanouts {
		if st := s.fanoutStatus(&fanouts[i]); st.State != spec.StateIdle {
			busy = append(busy, fmt.Sprintf("fanout schema %q is %s", fanouts[i].Name, st.State))
		}
	}
	if len(busy) > 0 {
		return problemf(http.StatusConflict, "pipeline %q cannot start a run until every table and fanout schema of it is %s on every agent "+
			"of the cluster: %s. Wait for the run in progress to end; a FAILED one runs again once a change fixing it is applied",
			p.Name, spec.StateIdle, strings.Join(busy, "; "))
	}
	// The run is numbered with the shared state's change that records it,
	// which only grows, also across a pipeline deleted and made again.
	next := store.Run{Pipeline: p.Name, Seq: s.store.Version() + 1}
	if err := s.store.Runs.Put(&next); err != nil {
		return err
	}
	s.runsStarted[p.Name] = next.Seq
	return nil
}

// startSharedRuns starts this agent's share of every run started through
// another agent of the cluster since it last looked; a share the engine
// refuses (a table of it still busy, say) is asked again at the next
// round. The caller holds changeMu.
func (s *Server) startSharedRuns(ctx context.Context) {
	runs, err := s.store.Runs.List()
	if err != nil {
		s.log.Error("reading the runs started failed", "err", err)
		return
	}
	for _, r := range runs {
		if r.Seq <= s.runsStarted[r.Pipeline] {
			continue
		}
		p, err := s.store.Pipelines.Get(r.Pipeline)
		if err != nil || p.IsContinuous() {
			s.runsStarted[r.Pipeline] = r.Seq // nothing to run
			continue
		}
		// A share still busy (a rebalance restarted its loops) is asked
		// again at the next round, until it starts.
		if err := s.engine.StartRun(ctx, r.Pipeline); err != nil {
			s.log.Debug("this agent's share of a run cannot start yet", "pipeline", r.Pipeline, "run", r.Seq, "err", err)
			continue
		}
		s.runsStarted[r.Pipeline] = r.Seq
	}
}

// skipSharedRuns records every run started so far as started: an agent
// that starts runs its triggered pipelines' first run as it applies them,
// not the runs before it came.
func (s *Server) skipSharedRuns() {
	runs, _ := s.store.Runs.List()
	for _, r := range runs {
		s.runsStarted[r.Pipeline] = r.Seq
	}
}
