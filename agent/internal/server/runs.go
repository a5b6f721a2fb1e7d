package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

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
