package membership

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// fixed returns a partitions function listing tps.
func fixed(tps []kafka.TopicPartition) func() []kafka.TopicPartition {
	return func() []kafka.TopicPartition { return tps }
}

// scene is a test's agents sharing the group "pipeline/p" of a cluster,
// the partitions list returns.
type scene struct {
	t       *testing.T
	l       *ledger
	conn    *spec.Connection
	cluster string
	groups  map[string]func() []kafka.TopicPartition
	agents  map[string]*testAgent
}

// newScene starts the agents names of cluster on conn, sharing what list
// returns, and waits until they share it evenly.
func newScene(t *testing.T, conn *spec.Connection, cluster string, list func() []kafka.TopicPartition, names ...string) *scene {
	s := &scene{t: t, l: newLedger(), conn: conn, cluster: cluster, agents: map[string]*testAgent{},
		groups: map[string]func() []kafka.TopicPartition{"pipeline/p": list}}
	for _, name := range names {
		s.start(name)
	}
	s.balanced(list(), names...)
	return s
}

// start starts agent name.
func (s *scene) start(name string) {
	s.agents[name] = startAgent(s.t, s.l, fastJoiner(s.cluster, name), s.conn, s.groups)
}

// balanced waits until the agents names share want evenly.
func (s *scene) balanced(want []kafka.TopicPartition, names ...string) {
	s.t.Helper()
	eventually(s.t, 20*time.Second, func() string { return s.l.unbalanced("pipeline/p", want, names) })
}

// twelve starts the agents names of cluster sharing the 12 partitions of
// topic t on a new kfake, and returns them with the kfake and the
// partitions, once they share them evenly.
func twelve(t *testing.T, cluster string, names ...string) (*scene, *kfake.Cluster, []kafka.TopicPartition) {
	c, conn := newKfake(t, 12, "t")
	all := parts("t", 0, 12)
	return newScene(t, conn, cluster, fixed(all), names...), c, all
}

// calls returns how many times agent name's member was called so far.
func (s *scene) calls(name string) int { return len(s.l.callsOf(name, "pipeline/p")) }

// droppedFirst says why the first call of agent name's member after its
// first since calls did not give every partition up; "" when it did.
func (s *scene) droppedFirst(name string, since int) string {
	switch calls := s.l.callsOf(name, "pipeline/p")[since:]; {
	case len(calls) == 0:
		return name + " was not called since"
	case len(calls[0]) != 0:
		return fmt.Sprintf("%s's first call since: %v, want one with no partition", name, calls[0])
	}
	return ""
}

// TestMembersBalancedAndSticky: three agents share 12 partitions 4 each; a
// fourth takes 3, one from each (no more move); one leaving hands its
// partitions to the others; at no moment does a partition have two
// owners, and each member's onAssign calls come one at a time.
func TestMembersBalancedAndSticky(t *testing.T) {
	s, _, all := twelve(t, "sticky", "a", "b", "c")
	before := s.l.snapshot("pipeline/p")

	s.start("d")
	s.balanced(all, "a", "b", "c", "d")
	after := s.l.snapshot("pipeline/p")
	movedAway := 0
	for tp, o := range before {
		if after[tp] != o {
			movedAway++
		}
	}
	if movedAway != 3 {
		t.Errorf("%d partitions changed owner when d joined, want 3 (d's share): %v -> %v", movedAway, before, after)
	}

	s.agents["b"].leave(t, s.l)
	s.balanced(all, "a", "c", "d")
	s.l.check(t)
}

// TestMembersKilled: an agent that dies (no LeaveGroup) loses its
// partitions to the others once its session expires.
func TestMembersKilled(t *testing.T) {
	s, _, all := twelve(t, "killed", "a", "b", "c")
	s.agents["c"].kill(s.l)
	s.balanced(all, "a", "b")
	s.l.check(t)
	kill, _ := s.l.pauses()
	t.Logf("partitions of the killed agent owned again after %v (p50) to %v (max); session timeout %v",
		percentile(kill, 50), percentile(kill, 100), fastJoiner("", "").SessionTimeout)
}

// TestMembersZombie: an agent frozen past the session timeout (no
// heartbeat, no request) gives every partition up (onAssign with nil)
// before anything else, before the others take them; once thawed it takes
// its share again.
func TestMembersZombie(t *testing.T) {
	s, _, all := twelve(t, "zombie", "a", "b")
	before := s.calls("a")

	thaw := s.agents["a"].freeze()
	s.balanced(all, "b")
	if why := s.droppedFirst("a", before); why != "" {
		t.Fatal(why)
	}
	thaw()
	s.balanced(all, "a", "b")
	s.l.check(t)
}

// TestMembersLateJoin: an agent whose joins do not reach the coordinator
// (its heartbeats do) when the group rebalances gives every partition up
// before the rebalance timeout passes, after which the coordinator gives
// them to the others.
func TestMembersLateJoin(t *testing.T) {
	s, _, all := twelve(t, "late", "a", "b")
	before := s.calls("a")

	thaw := s.agents["a"].freeze("join")
	s.start("c")
	s.balanced(all, "b", "c")
	if why := s.droppedFirst("a", before); why != "" {
		t.Fatal(why)
	}
	thaw()
	s.balanced(all, "a", "b", "c")
	s.l.check(t)
}

// TestMembersLateJoinArrives: an agent owning every partition whose join,
// as a new agent makes the group rebalance, is held until it gave its
// partitions up, but then reaches the coordinator within the rebalance
// timeout: the leader, reading the claim the join carried, keeps half of
// them for it and leaves the other half to nobody until the claim is
// withdrawn, so the agent joins again at once (it owns less than it
// claimed) and the new agent gets its half in the next generation.
func TestMembersLateJoinArrives(t *testing.T) {
	_, conn := newKfake(t, 12, "t")
	all := parts("t", 0, 12)
	s := &scene{t: t, l: newLedger(), conn: conn, cluster: "arrives", agents: map[string]*testAgent{},
		groups: map[string]func() []kafka.TopicPartition{"pipeline/p": fixed(all)}}
	// The join is given up on two heartbeats before the rebalance timeout
	// has passed since the last heartbeat answered while the group was
	// stable (its session timeout is longer), and the coordinator waits
	// for it for the rebalance timeout from when the rebalance began,
	// after that heartbeat: thawed as soon as it gave up, it arrives at
	// least two heartbeats (2 s) within.
	joiner := func(name string) *Joiner {
		j := fastJoiner(s.cluster, name)
		j.SessionTimeout, j.RebalanceTimeout, j.HeartbeatInterval = 10*time.Second, 4*time.Second, time.Second
		return j
	}
	s.agents["a"] = startAgent(t, s.l, joiner("a"), conn, s.groups)
	s.balanced(all, "a")
	before := s.calls("a")

	thaw := s.agents["a"].freeze("join")
	s.agents["b"] = startAgent(t, s.l, joiner("b"), conn, s.groups)
	eventually(t, 10*time.Second, func() string { return s.droppedFirst("a", before) })
	thaw()
	s.balanced(all, "a", "b")
	s.l.check(t)
	// Had a's join come too late, the group would have given b all 12
	// in between, and this test would not have tested the claim.
	for _, owned := range s.l.callsOf("b", "pipeline/p") {
		if len(owned) > len(all)/2 {
			t.Fatalf("b was given %d partitions: a's join did not reach the rebalance", len(owned))
		}
	}
}

// TestMembersKafkaLost: agents that lose Kafka give every partition up
// once the session timeout may have passed, and share them again once
// Kafka is back (here a new broker on the same port, which knows none of
// the old members).
func TestMembersKafkaLost(t *testing.T) {
	s, c, all := twelve(t, "lost", "a", "b")
	before := map[string]int{"a": s.calls("a"), "b": s.calls("b")}
	_, port, err := net.SplitHostPort(c.ListenAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	eventually(t, 20*time.Second, func() string { return s.droppedFirst("a", before["a"]) + s.droppedFirst("b", before["b"]) })
	portNumber, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	back, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(12, "t"), kfake.GroupMinSessionTimeout(100*time.Millisecond),
		kfake.Ports(portNumber))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(back.Close)
	s.balanced(all, "a", "b")
	s.l.check(t)
}

// TestMembersFenced: an agent that the coordinator no longer knows (here
// removed from the group by another client) learns it from its next
// heartbeat, gives every partition up first, and joins again as a new
// member.
func TestMembersFenced(t *testing.T) {
	s, _, all := twelve(t, "fenced", "a", "b")
	before := s.calls("a")

	// Remove a's member from the group, as the coordinator does when its
	// session expires.
	client, err := kafka.NewClient(s.conn)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	members, err := client.GroupMembers(t.Context(), "tributary-members.fenced.pipeline/p")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(members, func(m kafka.GroupMember) bool { return m.ClientID == "a" })
	if i < 0 {
		t.Fatalf("no member of client id a in %v", members)
	}
	admin := client.MemberClient("test")
	defer admin.Close()
	if err := admin.LeaveGroup(t.Context(), "tributary-members.fenced.pipeline/p", members[i].ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() string { return s.droppedFirst("a", before) })
	s.balanced(all, "a", "b")
	// No l.check: a member removed by someone else keeps reading until
	// its next heartbeat tells it, while the others already took its
	// partitions (the case of an agent cut off from Kafka that has not
	// noticed yet); the tables' logs make one of two such writers fail.
}

// growing lists the partitions of topic t on a kfake, to which a test adds
// partitions.
type growing struct {
	mu  sync.Mutex
	tps []kafka.TopicPartition
}

// list returns the partitions of t.
func (g *growing) list() []kafka.TopicPartition {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tps
}

// grow gives topic t of c n partitions, and lists them from then on.
func (g *growing) grow(t *testing.T, c *kfake.Cluster, n int) {
	t.Helper()
	adm := kadm.NewClient(mustKgo(t, c.ListenAddrs()...))
	if _, err := adm.CreatePartitions(t.Context(), n, "t"); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tps = parts("t", 0, n)
}

// TestMembersNewPartitions: partitions added to the topic (the members'
// partitions functions list them) are shared at the next refresh, without
// moving the others.
func TestMembersNewPartitions(t *testing.T) {
	c, conn := newKfake(t, 4, "t")
	g := &growing{tps: parts("t", 0, 4)}
	s := newScene(t, conn, "grow", g.list, "a", "b")
	before := s.l.snapshot("pipeline/p")

	g.grow(t, c, 8)
	s.balanced(parts("t", 0, 8), "a", "b")
	after := s.l.snapshot("pipeline/p")
	for tp, o := range before {
		if after[tp] != o {
			t.Errorf("%s moved from %s to %s when partitions were added", tp, o, after[tp])
		}
	}
	s.l.check(t)
}

// TestMembersPressed: an agent whose memory turns pressed joins again at
// its next refresh and says so in its user data; partitions added then all
// go to the other agent, and none moves away from the pressed one; once
// its pressure is gone it joins again and takes its share.
func TestMembersPressed(t *testing.T) {
	c, conn := newKfake(t, 4, "t")
	g := &growing{tps: parts("t", 0, 4)}
	s := &scene{t: t, l: newLedger(), conn: conn, cluster: "pressed", agents: map[string]*testAgent{},
		groups: map[string]func() []kafka.TopicPartition{"pipeline/p": g.list}}
	var pressed atomic.Bool
	ja := fastJoiner(s.cluster, "a")
	ja.Pressed = pressed.Load
	s.agents["a"] = startAgent(t, s.l, ja, conn, s.groups)
	s.start("b")
	s.balanced(parts("t", 0, 4), "a", "b")
	held := func(agent string) []kafka.TopicPartition {
		var tps []kafka.TopicPartition
		for tp, o := range s.l.snapshot("pipeline/p") {
			if o == agent {
				tps = append(tps, tp)
			}
		}
		return sorted(tps)
	}
	before := held("a")

	pressed.Store(true)
	adm := kadm.NewClient(mustKgo(t, c.ListenAddrs()...))
	const group = "tributary-members.pressed.pipeline/p"
	eventually(t, 20*time.Second, func() string {
		described, err := adm.DescribeGroups(t.Context(), group)
		if err != nil {
			return err.Error()
		}
		for _, m := range described[group].Members {
			if meta, ok := m.Join.AsConsumer(); ok && m.ClientID == "a" {
				if claim, err := decodeClaim(kafka.JoinedMember{Subscription: kafka.Subscription{UserData: meta.UserData}}); err != nil || !claim.pressed {
					return fmt.Sprintf("a's user data %s (%v), want it pressed", meta.UserData, err)
				}
				return ""
			}
		}
		return "no member a in the group"
	})
	g.grow(t, c, 8)
	eventually(t, 20*time.Second, func() string {
		owners := s.l.snapshot("pipeline/p")
		for _, tp := range parts("t", 4, 8) {
			if owners[tp] != "b" {
				return fmt.Sprintf("%s owned by %q, want b", tp, owners[tp])
			}
		}
		if now := held("a"); !slices.Equal(now, before) {
			return fmt.Sprintf("pressed a holds %v, want what it held before, %v", now, before)
		}
		return ""
	})

	pressed.Store(false)
	s.balanced(parts("t", 0, 8), "a", "b")
	s.l.check(t)
}

// TestMembersDescribed: Kafka's own group description (what
// kafka-consumer-groups --describe prints) shows each member under the
// agent's name with the partitions it reads.
func TestMembersDescribed(t *testing.T) {
	c, conn := newKfake(t, 6, "t")
	s := newScene(t, conn, "described", fixed(parts("t", 0, 6)), "agent-1", "agent-2")

	adm := kadm.NewClient(mustKgo(t, c.ListenAddrs()...))
	const group = "tributary-members.described.pipeline/p"
	eventually(t, 20*time.Second, func() string {
		described, err := adm.DescribeGroups(t.Context(), group)
		if err != nil {
			return err.Error()
		}
		g := described[group]
		if g.ProtocolType != "consumer" || g.Protocol != protocolName {
			return fmt.Sprintf("protocol type %q, protocol %q", g.ProtocolType, g.Protocol)
		}
		var got []string
		for _, m := range g.Members {
			assigned, ok := m.Assigned.AsConsumer()
			if !ok {
				return "an assignment not in the consumer protocol's format"
			}
			var tps []string
			for _, topic := range assigned.Topics {
				for _, p := range topic.Partitions {
					tps = append(tps, fmt.Sprintf("%s/%d", topic.Topic, p))
				}
			}
			slices.Sort(tps)
			got = append(got, m.ClientID+": "+strings.Join(tps, ","))
		}
		slices.Sort(got)
		want := []string{}
		for _, agent := range []string{"agent-1", "agent-2"} {
			var tps []string
			for tp, o := range s.l.snapshot("pipeline/p") {
				if o == agent {
					tps = append(tps, tp.String())
				}
			}
			slices.Sort(tps)
			want = append(want, agent+": "+strings.Join(tps, ","))
		}
		if !slices.Equal(got, want) {
			return fmt.Sprintf("described %q, want %q", got, want)
		}
		return ""
	})
	s.l.check(t)
}

// TestJoinRefusesBadSettings: a Joiner without its names, or with a
// heartbeat interval too long for its session timeout, refuses to join.
func TestJoinRefusesBadSettings(t *testing.T) {
	_, conn := newKfake(t, 1, "t")
	none := func(context.Context) ([]kafka.TopicPartition, error) { return nil, nil }
	ignore := func(context.Context, []kafka.TopicPartition) error { return nil }
	for _, tc := range []struct {
		j    *Joiner
		want string
	}{
		{&Joiner{Agent: "a"}, "cluster name"},
		{&Joiner{Cluster: "c"}, "agent name"},
		{&Joiner{Cluster: "c", Agent: "a", SessionTimeout: 6 * time.Second, HeartbeatInterval: 3 * time.Second}, "heartbeat interval"},
	} {
		if _, err := tc.j.Join(t.Context(), "pipeline/p", conn, none, ignore); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one about the %s", tc.j, err, tc.want)
		}
	}
}

// mustKgo returns a franz-go client of brokers, closed with the test.
func mustKgo(t testing.TB, brokers ...string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}
