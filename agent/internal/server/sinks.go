package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Kafka sinks: /v1/kafka-sinks/{name}. A sink needs its connection (the
// cluster it writes to and its topic source reads from); nothing else
// refers to it.

func (s *Server) getKafkaSink(w http.ResponseWriter, r *http.Request) error {
	return getStored(w, r, s.store.KafkaSinks, "kafka sink", s.sinkResponse)
}

func (s *Server) listKafkaSinks(w http.ResponseWriter, _ *http.Request) error {
	return listStored(w, s.store.KafkaSinks, s.sinkResponse)
}

// sinkResponse returns what GET answers for stored sink k.
func (s *Server) sinkResponse(k *spec.KafkaSink) spec.KafkaSinkResponse {
	return spec.KafkaSinkResponse{Spec: *k, Status: s.sinkStatus(k)}
}

// putKafkaSink creates or replaces a Kafka sink: decode, normalize,
// validate (422), refuse a conditional create of one that exists (412),
// check its connection (422), then commitSpec: the engine's check, store,
// apply. An unchanged spec is applied again only when the engine does not
// run it.
func (s *Server) putKafkaSink(w http.ResponseWriter, r *http.Request) error {
	var k spec.KafkaSink
	if err := decodeSpec(w, r, "kafka sink", &k, &k.Name); err != nil {
		return err
	}
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	old, existed, conn, regs, err := s.sinkPrelude(r, &k)
	if err != nil {
		return err
	}
	_, known := s.engine.SinkStatus(k.Name)
	// The engine's work must not stop half-way because the client gave up.
	ctx := context.WithoutCancel(r.Context())
	err = commitSpec(s.store.KafkaSinks, &s.sinkFailed, "kafka sink", k.Name, &k, &old, existed, known,
		func() error { return s.engine.CheckSink(&k, &conn, regs) },
		func() error { return s.applyStoredSink(ctx, &k, &conn, regs) })
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, s.sinkResponse(&k))
}

// dryRunKafkaSink answers POST /v1/kafka-sinks/{name}/dry-run: the checks
// of a PUT of the same body and the engine's, with the same problems, and
// on success 200 with the sink as a PUT would store it; with
// If-None-Match: * it checks a create (412 when the sink exists). It
// stores, starts and stops nothing.
func (s *Server) dryRunKafkaSink(w http.ResponseWriter, r *http.Request) error {
	var k spec.KafkaSink
	if err := decodeSpec(w, r, "kafka sink", &k, &k.Name); err != nil {
		return err
	}
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	_, _, conn, regs, err := s.sinkPrelude(r, &k)
	if err != nil {
		return err
	}
	if err := s.engine.CheckSink(&k, &conn, regs); err != nil {
		return refusal("kafka sink", k.Name, err)
	}
	return writeJSON(w, http.StatusOK, &k)
}

// sinkTxnConflict refuses (409) exactly-once sink k when another stored
// sink writes with the same transactional id: each would fence the other
// in turn. The caller holds changeMu.
func (s *Server) sinkTxnConflict(k *spec.KafkaSink) error {
	if !k.ExactlyOnce() {
		return nil
	}
	others, err := s.store.KafkaSinks.List()
	if err != nil {
		return err
	}
	for i := range others {
		o := &others[i]
		if o.Name != k.Name && o.ExactlyOnce() && o.TxnID() == k.TxnID() {
			pe := problemf(http.StatusConflict, "a transactional id belongs to one kafka sink")
			pe.Errors = spec.Errors{{Path: "transactional_id", Detail: fmt.Sprintf("kafka sink %q already writes with "+
				"transactional id %q: two sinks with one id fence each other; set another transactional_id", o.Name, k.TxnID())}}
			return pe
		}
	}
	return nil
}

// sinkPrelude runs the checks a PUT and a dry run of sink k share, under
// changeMu: the stored sink (412 for a conditional create of one that
// exists), the transactional id no other sink uses, and k's connection and
// registries.
func (s *Server) sinkPrelude(r *http.Request, k *spec.KafkaSink) (old spec.KafkaSink, existed bool,
	conn spec.Connection, regs map[string]spec.SchemaRegistry, err error) {
	if old, existed, err = storedFor(r, s.store.KafkaSinks, "kafka sink", k.Name); err != nil {
		return
	}
	if err = s.sinkTxnConflict(k); err != nil {
		return
	}
	conn, regs, err = s.sinkConnections(k)
	return
}

// sinkConnections returns the stored connection of sink k and the schema
// registries its source's transformers name, as a pipeline's table with
// the same options would have them; the problems (422) are on the sink's
// paths.
func (s *Server) sinkConnections(k *spec.KafkaSink) (spec.Connection, map[string]spec.SchemaRegistry, error) {
	p := sinkPipeline(k)
	conn, regs, err := s.connectionsOf(&p)
	var pe *problemError
	if errors.As(err, &pe) {
		const tablePath = "table[0].connector_options.kafka_options"
		for i := range pe.Errors {
			if rest, ok := strings.CutPrefix(pe.Errors[i].Path, tablePath); ok {
				pe.Errors[i].Path = "source" + rest
			}
		}
	}
	return conn, regs, err
}

// sinkPipeline returns a pipeline that reads what sink k's source reads
// through k's connection: what the connection checks of pipelines apply to.
func sinkPipeline(k *spec.KafkaSink) spec.Pipeline {
	p := spec.Pipeline{Name: k.Name, Connection: k.Connection}
	if k.Source != nil {
		p.Tables = []spec.Table{k.SourceTableSpec()}
	}
	return p
}

// applyStoredSink applies stored sink k and records the outcome for GET.
func (s *Server) applyStoredSink(ctx context.Context, k *spec.KafkaSink, conn *spec.Connection, regs map[string]spec.SchemaRegistry) error {
	s.applied.set(sinkKind, k.Name, fingerprint(k, conn, regs))
	err := s.engine.ApplySink(ctx, k, conn, regs)
	s.sinkFailed.set(k.Name, err)
	if err != nil {
		s.log.Error("kafka sink did not start", "kafka_sink", k.Name, "err", err)
	}
	return err
}

// applySinks applies every stored sink that writes through the named
// connection ("" for every sink): those the engine does not run, and with
// changed, those it runs too (their connection changed). It returns their
// errors joined; each is also shown by GET.
func (s *Server) applySinks(ctx context.Context, conn string, changed bool) error {
	sinks, err := s.store.KafkaSinks.List()
	if err != nil {
		return fmt.Errorf("listing kafka sinks: %w", err)
	}
	var errs []error
	for i := range sinks {
		k := &sinks[i]
		if conn != "" && !sinkUses(k, conn) {
			continue
		}
		if _, running := s.engine.SinkStatus(k.Name); running && !changed {
			continue
		}
		if err := s.applySink(ctx, k); err != nil {
			errs = append(errs, fmt.Errorf("kafka sink %q: %w", k.Name, err))
		}
	}
	return errors.Join(errs...)
}

// applySink applies stored sink k with its stored connections, and
// records the outcome for GET.
func (s *Server) applySink(ctx context.Context, k *spec.KafkaSink) error {
	c, regs, err := s.sinkConnections(k)
	if err != nil {
		s.sinkFailed.set(k.Name, err)
		s.applied.set(sinkKind, k.Name, s.sinkFingerprint(k))
		return err
	}
	return s.applyStoredSink(ctx, k, &c, regs)
}

// sinkUses reports whether sink k writes through the named connection or
// reads schemas from its registry.
func sinkUses(k *spec.KafkaSink, conn string) bool {
	p := sinkPipeline(k)
	return k.Connection == conn || usesRegistryOf(&p, conn)
}

// sinksUsing returns the stored sinks that use the named connection.
func (s *Server) sinksUsing(conn string) ([]spec.KafkaSink, error) {
	return storedWhere(s.store.KafkaSinks, func(k *spec.KafkaSink) bool { return sinkUses(k, conn) })
}

// sinkNames returns the sinks' names as `"a", "b"`.
func sinkNames(sinks []spec.KafkaSink) string {
	return joinQuoted(sinks, func(k *spec.KafkaSink) string { return k.Name })
}

// deleteKafkaSink stops a sink and forgets it. Its consumer group, which
// holds its source positions, stays: a sink created again with the same
// name resumes there.
func (s *Server) deleteKafkaSink(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	if _, err := s.store.KafkaSinks.Get(name); err != nil {
		return notFoundOr(err, "kafka sink", name)
	}
	if err := s.engine.RemoveSink(context.WithoutCancel(r.Context()), name); err != nil {
		return fmt.Errorf("stopping kafka sink %q: %w", name, err)
	}
	if err := s.store.KafkaSinks.Delete(name); err != nil {
		return notFoundOr(err, "kafka sink", name)
	}
	s.sinkFailed.set(name, nil)
	s.applied.forget(sinkKind, name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// sinkStatus returns what GET reports for stored sink k: the engine's
// status, or one made up from the last ApplySink error (FAILED) or none
// (STARTING) when the engine does not run it. Errors are scrubbed of
// secrets.
func (s *Server) sinkStatus(k *spec.KafkaSink) spec.KafkaSinkStatus {
	if st, ok := s.engine.SinkStatus(k.Name); ok {
		st.LastError = s.secrets.String(st.LastError)
		return st
	}
	// In a cluster one agent runs a sink: the one that reports it.
	if st, ok := s.peerSinkStatus(k.Name); ok {
		st.LastError = s.secrets.String(st.LastError)
		return st
	}
	st := spec.KafkaSinkStatus{State: spec.StateStarting}
	if msg, failed := s.sinkFailed.get(k.Name); failed {
		st.State, st.LastError = spec.StateFailed, s.secrets.String(msg)
	}
	return st
}

// usersOf returns, for a message, the pipelines and sinks that use a
// connection: `pipeline(s) "a" and kafka sink(s) "k"`.
func usersOf(pipes []spec.Pipeline, sinks []spec.KafkaSink) string {
	var parts []string
	if len(pipes) > 0 {
		parts = append(parts, "pipeline(s) "+quotedNames(pipes))
	}
	if len(sinks) > 0 {
		parts = append(parts, "kafka sink(s) "+sinkNames(sinks))
	}
	return strings.Join(parts, " and ")
}
