package pipeline

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafkasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// In a cluster, one agent runs each Kafka sink: the one its members group
// ("sink/<name>") gives the group's single token. A sink's transactions
// take the sink's transactional id, so two agents running one sink would
// keep fencing each other; the sink runs where the token is, and moves with
// it when that agent stops, dies or loses Kafka (the new owner's session
// fences what the old one left open, and resumes from the sink's group).

// sinkMembersKey is the key of the members group of the named sink.
func sinkMembersKey(name string) string { return "sink/" + name }

// sinkToken is the one partition a sink's members group shares: not a
// Kafka partition, a name the group's leader assigns like one.
func sinkToken(name string) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: "tributary-sink." + name}
}

// sinkShare is a sink applied in a cluster: what it runs with, and its
// share of the group (the token, or nothing).
type sinkShare struct {
	share
	k    spec.KafkaSink
	conn spec.Connection
	regs map[string]spec.SchemaRegistry
	// err is the error of the last start, while the agent holds the
	// token; nil otherwise.
	err atomic.Pointer[error]
}

// runs reports whether sh runs sink k through conn with regs.
func (sh *sinkShare) runs(k *spec.KafkaSink, conn *spec.Connection, regs map[string]spec.SchemaRegistry) bool {
	return reflect.DeepEqual(sh.k, *k) && reflect.DeepEqual(sh.conn, *conn) && reflect.DeepEqual(sh.regs, regs)
}

// applySharedSink is ApplySink in a cluster: it joins the sink's members
// group, and the sink starts on whichever agent gets the token. The
// caller holds changeMu.
func (m *Manager) applySharedSink(ctx context.Context, k *spec.KafkaSink, conn *spec.Connection, regs map[string]spec.SchemaRegistry) error {
	m.mu.Lock()
	old := m.sinkShares[k.Name]
	m.mu.Unlock()
	if old != nil {
		// Applied again unchanged, it keeps running, unless it failed to
		// start here: then it starts again.
		if old.runs(k, conn, regs) && old.err.Load() == nil {
			return nil
		}
		m.stopSharedSink(ctx, k.Name, old)
	}
	sh := &sinkShare{k: *k, conn: *conn, regs: regs}
	sh.reassign = func(map[kafka.TopicPartition]bool) { m.reassignSink(ctx, sh) }
	token := []kafka.TopicPartition{sinkToken(k.Name)}
	sh.mu.Lock()
	// The membership outlives the call that applied the sink: leave ends
	// it.
	leave, err := m.cfg.Members.Join(context.WithoutCancel(ctx), sinkMembersKey(k.Name), conn,
		func(context.Context) ([]kafka.TopicPartition, error) { return token, nil },
		func(_ context.Context, owned []kafka.TopicPartition) error {
			sh.assign(owned)
			return nil
		})
	sh.leave = leave
	sh.mu.Unlock()
	if err != nil {
		return fmt.Errorf("join the members group of kafka sink %q: %w", k.Name, err)
	}
	m.mu.Lock()
	m.sinkShares[k.Name] = sh
	m.mu.Unlock()
	m.log.Info("kafka sink applied; it runs on the agent its members group gives it", "kafka_sink", k.Name)
	return nil
}

// reassignSink starts sh's sink when the agent got its token, and stops
// it when the agent lost it; sh.mu is held. The sink outlives ctx, the
// apply's: it runs until it loses the token or is removed.
func (m *Manager) reassignSink(ctx context.Context, sh *sinkShare) {
	name := sh.k.Name
	m.mu.Lock()
	r := m.sinks[name]
	m.mu.Unlock()
	switch owned := len(sh.owned) > 0; {
	case owned && r == nil:
		r, err := kafkasink.Start(context.WithoutCancel(ctx), &sh.k, &sh.conn, sh.regs, m.sinkDeps())
		if err != nil {
			sh.err.Store(&err)
			m.log.Error("kafka sink did not start", "kafka_sink", name, "err", err)
			return
		}
		sh.err.Store(nil)
		m.mu.Lock()
		m.sinks[name] = r
		m.mu.Unlock()
		m.log.Info("kafka sink runs on this agent", "kafka_sink", name)
	case !owned && r != nil:
		m.mu.Lock()
		delete(m.sinks, name)
		m.mu.Unlock()
		if !m.stopWithin(r.Stop) {
			m.log.Warn("kafka sink did not stop within the revoke timeout; its new owner fences its transaction", "kafka_sink", name)
		}
		m.log.Info("kafka sink moved to another agent", "kafka_sink", name)
	case !owned:
		sh.err.Store(nil)
	}
}

// stopSharedSink stops sink name, applied in a cluster as sh, and leaves
// its group. The caller holds changeMu.
func (m *Manager) stopSharedSink(ctx context.Context, name string, sh *sinkShare) {
	sh.close()
	m.mu.Lock()
	r := m.sinks[name]
	delete(m.sinks, name)
	delete(m.sinkShares, name)
	m.mu.Unlock()
	if r != nil {
		r.Stop()
	}
	m.leave(ctx, &sh.share, sinkMembersKey(name))
}

// sharedSinkStatus reports a sink applied in a cluster that this agent
// does not run: FAILED when it holds the token but the sink did not start;
// ok is false otherwise (another agent runs it, whose report says how).
func (m *Manager) sharedSinkStatus(name string) (status spec.KafkaSinkStatus, ok bool) {
	m.mu.Lock()
	sh := m.sinkShares[name]
	m.mu.Unlock()
	if sh == nil {
		return status, false
	}
	if err := sh.err.Load(); err != nil {
		return spec.KafkaSinkStatus{State: spec.StateFailed, LastError: (*err).Error()}, true
	}
	return status, false
}
