package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registration"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

func (s *Server) getPipeline(w http.ResponseWriter, r *http.Request) error {
	return getStored(w, r, s.store.Pipelines, "pipeline", s.pipelineResponse)
}

func (s *Server) listPipelines(w http.ResponseWriter, _ *http.Request) error {
	return listStored(w, s.store.Pipelines, s.pipelineResponse)
}

// pipelineResponse returns what GET answers for stored pipeline p.
func (s *Server) pipelineResponse(p *spec.Pipeline) spec.PipelineResponse {
	return spec.PipelineResponse{Spec: *p, Status: s.status(p)}
}

// putPipeline creates or replaces a pipeline: decode, normalize, validate,
// refuse a conditional create of one that exists (412), check its table
// claims and its connection (admitPipeline), then commitSpec: the
// engine's check, store, apply. An unchanged spec is applied again only
// when the engine does not run it. Once it runs, its fanout schemas that
// the engine does not run (a pipeline that failed to start took them down)
// are applied again.
func (s *Server) putPipeline(w http.ResponseWriter, r *http.Request) error {
	p, err := decodePipeline(w, r)
	if err != nil {
		return err
	}
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	old, existed, err := storedFor(r, s.store.Pipelines, "pipeline", p.Name)
	if err != nil {
		return err
	}
	conn, regs, err := s.admitPipeline(&p)
	if err != nil {
		return err
	}
	_, known := s.engine.Status(p.Name)
	// The engine's work must not stop half-way because the client gave up.
	ctx := context.WithoutCancel(r.Context())
	if existed {
		// The tables that leave the catalog of their destination_catalog
		// (removed, or moved to another destination) lose their
		// registrations first.
		var next []registration.Table
		if p.DestinationCatalog == old.DestinationCatalog {
			next = s.pipelineTables(&p)
		}
		check := func() error {
			if err := s.engine.Check(&p, &conn, regs); errors.As(err, new(spec.Errors)) {
				return refusal("pipeline", p.Name, err)
			}
			return nil
		}
		if err := s.dropLeft(ctx, old.DestinationCatalog, s.pipelineTables(&old), next, check); err != nil {
			return err
		}
	}
	err = commitSpec(s.store.Pipelines, &s.failed, "pipeline", p.Name, &p, &old, existed, known,
		func() error { return s.engine.Check(&p, &conn, regs) },
		func() error {
			if err := s.applyStored(ctx, &p); err != nil {
				return err
			}
			// A fanout schema that fails is logged, shown FAILED by GET
			// and retried on its next PUT or the agent's restart; the
			// pipeline's PUT succeeded.
			_ = s.applyFanouts(ctx, p.Name)
			return nil
		})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, s.pipelineResponse(&p))
}

// dryRunPipeline answers POST /v1/pipelines/{name}/dry-run: the checks of
// a PUT of the same body (admitPipeline) and the engine's (a change an
// existing table cannot take), with the same problems, and on success 200
// with the pipeline as a PUT would store it; with If-None-Match: * it
// checks a create (412 when the pipeline exists). It stores, starts and
// stops nothing. It is a route of its own, not an option of the PUT, so that an
// agent without it answers 404 instead of applying the pipeline.
func (s *Server) dryRunPipeline(w http.ResponseWriter, r *http.Request) error {
	p, err := decodePipeline(w, r)
	if err != nil {
		return err
	}
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	if _, _, err := storedFor(r, s.store.Pipelines, "pipeline", p.Name); err != nil {
		return err
	}
	conn, regs, err := s.admitPipeline(&p)
	if err != nil {
		return err
	}
	if err := s.engine.Check(&p, &conn, regs); err != nil {
		return refusal("pipeline", p.Name, err)
	}
	return writeJSON(w, http.StatusOK, &p)
}

// decodePipeline reads the pipeline in the body of r, named by the URL,
// normalized and validated.
func decodePipeline(w http.ResponseWriter, r *http.Request) (spec.Pipeline, error) {
	var p spec.Pipeline
	err := decodeSpec(w, r, "pipeline", &p, &p.Name)
	return p, err
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
	return s.connectionsWith(p, nil)
}

// connectionsWith is connectionsOf with connection next, when not nil,
// in place of the stored one of its name: what p would read through after
// a PUT of next.
func (s *Server) connectionsWith(p *spec.Pipeline, next *spec.Connection) (spec.Connection, map[string]spec.SchemaRegistry, error) {
	get := func(name, path string) (spec.Connection, error) {
		if next != nil && next.Name == name {
			return *next, nil
		}
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

// storedFor returns the stored object of the name, of the kind
// ("pipeline"), that a PUT replaces, and whether it exists; a PUT with
// If-None-Match (see conditionalCreate) of one that exists is a 412.
func storedFor[T any](r *http.Request, c *store.Collection[T], kind, name string) (old T, existed bool, err error) {
	old, err = c.Get(name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return old, false, err
	}
	existed = err == nil
	return old, existed, conditionalCreate(r, kind, name, existed)
}

// commitSpec writes v, the new spec of the named object of c, of the kind
// ("pipeline"), and hands it to the engine, recording failures in failed.
// old is the stored spec when it existed; known says the engine runs the
// object.
//
// A changed spec is checked by the engine first (check, its dry run): a
// refusal answers 422 and leaves the store as it was, so the desired state
// only ever holds specs the engine accepted. Then the spec is stored and
// applied; an unchanged one is applied again only when the engine does not
// run it. An apply that fails for another reason than a refusal (a broker
// down) keeps the spec stored, to be retried on the next PUT or restart,
// and answers 500 (see applyFailed).
func commitSpec[T any](c *store.Collection[T], failed *failures, kind, name string, v, old *T, existed, known bool, check, apply func() error) error {
	changed := !existed || !sameJSON(old, v)
	if changed {
		// Another error of the check (a table's log unreadable) is the
		// apply's to meet and report, once the spec is stored for a retry.
		if err := check(); errors.As(err, new(spec.Errors)) {
			return refusal(kind, name, err)
		}
		if err := c.Put(v); err != nil {
			return err
		}
	}
	if !changed && known {
		return nil
	}
	if err := apply(); err != nil {
		return applyFailed(c, failed, kind, name, old, existed, changed, err)
	}
	return nil
}

// applyFailed answers a failed apply of the named object of c, of the kind
// ("pipeline"), whose failures GET shows from failed. Any failure but a
// refusal keeps the new spec stored, to be retried, and answers 500. A
// refusal (spec.Errors), which the engine's check did not predict, puts
// back the previous spec, old when it existed, when the PUT changed it,
// and answers 422: the engine runs what it ran before.
func applyFailed[T any](c *store.Collection[T], failed *failures, kind, name string, old *T, existed, changed bool, err error) error {
	if !errors.As(err, new(spec.Errors)) {
		return fmt.Errorf("%s %q was saved but did not start (it is retried on the next PUT or agent restart): %w", kind, name, err)
	}
	if changed {
		if rollbackErr := restore(c, failed, name, old, existed); rollbackErr != nil {
			// %v: a rollback that lost a race must not be taken for a
			// change to retry, which would find the refused spec stored.
			return fmt.Errorf("the agent refused %s %q (%w) and could not restore the previous spec: %s", kind, name, err, rollbackErr.Error())
		}
	}
	return refusal(kind, name, err)
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

// refusal answers an error of the engine's apply or check of the named
// object of the kind ("pipeline"): a refusal ([spec.Errors]) is a 422
// listing its problems, anything else a 500.
func refusal(kind, name string, err error) error {
	var refused spec.Errors
	if !errors.As(err, &refused) {
		return fmt.Errorf("checking %s %q: %w", kind, name, err)
	}
	return invalid("the agent refused the "+kind, refused)
}

// deletePipeline stops a pipeline and forgets it; its tables stay. A
// pipeline that fanout schemas belong to is not deleted (409).
func (s *Server) deletePipeline(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	p, err := s.store.Pipelines.Get(name)
	if err != nil {
		return notFoundOr(err, "pipeline", name)
	}
	fanouts, err := s.fanoutsOf(name)
	if err != nil {
		return err
	}
	if len(fanouts) > 0 {
		return problemf(http.StatusConflict, "fanout schemas %s belong to pipeline %q; delete them first", fanoutNames(fanouts), name)
	}
	if err := s.dropLeft(context.WithoutCancel(r.Context()), p.DestinationCatalog, s.pipelineTables(&p), nil, nil); err != nil {
		return err
	}
	if err := s.engine.Remove(context.WithoutCancel(r.Context()), name); err != nil {
		return fmt.Errorf("stopping pipeline %q: %w", name, err)
	}
	// Its runs go with it (a cluster's; a single agent records none).
	if err := s.store.Runs.Delete(name); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if err := s.store.Pipelines.Delete(name); err != nil {
		return notFoundOr(err, "pipeline", name)
	}
	s.failed.set(name, nil)
	s.applied.forget(pipelineKind, name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
