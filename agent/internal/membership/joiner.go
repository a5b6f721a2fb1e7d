// Package membership shares the partitions of a pipeline (or of a fanout
// schema) among the agents of a cluster, through a Kafka consumer group of
// their own on the pipeline's connection. It sits before reading in the
// data flow: the pipeline lists its partitions, membership tells it which
// of them this agent reads (and when that changes), and only then do the
// pipeline's readers fetch those partitions, each from the offset its
// table's log records (never from the group's committed offsets: the group
// commits none). Kafka's group coordinator does the membership (who is
// alive, generations, fencing); the balancer here, which the group's
// leader runs, only decides who reads what.
package membership

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// protocolName is the group's assignment protocol: the balancer of this
// package, which every member of a group must run.
const protocolName = "tributary-sticky"

// Default timeouts of a [Joiner].
const (
	DefaultSessionTimeout    = 10 * time.Second
	DefaultRebalanceTimeout  = 30 * time.Second
	DefaultHeartbeatInterval = time.Second
	DefaultRefreshInterval   = 10 * time.Second
)

// Joiner makes this agent a member of the groups that share partitions
// among the agents of a cluster. Set its fields before the first Join and
// leave them; one Joiner serves any number of groups at once.
type Joiner struct {
	// Cluster is the cluster's name; the groups are
	// "tributary-members.<Cluster>.<key>".
	Cluster string
	// Agent is the agent's name, the client.id of its group requests, so
	// that kafka-consumer-groups --describe names the agent reading each
	// partition.
	Agent string
	// Log receives what membership does (joins, assignments, partitions
	// given up and why); nil for none.
	Log *slog.Logger
	// SessionTimeout is how long the group's coordinator keeps a member
	// whose heartbeats stopped before giving its partitions to others
	// (DefaultSessionTimeout when zero; the brokers' group.min and
	// group.max.session.timeout.ms bound it, 6 s to 30 min by default).
	// A member that got no heartbeat answered for SessionTimeout less two
	// HeartbeatIntervals gives its partitions up by itself.
	SessionTimeout time.Duration
	// RebalanceTimeout is how long a rebalance waits for members to join
	// again (DefaultRebalanceTimeout when zero). A Join's onAssign must
	// return within it, or the member is dropped from the group.
	RebalanceTimeout time.Duration
	// HeartbeatInterval is the time between heartbeats
	// (DefaultHeartbeatInterval when zero); less than a third of
	// SessionTimeout.
	HeartbeatInterval time.Duration
	// RefreshInterval is how often a member asks for its partitions
	// again, to join again when they changed (new partitions, a new
	// topic matching a pattern) so that the leader assigns them
	// (DefaultRefreshInterval when zero).
	RefreshInterval time.Duration
	// Pressed reports whether the agent is under memory pressure (see
	// memory.Budget.Pressed); nil for never. A pressed member says so
	// when it joins, and the leader then gives it no partition it does
	// not own already (unless every member is pressed). A member asks
	// every RefreshInterval, and joins again when the answer changed.
	Pressed func() bool

	// beforeRequest, set by tests only, is called before each join and
	// each heartbeat is sent, with the request's name ("join",
	// "heartbeat"); a test blocks in it to hold a member's requests as a
	// long pause of the whole agent or a network cut would.
	beforeRequest func(ctx context.Context, request string)
}

// Join makes this agent a member of the group of key ("pipeline/<name>" or
// "fanout/<name>") on the connection conn, and returns at once, while the
// member joins in a goroutine of its own until ctx ends or leave is
// called.
//
// partitions returns every partition the pipeline reads now; it is called
// at each join, and every RefreshInterval to join again when it changed.
// onAssign is called with the full set of partitions this agent owns,
// sorted, after every rebalance that changed it (the first time with the
// first assignment, even when empty), one call at a time, never while an
// earlier call runs. A partition another member owned is assigned only
// after that member was called without it, so no partition has two live
// owners. onAssign must return once the agent stopped reading every
// partition not in owned (having committed or dropped what it buffered for
// them); heartbeats go on meanwhile. It must return within RebalanceTimeout,
// or the group drops the member, and should within SessionTimeout less two
// HeartbeatIntervals: the other members waiting for this one to join a
// rebalance give their partitions up past that, not knowing whether their
// own joins reached the coordinator. Its context ends when leave is called
// or ctx ends. When it fails, it is called again with the same set after a
// pause. When the
// member lost its place in the group (its session expired, the group moved
// on without it, no heartbeat was answered for the session timeout, or its
// join waited so long that the group may have rebalanced without it),
// onAssign is called with nil before anything else, since other members
// may own those partitions by then; the member then joins again.
//
// leave stops the member (it does not call onAssign: the caller stops its
// readers first) and sends LeaveGroup, so the others take its partitions
// without waiting for its session to expire. A ctx ending without leave is
// an agent that died: the coordinator gives its partitions away once its
// session expires.
func (j *Joiner) Join(ctx context.Context, key string, conn *spec.Connection,
	partitions func(context.Context) ([]kafka.TopicPartition, error),
	onAssign func(ctx context.Context, owned []kafka.TopicPartition) error,
) (leave func(context.Context) error, err error) {
	t, err := j.timeouts()
	if err != nil {
		return nil, err
	}
	if j.Cluster == "" || j.Agent == "" || key == "" {
		return nil, fmt.Errorf("join a group of the cluster: the cluster name (%q), the agent name (%q) and the key (%q) must all be set",
			j.Cluster, j.Agent, key)
	}
	client, err := kafka.NewClient(conn)
	if err != nil {
		return nil, fmt.Errorf("join the group of %s: %w", key, err)
	}
	group := "tributary-members." + j.Cluster + "." + key
	log := j.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &member{
		group: group, t: t, client: client.MemberClient(j.Agent), partitions: partitions, onAssign: onAssign,
		log: log.With("group", group), beforeRequest: j.beforeRequest, isPressed: j.Pressed,
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The connection closes with the loop, as a dead agent's would;
		// leave opens one again for LeaveGroup.
		defer m.client.Close()
		m.run(runCtx)
	}()
	var once sync.Once
	var leaveErr error
	return func(ctx context.Context) error {
		once.Do(func() {
			defer client.Close()
			defer m.client.Close()
			stop()
			select {
			case <-done:
			case <-ctx.Done():
				leaveErr = fmt.Errorf("leave group %q: the member did not stop (is onAssign still running?): %w", group, ctx.Err())
				return
			}
			if m.id == "" {
				return
			}
			if leaveErr = m.client.LeaveGroup(ctx, group, m.id); leaveErr == nil {
				m.log.Info("group membership: left the group", "member", m.id)
			}
		})
		return leaveErr
	}, nil
}

// timeouts are a Joiner's timeouts, defaults applied.
type timeouts struct {
	session, rebalance, heartbeat, refresh time.Duration
}

// timeouts returns j's timeouts with the defaults for those unset, or an
// error naming the one that does not fit.
func (j *Joiner) timeouts() (timeouts, error) {
	or := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	t := timeouts{
		session:   or(j.SessionTimeout, DefaultSessionTimeout),
		rebalance: or(j.RebalanceTimeout, DefaultRebalanceTimeout),
		heartbeat: or(j.HeartbeatInterval, DefaultHeartbeatInterval),
		refresh:   or(j.RefreshInterval, DefaultRefreshInterval),
	}
	if 3*t.heartbeat > min(t.session, t.rebalance) {
		return t, fmt.Errorf("membership: the heartbeat interval %s must be at most a third of the session timeout %s and of the rebalance timeout %s",
			t.heartbeat, t.session, t.rebalance)
	}
	return t, nil
}

// giveUp is how long a member goes without an answered heartbeat before it
// gives its partitions up: two heartbeat intervals less than the session
// timeout, since the member checks once an interval and the coordinator
// counts the session from when it got the last heartbeat, a little after
// this member sent it; so the member gives up before the coordinator gives
// its partitions to others.
func (t timeouts) giveUp() time.Duration { return t.session - 2*t.heartbeat }

// errExpired says that no heartbeat was answered for the session timeout.
var errExpired = errors.New("no heartbeat answered within the session timeout")

// lost reports whether err says that the member lost its place in the
// group, and with it its partitions.
func lost(err error) bool {
	return errors.Is(err, kafka.ErrUnknownMemberID) || errors.Is(err, kafka.ErrIllegalGeneration) || errors.Is(err, errExpired)
}

// member is one Join: its loop's state, owned by the loop's goroutine.
type member struct {
	group      string
	t          timeouts
	client     *kafka.MemberClient
	partitions func(context.Context) ([]kafka.TopicPartition, error)
	onAssign   func(context.Context, []kafka.TopicPartition) error
	log        *slog.Logger
	// beforeRequest is the Joiner's test hook.
	beforeRequest func(ctx context.Context, request string)
	// isPressed is the Joiner's Pressed, nil for never.
	isPressed func() bool

	// id is the member id the coordinator gave, "" before the first join
	// and after the coordinator forgot it.
	id string
	// readable are the partitions this member said it can read when it
	// last joined, and pressed whether it said it was under pressure.
	readable []kafka.TopicPartition
	pressed  bool
	// owned are the partitions onAssign was last called with, assigned
	// in generation ownedGen; announced says whether onAssign was called
	// at all.
	owned     []kafka.TopicPartition
	ownedGen  int
	announced bool
	// lastOK is when the last request the coordinator answered (a
	// heartbeat, a sync) was sent, in Unix nanoseconds; lastStable, when
	// the last one answered while the group was not rebalancing was. The
	// heartbeat goroutine writes them too.
	lastOK, lastStable atomic.Int64
}

// run is the member's loop: join, sync, hand the assignment over,
// heartbeat until the group rebalances; again, until ctx ends.
func (m *member) run(ctx context.Context) {
	failures := 0
	for {
		err := m.generation(ctx)
		if ctx.Err() != nil {
			return
		}
		delay := time.Duration(0)
		switch {
		case err == nil, errors.Is(err, kafka.ErrRebalanceInProgress):
			failures = 0
		case lost(err):
			m.drop(ctx, err)
		default:
			failures++
			delay = backoff(failures)
			m.log.Warn("group membership: retrying", "member", m.id, "in", delay, "err", err)
			if m.expired() {
				m.drop(ctx, fmt.Errorf("%w: %w", errExpired, err))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// generation joins the group once and stays in the generation joined until
// it must join again; it returns nil then, or why the member could not
// join or lost its place.
func (m *member) generation(ctx context.Context) error {
	switch readable, err := m.partitions(ctx); {
	case err == nil:
		m.readable = sorted(readable)
	case m.readable == nil:
		return fmt.Errorf("list the partitions to share: %w", err)
	default: // join with the partitions listed last rather than not at all
		m.log.Warn("group membership: list the partitions to share; joining with those listed before", "err", err)
	}
	m.pressed = m.underPressure()
	// What the join claims: the leader leaves a claimed partition it
	// moves elsewhere unassigned until the claim is withdrawn, even when
	// this member gave it up (drop) while the join waited.
	claimed := m.owned
	userData, err := encodeUserData(m.readable, m.ownedGen, m.pressed)
	if err != nil {
		return err
	}
	joined, err := m.join(ctx, kafka.JoinRequest{
		Group: m.group, MemberID: m.id, Protocol: protocolName,
		Subscription:   kafka.Subscription{Topics: kafka.TopicsOf(m.readable), Owned: claimed, UserData: userData},
		SessionTimeout: m.t.session, RebalanceTimeout: m.t.rebalance,
	})
	if err != nil {
		switch id := kafka.GivenMemberID(err); {
		case errors.Is(err, kafka.ErrUnknownMemberID):
			m.id = ""
		case id != "":
			// The coordinator holds this member under that id now: join
			// again as it, not as one more new member.
			m.id = id
		}
		return err
	}
	m.id = joined.MemberID
	var assignments map[string][]kafka.TopicPartition
	if joined.LeaderID == m.id {
		assignments = m.lead(joined)
	}
	sent := time.Now()
	assigned, err := m.client.SyncGroup(ctx, m.group, joined.Generation, m.id, m.t.rebalance+m.t.session, assignments)
	if err != nil {
		return err
	}
	m.touch(sent, true)
	beat := m.heartbeat(ctx, joined.Generation, m.id)
	defer beat.stop()
	rejoin := m.apply(ctx, assigned, joined.Generation, claimed)
	return m.stable(ctx, beat, rejoin)
}

// errJoinLate says that a join may have reached the coordinator after it
// dropped the member.
var errJoinLate = errors.New("no answer to the join before the coordinator may have dropped the member")

// join sends req. While it waits, a member owning partitions gives them up
// (onAssign with nil) once the coordinator may have dropped it, in case
// the join did not reach the coordinator yet: until a member's join
// arrives, the coordinator drops it when its session expires (no
// heartbeat since the last one answered) and when the rebalance timeout
// passes after the rebalance began (which was after the last answer the
// member got while the group was stable), and gives its partitions to
// others. A member whose join did arrive stays in the group however long
// the rebalance takes; giving its partitions up is only a waste then (a
// rebalance waiting longer than the session timeout for a slow member's
// onAssign), and the leader assigns them to it again.
func (m *member) join(ctx context.Context, req kafka.JoinRequest) (*kafka.Joined, error) {
	type result struct {
		joined *kafka.Joined
		err    error
	}
	done := make(chan result, 1)
	go func() {
		m.pause(ctx, "join")
		joined, err := m.client.JoinGroup(ctx, req)
		done <- result{joined, err}
	}()
	var late <-chan time.Time
	if len(m.owned) > 0 {
		deadline := min(m.lastOK.Load()+int64(m.t.giveUp()), m.lastStable.Load()+int64(m.t.rebalance-2*m.t.heartbeat))
		timer := time.NewTimer(time.Until(time.Unix(0, deadline)))
		defer timer.Stop()
		late = timer.C
	}
	for {
		select {
		case r := <-done:
			return r.joined, r.err
		case <-late:
			m.drop(ctx, errJoinLate)
			late = nil
		}
	}
}

// lead computes, as the group's leader, every member's partitions for the
// generation joined.
func (m *member) lead(joined *kafka.Joined) map[string][]kafka.TopicPartition {
	claims := make([]claim, 0, len(joined.Members))
	pressed := 0
	for _, jm := range joined.Members {
		c, err := decodeClaim(jm)
		if err != nil {
			m.log.Warn("group membership: a member is assigned nothing", "err", err)
		}
		if c.pressed {
			pressed++
		}
		claims = append(claims, c)
	}
	assignments := balance(claims)
	m.log.Debug("group membership: assigned the partitions as the leader", "generation", joined.Generation, "members", len(claims),
		"pressed", pressed)
	return assignments
}

// apply hands the partitions assigned in generation to onAssign when they
// differ from those owned (or were never handed over), again after a pause
// while it fails, and reports whether the member must join again at once:
// the join claimed a partition not assigned, which the leader leaves to
// nobody until a join no longer claims it. That holds also when the
// member gave the partition up while its join waited (it owns less than
// it claimed): only a new join tells the leader, and without one the
// partition would stay without an owner until some other rebalance.
func (m *member) apply(ctx context.Context, assigned []kafka.TopicPartition, generation int, claimed []kafka.TopicPartition) (rejoin bool) {
	rejoin = slices.ContainsFunc(claimed, func(tp kafka.TopicPartition) bool { return !slices.Contains(assigned, tp) })
	if m.announced && slices.Equal(assigned, m.owned) {
		m.ownedGen = generation
		return rejoin
	}
	if !m.call(ctx, assigned) {
		return false
	}
	m.log.Info("group membership: partitions assigned", "member", m.id, "generation", generation,
		"owned", len(assigned), "before", len(m.owned), "claimed_unassigned", rejoin)
	m.owned, m.ownedGen, m.announced = assigned, generation, true
	return rejoin
}

// drop gives every owned partition up (onAssign with nil) because the
// member lost its place in the group, for the reason err.
func (m *member) drop(ctx context.Context, err error) {
	if errors.Is(err, kafka.ErrUnknownMemberID) {
		m.id = ""
	}
	if len(m.owned) == 0 {
		return
	}
	m.log.Warn("group membership: giving up every partition, another agent may own them now", "member", m.id,
		"owned", len(m.owned), "err", err)
	if m.call(ctx, nil) {
		m.owned, m.ownedGen = nil, 0
	}
}

// call calls onAssign with owned until it succeeds, pausing between
// failures; false when ctx ended first.
func (m *member) call(ctx context.Context, owned []kafka.TopicPartition) bool {
	for failures := 1; ; failures++ {
		err := m.onAssign(ctx, slices.Clone(owned)) // the caller may keep it
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		delay := backoff(failures)
		m.log.Error("group membership: taking the assigned partitions failed; trying again", "owned", len(owned), "in", delay, "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(delay):
		}
	}
}

// stable waits in the generation until the member must join again: right
// away when it gave partitions up (so that their new owners get them in
// the next generation), else when the group rebalances, or when the
// partitions to share or the agent's memory pressure changed (checked
// every RefreshInterval). It returns why the member lost its place, if it
// did.
func (m *member) stable(ctx context.Context, beat *heartbeat, rejoin bool) error {
	if rejoin {
		select {
		case err := <-beat.events:
			return err
		default:
			return nil
		}
	}
	watch := time.NewTicker(m.t.heartbeat)
	defer watch.Stop()
	refresh := time.NewTicker(m.t.refresh)
	defer refresh.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-beat.events:
			return err
		case <-watch.C:
			if m.expired() {
				return errExpired
			}
		case <-refresh.C:
			if pressed := m.underPressure(); pressed != m.pressed {
				m.log.Info("group membership: the agent's memory pressure changed, joining again", "member", m.id, "pressed", pressed)
				return nil
			}
			tps, err := m.partitions(ctx)
			if err != nil {
				m.log.Warn("group membership: list the partitions to share", "err", err)
				continue
			}
			if tps = sorted(tps); !slices.Equal(tps, m.readable) {
				m.log.Info("group membership: the partitions to share changed, joining again", "before", len(m.readable), "now", len(tps))
				return nil
			}
		}
	}
}

// underPressure reports whether the agent is under memory pressure now.
func (m *member) underPressure() bool { return m.isPressed != nil && m.isPressed() }

// pause calls the test hook, if set, before request.
func (m *member) pause(ctx context.Context, request string) {
	if m.beforeRequest != nil {
		m.beforeRequest(ctx, request)
	}
}

// touch records that a request sent at sent was answered, while the group
// was stable or not.
func (m *member) touch(sent time.Time, stable bool) {
	m.lastOK.Store(sent.UnixNano())
	if stable {
		m.lastStable.Store(sent.UnixNano())
	}
}

// expired reports whether no request was answered for longer than the
// member may hold its partitions without one.
func (m *member) expired() bool {
	return time.Since(time.Unix(0, m.lastOK.Load())) > m.t.giveUp()
}

// heartbeat is a goroutine sending the heartbeats of one generation.
type heartbeat struct {
	// events gets what ends the generation: [kafka.ErrRebalanceInProgress]
	// or why the member lost its place.
	events chan error
	cancel context.CancelFunc
	done   chan struct{}
}

// heartbeat starts sending heartbeats every interval for the generation
// as member id, until stopped or until the coordinator answers that the
// generation is over.
func (m *member) heartbeat(ctx context.Context, generation int, id string) *heartbeat {
	ctx, cancel := context.WithCancel(ctx)
	h := &heartbeat{events: make(chan error, 1), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		tick := time.NewTicker(m.t.heartbeat)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			m.pause(ctx, "heartbeat")
			sent := time.Now()
			err := m.client.Heartbeat(ctx, m.group, generation, id, m.t.session/3)
			switch {
			case err == nil:
				m.touch(sent, true)
			case errors.Is(err, kafka.ErrRebalanceInProgress):
				m.touch(sent, false)
				h.events <- err
				return
			case lost(err):
				h.events <- err
				return
			case ctx.Err() != nil:
				return
			default:
				m.log.Debug("group membership: heartbeat failed", "member", id, "err", err)
			}
		}
	}()
	return h
}

// stop stops the heartbeats and waits for the goroutine to end.
func (h *heartbeat) stop() {
	h.cancel()
	<-h.done
}

// backoff returns the pause after the given number of failures in a row:
// from 200 ms, doubling up to 5 s, with a random fifth either way so that
// the members of a cluster do not retry in step.
func backoff(failures int) time.Duration {
	d := 200 * time.Millisecond << min(failures-1, 5)
	d = min(d, 5*time.Second)
	return d + time.Duration((rand.Float64()-0.5)*0.4*float64(d))
}

// sorted returns tps sorted, in a new slice.
func sorted(tps []kafka.TopicPartition) []kafka.TopicPartition {
	out := slices.Clone(tps)
	slices.SortFunc(out, kafka.CompareTopicPartitions)
	return out
}
