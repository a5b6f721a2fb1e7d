package pipeline

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Members shares the partitions of a pipeline (or of a fanout schema) among the agents of a
// cluster through a Kafka consumer group. Nil in Config means a single agent: it reads every
// partition, as today.
type Members interface {
	// Join makes this agent a member of the group of key ("pipeline/<name>" or
	// "fanout/<name>") on connection conn. partitions returns every partition the object
	// reads now (topics resolved, topic_pattern included); it is called at each (re)join.
	// onAssign is called, from the membership's goroutine, with the full set of partitions
	// this agent owns after every rebalance that changed it (first call: the first
	// assignment). It must return only once the agent stopped reading every partition not in
	// owned, having committed what it buffered for them (within a bound) or dropped it;
	// heartbeats go on meanwhile. Join returns once the member started joining (not once
	// assigned). leave does not call onAssign: the caller stops its readers first (final
	// flush), then calls leave, which stops heartbeating and sends LeaveGroup.
	Join(ctx context.Context, key string, conn *spec.Connection,
		partitions func(context.Context) ([]kafka.TopicPartition, error),
		onAssign func(ctx context.Context, owned []kafka.TopicPartition) error,
	) (leave func(context.Context) error, err error)
}

// DefaultRevokeTimeout is how long an assignment waits, by default, for
// the final flush of the table loops that lose partitions (see
// [Config.RevokeTimeout]).
const DefaultRevokeTimeout = 30 * time.Second

// share is a pipeline's (or a fanout schema's) share of its partitions
// when the agent runs in a cluster: the partitions its members group gave
// this agent. Its table loops (or fanout runner) read only those; each
// assignment that changes them restarts the runners it concerns, which
// commit what they buffered as they stop (the final flush) and start again
// from their logs with the new set. Which partitions a table reads, and from
// which offset, stays the table log's business: two agents that both
// believe they own a partition cannot both commit it, since each commit
// names the offset it starts from ([table.Commit.From]).
type share struct {
	// mu serializes the changes of the share's runners that the
	// membership makes (assignments) with those the manager makes (Apply,
	// StartRun, Remove, Close), so that neither restarts a runner the
	// other is replacing. The manager takes it after changeMu, and never
	// holds it while it leaves the group (a membership may wait for an
	// assignment in progress as it leaves); an assignment takes only it.
	mu sync.Mutex
	// owned is the set of partitions the agent owns; nil until the first
	// assignment, while the runners wait (see [runner.Ownership]).
	owned map[kafka.TopicPartition]bool
	// closed is set once the pipeline stops or moves to another group:
	// assignments then change nothing.
	closed bool
	// leave leaves the group; nil until joined.
	leave func(context.Context) error
	// sources holds the kafka options of the pipeline's tables (or of the
	// fanout schema) as applied, whose partitions the group shares: fixed,
	// since a change of them joins a new group.
	sources []spec.KafkaOptions
	// reassign restarts the runners whose partitions an assignment
	// changed from prev to owned; called with mu held.
	reassign func(prev map[kafka.TopicPartition]bool)
}

// membersKey is the key of the members group of the named pipeline.
func membersKey(pipeline string) string { return "pipeline/" + pipeline }

// fanoutMembersKey is the key of the members group of the named fanout
// schema.
func fanoutMembersKey(fanout string) string { return "fanout/" + fanout }

// sourcesOf returns the kafka options of p's tables, in spec order.
func sourcesOf(p *spec.Pipeline) []spec.KafkaOptions {
	kos := make([]spec.KafkaOptions, len(p.Tables))
	for i := range p.Tables {
		kos[i] = p.Tables[i].ConnectorOptions.KafkaOptions
	}
	return kos
}

// sameSources reports whether two pipelines' tables read the same topics
// and partitions, so that one group can share them.
func sameSources(a, b []spec.KafkaOptions) bool {
	return slices.EqualFunc(a, b, func(x, y spec.KafkaOptions) bool {
		return slices.Equal(x.Topics, y.Topics) && x.TopicPattern == y.TopicPattern && maps.EqualFunc(x.Assign, y.Assign, slices.Equal)
	})
}

// ownership returns what a runner that starts now may read: every
// partition for a single agent (nil s), else those of the owned set.
func (s *share) ownership() runner.Ownership {
	if s == nil {
		return runner.Ownership{}
	}
	return runner.Owns(s.owned)
}

// close makes every later assignment change nothing, once the one in
// progress, if any, is over. A nil share is a single agent's: nothing to do.
func (s *share) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// partitions returns every partition the share's sources read now,
// through client: the union the group shares. It does not take s.mu: the
// membership may call it while the manager holds it.
func (s *share) partitions(client *kafka.Client) func(context.Context) ([]kafka.TopicPartition, error) {
	return func(ctx context.Context) ([]kafka.TopicPartition, error) {
		seen := map[kafka.TopicPartition]bool{}
		for i := range s.sources {
			tps, err := client.Partitions(ctx, &s.sources[i])
			if err != nil {
				return nil, fmt.Errorf("look up the partitions to share: %w", err)
			}
			for _, tp := range tps {
				seen[tp] = true
			}
		}
		return slices.SortedFunc(maps.Keys(seen), kafka.CompareTopicPartitions), nil
	}
}

// join makes the agent a member of the group of key on conn, with s
// taking the assignments. s.mu must be held: the first assignment waits
// for the caller to finish starting the runners.
func (m *Manager) join(ctx context.Context, s *share, key string, conn *spec.Connection, client *kafka.Client) error {
	onAssign := func(_ context.Context, owned []kafka.TopicPartition) error {
		s.assign(owned)
		return nil
	}
	// The membership outlives the call that applied the pipeline: leave
	// ends it.
	leave, err := m.cfg.Members.Join(context.WithoutCancel(ctx), key, conn, s.partitions(client), onAssign)
	if err != nil {
		return fmt.Errorf("join the members group of %s: %w", key, err)
	}
	s.leave = leave
	return nil
}

// leave leaves the group of key that s joined, once its runners stopped;
// a failure is logged: the group's session timeout removes the member.
func (m *Manager) leave(ctx context.Context, s *share, key string) {
	if s == nil || s.leave == nil {
		return
	}
	if err := s.leave(ctx); err != nil {
		m.log.Warn("leaving the members group failed; the group drops this agent after its session timeout",
			"group", key, "err", err)
	}
}

// assign takes owned, the partitions the group gives this agent: the
// runners whose partitions change stop, committing what they buffered,
// and start again from their logs with the new set. Nothing changes once
// s is closed.
func (s *share) assign(owned []kafka.TopicPartition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	prev := s.owned
	s.owned = map[kafka.TopicPartition]bool{}
	for _, tp := range owned {
		s.owned[tp] = true
	}
	s.reassign(prev)
}

// reassignTables restarts the table loops of pipeline name, whose share s
// changed from prev, that read a partition gained or lost. It returns once
// the old loops stopped, or after the revoke timeout: a final flush still
// running then can only commit if no new owner committed those partitions
// first, and otherwise fails on its commit's offsets, dropping what it
// held. s.mu is held.
func (m *Manager) reassignTables(s *share, name string, prev map[kafka.TopicPartition]bool) {
	var moved []string // topics of the partitions gained or lost
	for tp := range s.owned {
		if !prev[tp] {
			moved = append(moved, tp.Topic)
		}
	}
	for tp := range prev {
		if !s.owned[tp] {
			moved = append(moved, tp.Topic)
		}
	}
	m.mu.Lock()
	r := m.pipelines[name]
	m.mu.Unlock()
	if r == nil || r.share != s {
		return
	}
	var stopping []*tableRunner
	restarted := *r
	restarted.tables = slices.Clone(r.tables)
	for i, t := range r.tables {
		if !t.own.Waits() && !slices.ContainsFunc(moved, t.cfg.Table.ConnectorOptions.KafkaOptions.ReadsTopic) {
			continue
		}
		stopping = append(stopping, t)
		restarted.tables[i] = nil
	}
	if !m.stopWithin(func() { stopAll(stopping) }) {
		m.log.Warn("table loops losing partitions did not stop within the revoke timeout; "+
			"their final commits fail if the partitions' new owners commit first", "pipeline", name, "timeout", m.revokeTimeout())
	}
	for i, t := range r.tables {
		if restarted.tables[i] == nil {
			restarted.tables[i] = startTable(t.cfg, s.ownership(), r.client, r.source, &m.registries, m.cfg.Memory, m.log)
		}
	}
	m.mu.Lock()
	m.pipelines[name] = &restarted
	m.mu.Unlock()
	m.log.Info("partitions assigned", "pipeline", name, "owned", len(s.owned), "tables_restarted", len(stopping))
}

// revokeTimeout is how long an assignment waits for the runners that lose
// partitions to stop.
func (m *Manager) revokeTimeout() time.Duration {
	if m.cfg.RevokeTimeout > 0 {
		return m.cfg.RevokeTimeout
	}
	return DefaultRevokeTimeout
}

// stopWithin runs stop, which stops runners and waits for them, and
// waits for it up to the revoke timeout; false when they had not stopped
// by then (they go on stopping).
func (m *Manager) stopWithin(stop func()) bool {
	done := make(chan struct{})
	go func() {
		stop()
		close(done)
	}()
	timer := time.NewTimer(m.revokeTimeout())
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
		return false
	}
}
