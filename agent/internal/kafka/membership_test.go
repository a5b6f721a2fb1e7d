package kafka_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestMemberClient runs the group protocol against kfake's coordinator: a
// new member's join (through MEMBER_ID_REQUIRED), its subscription as the
// leader reads it, the sync of its assignment, and the coordinator's
// answers a member must act on: REBALANCE_IN_PROGRESS once another member
// joins, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID (which kafka-go's own
// Heartbeat reads as no error).
func TestMemberClient(t *testing.T) {
	client := groupClient(t, 4)
	ctx := t.Context()
	const group = "g"
	owned := []kafka.TopicPartition{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 3}}
	join := func(m *kafka.MemberClient, id string) (*kafka.Joined, error) {
		return m.JoinGroup(ctx, kafka.JoinRequest{Group: group, MemberID: id, Protocol: "p",
			Subscription:   kafka.Subscription{Topics: []string{"t"}, Owned: owned, UserData: []byte("ours")},
			SessionTimeout: 2 * time.Second, RebalanceTimeout: 2 * time.Second})
	}

	first := client.MemberClient("agent-1")
	defer first.Close()
	joined, err := join(first, "")
	if err != nil {
		t.Fatal(err)
	}
	if joined.MemberID == "" || joined.LeaderID != joined.MemberID || joined.Generation != 1 || len(joined.Members) != 1 {
		t.Fatalf("joined %+v, want generation 1 with this member as the leader and the only member", joined)
	}
	sub := joined.Members[0].Subscription
	if !slices.Equal(sub.Topics, []string{"t"}) || !slices.Equal(sub.Owned, owned) || string(sub.UserData) != "ours" {
		t.Fatalf("the leader read the subscription %+v, want the one sent", sub)
	}
	assigned, err := first.SyncGroup(ctx, group, joined.Generation, joined.MemberID, time.Second,
		map[string][]kafka.TopicPartition{joined.MemberID: {{Topic: "t", Partition: 2}, {Topic: "t", Partition: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []kafka.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 2}}; !slices.Equal(assigned, want) {
		t.Fatalf("assigned %v, want %v", assigned, want)
	}
	if err := first.Heartbeat(ctx, group, joined.Generation, joined.MemberID, time.Second); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	if err := first.Heartbeat(ctx, group, joined.Generation+1, joined.MemberID, time.Second); !errors.Is(err, kafka.ErrIllegalGeneration) {
		t.Fatalf("heartbeat of a later generation: %v, want ILLEGAL_GENERATION", err)
	}
	if err := first.Heartbeat(ctx, group, joined.Generation, "nobody", time.Second); !errors.Is(err, kafka.ErrUnknownMemberID) {
		t.Fatalf("heartbeat of an unknown member: %v, want UNKNOWN_MEMBER_ID", err)
	}

	// A second member's join waits for the first to join again, which
	// its next heartbeat tells it.
	second := client.MemberClient("agent-2")
	defer second.Close()
	secondJoined := make(chan error, 1)
	go func() {
		_, err := join(second, "")
		secondJoined <- err
	}()
	for {
		err := first.Heartbeat(ctx, group, joined.Generation, joined.MemberID, time.Second)
		if errors.Is(err, kafka.ErrRebalanceInProgress) {
			break
		}
		if err != nil {
			t.Fatalf("heartbeat while the second member joins: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	again, err := join(first, joined.MemberID)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-secondJoined; err != nil {
		t.Fatal(err)
	}
	if again.Generation != 2 || len(again.Members) != 2 {
		t.Fatalf("joined again %+v, want generation 2 with two members", again)
	}
	leaveCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := first.LeaveGroup(leaveCtx, group, joined.MemberID); err != nil {
		t.Fatalf("leave: %v", err)
	}
	if err := first.LeaveGroup(leaveCtx, group, "nobody"); err != nil {
		t.Fatalf("leave of a member the coordinator does not know: %v, want none", err)
	}
}

// TestMemberClientGivenID has a new member's join fail after the
// coordinator gave it an id (MEMBER_ID_REQUIRED, then a join that waits for
// a silent member longer than the caller does): the error carries the id,
// and the member joining again with it is the one member the coordinator
// holds for it, not a second.
func TestMemberClientGivenID(t *testing.T) {
	client := groupClient(t, 1)
	const group = "g"
	join := func(ctx context.Context, m *kafka.MemberClient, id string) (*kafka.Joined, error) {
		return m.JoinGroup(ctx, kafka.JoinRequest{Group: group, MemberID: id, Protocol: "p",
			Subscription:   kafka.Subscription{Topics: []string{"t"}},
			SessionTimeout: time.Second, RebalanceTimeout: time.Second})
	}
	// A member that joins, syncs and then says nothing more, as a paused
	// agent would: a rebalance waits for it until its session expires.
	silent := client.MemberClient("silent")
	defer silent.Close()
	joined, err := join(t.Context(), silent, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := silent.SyncGroup(t.Context(), group, joined.Generation, joined.MemberID, time.Second, nil); err != nil {
		t.Fatal(err)
	}

	m := client.MemberClient("agent")
	defer m.Close()
	short, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err = join(short, m, "")
	id := kafka.GivenMemberID(err)
	if err == nil || id == "" {
		t.Fatalf("a join that gave up waiting: %v, with the given member id %q; want an error carrying the id", err, id)
	}
	again, err := join(t.Context(), m, id)
	if err != nil {
		t.Fatal(err)
	}
	if again.MemberID != id || len(again.Members) != 1 || again.Members[0].ID != id {
		t.Errorf("joined again as %s with members %+v; want the given id %s the only member", again.MemberID, again.Members, id)
	}
	if got := kafka.GivenMemberID(errors.New("other")); got != "" {
		t.Errorf("GivenMemberID of another error = %q", got)
	}
}

// groupClient returns a client of a new kfake cluster with topic "t" of
// partitions, whose coordinator takes sessions from 100 ms; both close when
// the test ends.
func groupClient(t *testing.T, partitions int32) *kafka.Client {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, "t"), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	client, err := kafka.NewClient(&spec.Connection{Name: "c", BootstrapServers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	return client
}
