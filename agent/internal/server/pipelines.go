package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

func (s *Server) getPipeline(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	p, err := s.store.Pipelines.Get(name)
	if err != nil {
		return notFoundOr(err, "pipeline", name)
	}
	return writeJSON(w, http.StatusOK, spec.PipelineResponse{Spec: p, Status: s.status(&p)})
}

func (s *Server) listPipelines(w http.ResponseWriter, _ *http.Request) error {
	pipes, err := s.store.Pipelines.List()
	if err != nil {
		return err
	}
	out := make([]spec.PipelineResponse, len(pipes))
	for i := range pipes {
		out[i] = spec.PipelineResponse{Spec: pipes[i], Status: s.status(&pipes[i])}
	}
	return writeJSON(w, http.StatusOK, out)
}

// putPipeline creates or replaces a pipeline: decode, normalize, validate,
// check its table claims and its connection (admitPipeline), store, then
// apply. An unchanged spec is applied again only when the engine does not
// run it. Once it runs, its fanout schemas that the engine does not run (a
// pipeline that failed to start took them down) are applied again.
func (s *Server) putPipeline(w http.ResponseWriter, r *http.Request) error {
	p, err := decodePipeline(w, r)
	if err != nil {
		return err
	}
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	if _, _, err := s.admitPipeline(&p); err != nil {
		return err
	}

	old, err := s.store.Pipelines.Get(p.Name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	existed := err == nil
	changed := !existed || !sameJSON(&old, &p)
	_, known := s.engine.Status(p.Name)
	if changed {
		if err := s.store.Pipelines.Put(&p); err != nil {
			return err
		}
	}
	if changed || !known {
		// The engine's work must not stop half-way because the client
		// gave up.
		ctx := context.WithoutCancel(r.Context())
		if err := s.applyStored(ctx, &p); err != nil {
			return s.applyFailed(&p, &old, existed, changed, err)
		}
		// A fanout schema that fails is logged, shown FAILED by GET and
		// retried on its next PUT or the agent's restart; the pipeline's
		// PUT succeeded.
		_ = s.applyFanouts(ctx, p.Name)
	}
	return writeJSON(w, http.StatusOK, spec.PipelineResponse{Spec: p, Status: s.status(&p)})
}

// dryRunPipeline answers POST /v1/pipelines/{name}/dry-run: the checks of
// a PUT of the same body (admitPipeline) and the engine's (a change an
// existing table cannot take), with the same problems, and on success 200
// with the pipeline as a PUT would store it. It stores, starts and stops
// nothing. It is a route of its own, not an option of the PUT, so that an
// agent without it answers 404 instead of applying the pipeline.
func (s *Server) dryRunPipeline(w http.ResponseWriter, r *http.Request) error {
	p, err := decodePipeline(w, r)
	if err != nil {
		return err
	}
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	conn, regs, err := s.admitPipeline(&p)
	if err != nil {
		return err
	}
	if err := s.engine.Check(&p, &conn, regs); err != nil {
		return refusal(&p, err)
	}
	return writeJSON(w, http.StatusOK, &p)
}

// decodePipeline reads the pipeline in the body of r, named by the URL,
// normalized and validated.
func decodePipeline(w http.ResponseWriter, r *http.Request) (spec.Pipeline, error) {
	var p spec.Pipeline
	if err := decodeBody(w, r, "pipeline", &p); err != nil {
		return p, err
	}
	if err := pathName(r, &p.Name); err != nil {
		return p, err
	}
	p.Normalize()
	if errs := p.Validate(); len(errs) > 0 {
		return p, invalid("the pipeline is not valid", errs)
	}
	return p, nil
}

// admitPipeline checks valid pipeline p against the stored objects: no table
// another pipeline claims or in the destination schema of a fanout schema
// (409), and connections that exist and have the schema registries p's
// transformers use (422). It returns them as
// [Server.connectionsOf] does. The caller holds changeMu.
func (s *Server) admitPipeline(p *spec.Pipeline) (spec.Connection, map[string]spec.SchemaRegistry, error) {
	others, err := s.store.Pipelines.List()
	if err != nil {
		return spec.Connection{}, nil, err
	}
	if errs := p.ClaimConflicts(others); len(errs) > 0 {
		pe := problemf(http.StatusConflict, "a destination table belongs to exactly one pipeline")
		pe.Errors = errs
		return spec.Connection{}, nil, pe
	}
	fanouts, err := s.store.FanoutSchemas.List()
	if err != nil {
		return spec.Connection{}, nil, err
	}
	if errs := p.FanoutConflicts(fanouts); len(errs) > 0 {
		return spec.Connection{}, nil, fanoutOwns(errs)
	}
	return s.connectionsOf(p)
}

// connectionsOf returns the connection of pipeline p and, by name, the
// schema registries of the other connections its transformers name. A
// connection that does not exist, or has no schema registry where a
// transformer needs one, is a 422 naming the attribute.
func (s *Server) connectionsOf(p *spec.Pipeline) (spec.Connection, map[string]spec.SchemaRegistry, error) {
	get := func(name, path string) (spec.Connection, error) {
		c, err := s.store.Connections.Get(name)
		if errors.Is(err, store.ErrNotFound) {
			return c, invalid("a connection the pipeline names does not exist", spec.Errors{{
				Path:   path,
				Detail: fmt.Sprintf("connection %q does not exist on the agent; create it first", name),
			}})
		}
		return c, err
	}
	conn, err := get(p.Connection, "connection_name")
	if err != nil {
		return spec.Connection{}, nil, err
	}
	var regs map[string]spec.SchemaRegistry
	var missing spec.Errors
	for _, ref := range p.RegistryRefs() {
		c := conn
		if ref.Connection != p.Connection {
			if c, err = get(ref.Connection, ref.Path+".connection_name"); err != nil {
				return spec.Connection{}, nil, err
			}
		}
		if c.SchemaRegistry == nil {
			missing = append(missing, spec.FieldError{Path: ref.Path, Detail: fmt.Sprintf(
				"connection %q has no schema_registry; add a schema_registry block to it, or set connection_name to a connection that has one",
				ref.Connection)})
			continue
		}
		if ref.Connection != p.Connection {
			if regs == nil {
				regs = map[string]spec.SchemaRegistry{}
			}
			regs[ref.Connection] = *c.SchemaRegistry
		}
	}
	if len(missing) > 0 {
		return spec.Connection{}, nil, invalid("a transformer needs a schema registry its connection does not have", missing)
	}
	return conn, regs, nil
}

// applyFailed answers a failed Apply of pipeline p. A refusal (spec.Errors)
// puts back the previous spec, old when it existed, and answers 422: the
// engine runs what it ran before. Any other failure keeps p stored, to be
// retried, and answers 500.
func (s *Server) applyFailed(p, old *spec.Pipeline, existed, changed bool, err error) error {
	if !errors.As(err, new(spec.Errors)) {
		return fmt.Errorf("pipeline %q was saved but did not start (it is retried on the next PUT or agent restart): %w", p.Name, err)
	}
	if changed {
		if rollbackErr := restore(s.store.Pipelines, &s.failed, p.Name, old, existed); rollbackErr != nil {
			return fmt.Errorf("the agent refused pipeline %q (%w) and could not restore the previous spec: %w", p.Name, err, rollbackErr)
		}
	}
	return refusal(p, err)
}

// restore puts back the stored object of the name after the engine refused
// its new spec: old when it existed, else nothing (and no failure).
func restore[T any](c *store.Collection[T], failed *failures, name string, old *T, existed bool) error {
	if existed {
		return c.Put(old)
	}
	failed.set(name, nil)
	return c.Delete(name)
}

// refusal answers an error of the engine's Apply or Check of pipeline p: a
// refusal ([spec.Errors]) is a 422 listing its problems, anything else a
// 500.
func refusal(p *spec.Pipeline, err error) error {
	var refused spec.Errors
	if !errors.As(err, &refused) {
		return fmt.Errorf("checking pipeline %q: %w", p.Name, err)
	}
	return invalid("the agent refused the pipeline", refused)
}

// deletePipeline stops a pipeline and forgets it; its tables stay. A
// pipeline that fanout schemas belong to is not deleted (409).
func (s *Server) deletePipeline(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	if _, err := s.store.Pipelines.Get(name); err != nil {
		return notFoundOr(err, "pipeline", name)
	}
	fanouts, err := s.fanoutsOf(name)
	if err != nil {
		return err
	}
	if len(fanouts) > 0 {
		return problemf(http.StatusConflict, "fanout schemas %s belong to pipeline %q; delete them first", fanoutNames(fanouts), name)
	}
	if err := s.engine.Remove(context.WithoutCancel(r.Context()), name); err != nil {
		return fmt.Errorf("stopping pipeline %q: %w", name, err)
	}
	if err := s.store.Pipelines.Delete(name); err != nil {
		return notFoundOr(err, "pipeline", name)
	}
	s.failed.set(name, nil)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
