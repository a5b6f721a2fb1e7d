package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

func (s *Server) getFanoutSchema(w http.ResponseWriter, r *http.Request) error {
	return getStored(w, r, s.store.FanoutSchemas, "fanout schema", s.fanoutResponse)
}

func (s *Server) listFanoutSchemas(w http.ResponseWriter, _ *http.Request) error {
	return listStored(w, s.store.FanoutSchemas, s.fanoutResponse)
}

// fanoutResponse returns what GET answers for stored fanout schema f.
func (s *Server) fanoutResponse(f *spec.FanoutSchema) spec.FanoutSchemaResponse {
	return spec.FanoutSchemaResponse{Spec: *f, Status: s.fanoutStatus(f)}
}

// putFanoutSchema creates or replaces a fanout schema: decode, normalize,
// validate (422), refuse a conditional create of one that exists (412),
// check its pipeline and its schema's ownership (admitFanout), then
// commitSpec: the engine's check, store, apply. An unchanged spec is
// applied again only when the engine does not run it.
func (s *Server) putFanoutSchema(w http.ResponseWriter, r *http.Request) error {
	f, err := decodeFanoutSchema(w, r)
	if err != nil {
		return err
	}
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	old, existed, err := storedFor(r, s.store.FanoutSchemas, "fanout schema", f.Name)
	if err != nil {
		return err
	}
	if existed && old.Pipeline != f.Pipeline {
		return invalid("a fanout schema cannot move to another pipeline", spec.Errors{{
			Path: "pipeline_name",
			Detail: fmt.Sprintf("fanout schema %q belongs to pipeline %q; to move it to %q, delete it and create it again",
				f.Name, old.Pipeline, f.Pipeline),
		}})
	}
	if err := s.admitFanout(&f); err != nil {
		return err
	}
	_, known := s.engine.FanoutStatus(f.Name)
	// The engine's work must not stop half-way because the client gave up.
	ctx := context.WithoutCancel(r.Context())
	err = commitSpec(s.store.FanoutSchemas, &s.fanoutFailed, "fanout schema", f.Name, &f, &old, existed, known,
		func() error { return s.engine.CheckFanout(&f) },
		func() error { return s.applyStoredFanout(ctx, &f) })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, s.fanoutResponse(&f))
}

// dryRunFanoutSchema answers POST /v1/fanout-schemas/{name}/dry-run: the
// checks of a PUT of the same body and the engine's, with the same
// problems, and on success 200 with the fanout schema as a PUT would store
// it; with If-None-Match: * it checks a create (412 when the fanout schema
// exists). It stores, starts and stops nothing.
func (s *Server) dryRunFanoutSchema(w http.ResponseWriter, r *http.Request) error {
	f, err := decodeFanoutSchema(w, r)
	if err != nil {
		return err
	}
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	if _, _, err := storedFor(r, s.store.FanoutSchemas, "fanout schema", f.Name); err != nil {
		return err
	}
	if err := s.admitFanout(&f); err != nil {
		return err
	}
	if err := s.engine.CheckFanout(&f); err != nil {
		return refusal("fanout schema", f.Name, err)
	}
	return writeJSON(w, http.StatusOK, &f)
}

// decodeFanoutSchema reads the fanout schema in the body of r, named by the
// URL, normalized and validated.
func decodeFanoutSchema(w http.ResponseWriter, r *http.Request) (spec.FanoutSchema, error) {
	var f spec.FanoutSchema
	err := decodeSpec(w, r, "fanout schema", &f, &f.Name)
	return f, err
}

// admitFanout checks valid fanout schema f against the stored objects: its
// pipeline exists and takes it (422: no ending positions on a continuous
// pipeline), no pipeline table or other fanout schema is in its
// destination schema (409), and its transformers' schema registries are
// its pipeline's connection's (422). The caller holds changeMu.
func (s *Server) admitFanout(f *spec.FanoutSchema) error {
	pipes, err := s.store.Pipelines.List()
	if err != nil {
		return err
	}
	i := slices.IndexFunc(pipes, func(p spec.Pipeline) bool { return p.Name == f.Pipeline })
	if i < 0 {
		return invalid("the pipeline of the fanout schema does not exist", spec.Errors{{
			Path:   "pipeline_name",
			Detail: fmt.Sprintf("pipeline %q does not exist; create it first", f.Pipeline),
		}})
	}
	if errs := f.ValidateWith(&pipes[i]); len(errs) > 0 {
		return invalid("the fanout schema does not fit its pipeline", errs)
	}
	others, err := s.store.FanoutSchemas.List()
	if err != nil {
		return err
	}
	if errs := f.ClaimConflicts(pipes, others); len(errs) > 0 {
		return fanoutOwns(errs)
	}
	return s.checkFanoutRegistries(f, pipes[i])
}

// checkFanoutRegistries refuses (422) a transformer of f whose schema
// comes from a registry that pipe's connection does not have: the routed
// tables read registries through their pipeline's connection only.
func (s *Server) checkFanoutRegistries(f *spec.FanoutSchema, pipe spec.Pipeline) error {
	// The routed tables are tables of pipe as far as connections go; the
	// paths of the problems are those of the table, less its "table[0].".
	pipe.Tables = []spec.Table{f.TableSpec(f.Name)}
	const tablePath = "table[0]."
	var foreign spec.Errors
	for _, ref := range pipe.RegistryRefs() {
		if ref.Connection != pipe.Connection {
			foreign = append(foreign, spec.FieldError{
				Path: strings.TrimPrefix(ref.Path, tablePath) + ".connection_name",
				Detail: fmt.Sprintf("a fanout schema reads schema registries through its pipeline's connection %q, not %q; "+
					"remove connection_name or give the registry to connection %q", pipe.Connection, ref.Connection, pipe.Connection),
			})
		}
	}
	if len(foreign) > 0 {
		return invalid("a transformer names a schema registry the fanout schema cannot use", foreign)
	}
	_, _, err := s.connectionsOf(&pipe)
	var pe *problemError
	if errors.As(err, &pe) {
		for i := range pe.Errors {
			pe.Errors[i].Path = strings.TrimPrefix(pe.Errors[i].Path, tablePath)
		}
	}
	return err
}

// fanoutOwns returns the 409 of a claim on a fanout schema's destination
// schema.
func fanoutOwns(errs spec.Errors) *problemError {
	pe := problemf(http.StatusConflict, "a fanout schema owns every table of its destination schema")
	pe.Errors = errs
	return pe
}

// applyStoredFanout applies stored fanout schema f and records the outcome
// for GET.
func (s *Server) applyStoredFanout(ctx context.Context, f *spec.FanoutSchema) error {
	s.applied.set(fanoutKind, f.Name, s.fanoutFingerprint(f))
	err := s.engine.ApplyFanout(ctx, f)
	s.fanoutFailed.set(f.Name, err)
	if err != nil {
		s.log.Error("fanout schema did not start", "fanout_schema", f.Name, "pipeline", f.Pipeline, "err", err)
	}
	return err
}

// applyFanouts applies every stored fanout schema of the named pipeline
// ("" for every pipeline) that the engine does not run, in name order, and
// returns their errors joined. It follows an Apply of their pipelines: the
// engine takes a fanout schema only inside a pipeline it runs, and one that
// took a pipeline down may have taken its fanout schemas with it.
func (s *Server) applyFanouts(ctx context.Context, pipeline string) error {
	fanouts, err := s.store.FanoutSchemas.List()
	if err != nil {
		return fmt.Errorf("listing fanout schemas: %w", err)
	}
	var errs []error
	for i := range fanouts {
		f := &fanouts[i]
		if _, running := s.engine.FanoutStatus(f.Name); running || pipeline != "" && f.Pipeline != pipeline {
			continue
		}
		if err := s.applyStoredFanout(ctx, f); err != nil {
			errs = append(errs, fmt.Errorf("fanout schema %q: %w", f.Name, err))
		}
	}
	return errors.Join(errs...)
}

// deleteFanoutSchema stops a fanout schema and forgets it; its tables stay.
func (s *Server) deleteFanoutSchema(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	f, err := s.store.FanoutSchemas.Get(name)
	if err != nil {
		return notFoundOr(err, "fanout schema", name)
	}
	if err := s.dropLeft(context.WithoutCancel(r.Context()), f.DestinationCatalog, s.fanoutTables(&f), nil, nil); err != nil {
		return err
	}
	if err := s.engine.RemoveFanout(context.WithoutCancel(r.Context()), name); err != nil {
		return fmt.Errorf("stopping fanout schema %q: %w", name, err)
	}
	if err := s.store.FanoutSchemas.Delete(name); err != nil {
		return notFoundOr(err, "fanout schema", name)
	}
	s.fanoutFailed.set(name, nil)
	s.applied.forget(fanoutKind, name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// fanoutsOf returns the stored fanout schemas that belong to the named
// pipeline.
func (s *Server) fanoutsOf(pipeline string) ([]spec.FanoutSchema, error) {
	return storedWhere(s.store.FanoutSchemas, func(f *spec.FanoutSchema) bool { return f.Pipeline == pipeline })
}

// fanoutStatus returns what GET reports for stored fanout schema f: the
// engine's status, or one made up from the last ApplyFanout error (FAILED)
// or none (STARTING) when the engine does not run it. Errors are scrubbed
// of secrets.
func (s *Server) fanoutStatus(f *spec.FanoutSchema) spec.FanoutStatus {
	st, ok := s.engine.FanoutStatus(f.Name)
	if !ok {
		st = spec.FanoutStatus{State: spec.StateStarting, Tables: []spec.TableStatus{}, Partitions: []spec.PartitionStatus{}}
		if msg, failed := s.fanoutFailed.get(f.Name); failed {
			st.State, st.LastError = spec.StateFailed, msg
		}
	}
	st = s.clusterFanoutStatus(f.Name, st)
	st.LastError = s.secrets.String(st.LastError)
	st.Tables = s.redactTables(st.Tables)
	return st
}
