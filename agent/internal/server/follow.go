package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// This file keeps the engine in step with a store that other agents change
// too (the shared state of a cluster): requests read the others' changes
// first, a change that lost a race to another agent's is made again on the
// new state, and [Server.Follow] applies what the others changed.

// conflictRetries is how many times a change that lost a race with
// another agent's change of the shared state is checked and made again
// before the client gets a 409 to retry. Between two attempts the change
// waits a random time that grows with each attempt, so that agents that
// keep racing fall out of step.
const conflictRetries = 10

// synced wraps h, a handler of an authenticated route, so that it answers
// from the state as the other agents of a cluster left it (read your
// writes through any agent), and so that a change (any method but GET)
// that lost the race to write the shared state is checked and made again
// on the state the winner left; the client sees the last attempt's answer.
func (s *Server) synced(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if !s.store.Shared() {
			return h(w, r)
		}
		if err := s.syncStore(); err != nil {
			return err
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return h(w, r)
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if tooLarge := new(http.MaxBytesError); errors.As(err, &tooLarge) {
			return problemf(http.StatusRequestEntityTooLarge, "the request body is larger than %d MiB", maxBodyBytes>>20)
		} else if err != nil {
			return problemf(http.StatusBadRequest, "reading the request body: %v", err)
		}
		for attempt := 1; ; attempt++ {
			r.Body = io.NopCloser(bytes.NewReader(body))
			err := h(w, r)
			if !errors.Is(err, store.ErrConflict) {
				return err
			}
			if attempt == conflictRetries {
				return problemf(http.StatusConflict, "other agents of the cluster kept changing the state at the same time (%v); retry", err)
			}
			time.Sleep(rand.N(time.Duration(attempt) * 20 * time.Millisecond))
			if err := s.syncStore(); err != nil {
				return err
			}
		}
	}
}

// syncStore reads the other agents' changes; a store it cannot read is a
// 503: the agent cannot say what the cluster holds.
func (s *Server) syncStore() error {
	if err := s.store.Sync(); err != nil {
		s.log.Error("reading the shared state failed", "err", err)
		return problemf(http.StatusServiceUnavailable, "the agent cannot read the cluster's shared state: %v; retry, or ask another agent", err)
	}
	return nil
}

// suspendRounds is how many rounds of Follow in a row may fail to read the
// shared state before the agent gives up its partitions.
const suspendRounds = 5

// Follow keeps the engine in step with the shared state until ctx ends:
// every interval it reads the changes other agents made and applies them
// as their PUT or DELETE did on the agent that took it. A single agent's
// store never changes behind its back: Follow returns at once.
//
// The shared state lies in the object store the tables do: an agent that
// cannot read it for suspendRounds rounds in a row cannot commit either,
// so it stops every object it runs, which leaves their members groups and
// lets the other agents take their partitions, rather than hold partitions
// it cannot commit. Once it reads the state again, it runs them again and
// rejoins.
func (s *Server) Follow(ctx context.Context, every time.Duration) {
	if !s.store.Shared() {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var seen int64 = -1
	failed := 0
	s.changeMu.Lock()
	s.skipSharedRuns()
	s.changeMu.Unlock()
	for {
		select {
		case <-ctx.Done():
			// The agent is leaving: its report no longer holds.
			if err := s.store.RemoveStatus(); err != nil {
				s.log.Warn("removing this agent's status failed", "err", err)
			}
			return
		case <-t.C:
		}
		s.exchangeReports(every)
		if err := s.store.Sync(); err != nil {
			s.log.Warn("reading the shared state failed; retrying", "err", err)
			if failed++; failed == suspendRounds {
				s.suspend(ctx, err)
				seen = -1 // run everything again once the state reads
			}
			continue
		}
		failed = 0
		if ctx.Err() != nil {
			continue // leaving: apply nothing more
		}
		if v := s.store.Version(); v != seen {
			seen = v
			s.reconcile(ctx)
		}
		s.changeMu.Lock()
		s.startSharedRuns(ctx)
		s.changeMu.Unlock()
	}
}

// reconcile applies to the engine every stored object whose spec (with its
// connections) differs from what the engine was last given, and removes
// from it every object no longer stored: fanout schemas and sinks first,
// then pipelines; then pipelines, fanout schemas and sinks are applied.
// Failures are logged and shown by GET, as for Resume.
func (s *Server) reconcile(ctx context.Context) {
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	pipes, errP := s.store.Pipelines.List()
	fanouts, errF := s.store.FanoutSchemas.List()
	sinks, errS := s.store.KafkaSinks.List()
	if err := errors.Join(errP, errF, errS); err != nil {
		s.log.Error("reading the desired state failed", "err", err)
		return
	}
	s.removeUnstored(ctx, fanoutKind, names(fanouts, func(f *spec.FanoutSchema) string { return f.Name }), s.engine.RemoveFanout)
	s.removeUnstored(ctx, sinkKind, names(sinks, func(k *spec.KafkaSink) string { return k.Name }), s.engine.RemoveSink)
	s.removeUnstored(ctx, pipelineKind, names(pipes, func(p *spec.Pipeline) string { return p.Name }), s.engine.Remove)
	for i := range pipes {
		if s.applied.changed(pipelineKind, pipes[i].Name, s.pipelineFingerprint(&pipes[i])) {
			_ = s.applyStored(ctx, &pipes[i])
		}
	}
	for i := range fanouts {
		if s.applied.changed(fanoutKind, fanouts[i].Name, s.fanoutFingerprint(&fanouts[i])) {
			_ = s.applyStoredFanout(ctx, &fanouts[i])
		}
	}
	for i := range sinks {
		if s.applied.changed(sinkKind, sinks[i].Name, s.sinkFingerprint(&sinks[i])) {
			_ = s.applySink(ctx, &sinks[i])
		}
	}
}

// suspend stops every object the engine runs, because the shared state (and
// so the tables' store) cannot be read: the final flushes are bounded by
// the time a rebalance grants, and what they cannot commit the next owner
// reads again. GET shows each object FAILED with the reason until Follow
// runs it again.
func (s *Server) suspend(ctx context.Context, cause error) {
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	s.log.Error("the shared state cannot be read: stopping every pipeline, fanout schema and kafka sink, so that other agents take "+
		"their partitions, until it can", "err", cause)
	reason := fmt.Errorf("stopped: this agent cannot reach the cluster's shared state (%w); it runs again once it can", cause)
	stop := func(kind string, failed *failures, remove func(context.Context, string) error) {
		for _, name := range s.applied.names(kind) {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), suspendTimeout)
			if err := remove(rctx, name); err != nil {
				s.log.Warn("stopping failed", "kind", kind, "name", name, "err", err)
			}
			cancel()
			s.applied.forget(kind, name)
			failed.set(name, reason)
		}
	}
	stop(fanoutKind, &s.fanoutFailed, s.engine.RemoveFanout)
	stop(sinkKind, &s.sinkFailed, s.engine.RemoveSink)
	stop(pipelineKind, &s.failed, s.engine.Remove)
}

// suspendTimeout bounds the stop of one object by suspend.
const suspendTimeout = 30 * time.Second

// removeUnstored removes from the engine, with remove, every object of the
// kind it was given that stored (its names) no longer holds.
func (s *Server) removeUnstored(ctx context.Context, kind string, stored []string, remove func(context.Context, string) error) {
	for _, name := range s.applied.names(kind) {
		if slices.Contains(stored, name) {
			continue
		}
		if err := remove(ctx, name); err != nil {
			s.log.Error("stopping an object another agent deleted failed", "kind", kind, "name", name, "err", err)
			continue
		}
		s.applied.forget(kind, name)
	}
}

// names returns the name of each item.
func names[T any](items []T, name func(*T) string) []string {
	out := make([]string, len(items))
	for i := range items {
		out[i] = name(&items[i])
	}
	return out
}

// The kinds of object the engine is given, as applied names them.
const (
	pipelineKind = "pipeline"
	fanoutKind   = "fanout schema"
	sinkKind     = "kafka sink"
)

// fingerprint returns the JSON of parts: what the engine is given of an
// object, which changes when the object or what it refers to changes.
func fingerprint(parts ...any) string {
	data, err := json.Marshal(parts)
	if err != nil {
		return fmt.Sprintf("unencodable: %v", err) // never equal to a real one
	}
	return string(data)
}

// pipelineFingerprint is the fingerprint of stored pipeline p with its
// connections and its catalog.
func (s *Server) pipelineFingerprint(p *spec.Pipeline) string {
	conn, regs, err := s.connectionsOf(p)
	if err != nil {
		return fingerprint(p, err.Error())
	}
	return fingerprint(p, conn, regs, s.catalogOf(p.DestinationCatalog))
}

// fanoutFingerprint is the fingerprint of stored fanout schema f within
// its pipeline as the engine was last given it (a pipeline applied again
// may have taken its fanout schemas down, which are applied again then),
// with its catalog.
func (s *Server) fanoutFingerprint(f *spec.FanoutSchema) string {
	return fingerprint(f, s.applied.get(pipelineKind, f.Pipeline), s.catalogOf(f.DestinationCatalog))
}

// sinkFingerprint is the fingerprint of stored sink k with its
// connections.
func (s *Server) sinkFingerprint(k *spec.KafkaSink) string {
	conn, regs, err := s.sinkConnections(k)
	if err != nil {
		return fingerprint(k, err.Error())
	}
	return fingerprint(k, conn, regs)
}

// appliedSet holds, by kind and name, the fingerprint of what the engine
// was last given of each object. It is safe for concurrent use.
type appliedSet struct {
	mu sync.Mutex
	m  map[string]map[string]string
}

// set records that the engine was given fingerprint fp of the named
// object of the kind.
func (a *appliedSet) set(kind, name, fp string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string]map[string]string{}
	}
	if a.m[kind] == nil {
		a.m[kind] = map[string]string{}
	}
	a.m[kind][name] = fp
}

// get returns what the engine was last given of the named object of the
// kind; "" when nothing.
func (a *appliedSet) get(kind, name string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.m[kind][name]
}

// changed reports whether fp differs from what the engine was last given
// of the named object of the kind.
func (a *appliedSet) changed(kind, name, fp string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	old, ok := a.m[kind][name]
	return !ok || old != fp
}

// forget records that the engine no longer runs the named object.
func (a *appliedSet) forget(kind, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m[kind], name)
}

// names returns the names of every object of the kind the engine was
// given, sorted.
func (a *appliedSet) names(kind string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.m[kind]))
	for name := range a.m[kind] {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
