package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// This file joins consumer groups as a member, with the classic group
// protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), for the agents of
// a cluster sharing the partitions of a pipeline. The protocol type is
// "consumer" and the members' subscriptions and assignments are in the
// consumer protocol's format, so Kafka's own tools (kafka-consumer-groups
// --describe) show every member and what it reads.

// Errors a group's coordinator answers that the member must act on; test
// them with errors.Is.
var (
	// ErrRebalanceInProgress: the group is rebalancing; the member must
	// join again (it keeps its partitions meanwhile).
	ErrRebalanceInProgress error = kafkago.RebalanceInProgress
	// ErrUnknownMemberID: the coordinator no longer knows the member (its
	// session expired, or it was removed); it must drop its partitions
	// and join as a new member.
	ErrUnknownMemberID error = kafkago.UnknownMemberId
	// ErrIllegalGeneration: the group moved on to a newer generation
	// without the member; what it was assigned may be someone else's now.
	ErrIllegalGeneration error = kafkago.IllegalGeneration
)

// MemberClient speaks the group protocol for one member. Its requests go
// to the group's coordinator over the connection's TLS and SASL, like
// every other request of its [Client], but under a client.id of its own.
// Each MemberClient has its own connections: a JoinGroup that waits for a
// rebalance holds its connection, and the brokers answer a connection's
// requests in order, so two groups' members must not share one.
type MemberClient struct {
	c  *Client
	kc *kafkago.Client
}

// MemberClient returns a client for joining groups whose requests carry
// clientID (the agent's name, so that the group's description names the
// agent). Close it when done.
func (c *Client) MemberClient(clientID string) *MemberClient {
	transport := &kafkago.Transport{Dial: c.dial, DialTimeout: dialTimeout, ClientID: clientID, MetadataTTL: 5 * time.Second}
	// No client-wide timeout: a JoinGroup waits for the rebalance, up to
	// the rebalance timeout; each call bounds itself through its context.
	return &MemberClient{c: c, kc: &kafkago.Client{Addr: kafkago.TCP(c.brokers...), Transport: transport}}
}

// Close releases the member client's connections.
func (m *MemberClient) Close() {
	m.kc.Transport.(*kafkago.Transport).CloseIdleConnections()
}

// Subscription is what a member tells its group when it joins.
type Subscription struct {
	// Topics are the topics it reads.
	Topics []string
	// Owned are the partitions it owns now (the cooperative protocol's
	// owned partitions), so the leader can keep them where they are.
	Owned []TopicPartition
	// UserData is the member's own data, for the leader's balancer.
	UserData []byte
}

// JoinedMember is a member of a group as its leader learns it.
type JoinedMember struct {
	// ID is the member id the coordinator gave it.
	ID string
	// Subscription is what it said when it joined.
	Subscription Subscription
}

// Joined is a generation of a group, as JoinGroup returns it.
type Joined struct {
	// MemberID is this member's id, to send with its next requests.
	MemberID string
	// Generation is the generation joined.
	Generation int
	// LeaderID is the member id of the group's leader, which assigns the
	// partitions.
	LeaderID string
	// Members are every member of the generation when this member is
	// the leader; none otherwise.
	Members []JoinedMember
}

// JoinRequest asks to join a group.
type JoinRequest struct {
	// Group is the group's id.
	Group string
	// MemberID is the member's id from an earlier join, "" to join as a
	// new member.
	MemberID string
	// Protocol names the assignment protocol of the group, the same for
	// every member.
	Protocol string
	// Subscription is what the member tells the leader.
	Subscription Subscription
	// SessionTimeout is how long the coordinator keeps the member
	// without a heartbeat; RebalanceTimeout, how long a rebalance waits
	// for the member to join again.
	SessionTimeout, RebalanceTimeout time.Duration
}

// JoinGroup joins req.Group (protocol type "consumer") and waits until
// the coordinator formed the generation. A coordinator that wants new
// members to ask again with the id it gave (MEMBER_ID_REQUIRED) is asked
// again here. Its error wraps the coordinator's error code, such as
// [ErrUnknownMemberID].
func (m *MemberClient) JoinGroup(ctx context.Context, req JoinRequest) (*Joined, error) {
	sub := kafkago.GroupProtocolSubscription{
		Topics:          req.Subscription.Topics,
		UserData:        req.Subscription.UserData,
		OwnedPartitions: partitionsByTopic(req.Subscription.Owned),
	}
	memberID := req.MemberID
	for range 2 { // the second time with the id MEMBER_ID_REQUIRED gave
		res, err := m.kc.JoinGroup(ctx, &kafkago.JoinGroupRequest{
			GroupID:          req.Group,
			SessionTimeout:   req.SessionTimeout,
			RebalanceTimeout: req.RebalanceTimeout,
			MemberID:         memberID,
			ProtocolType:     "consumer",
			Protocols:        []kafkago.GroupProtocol{{Name: req.Protocol, Metadata: sub}},
		})
		if err != nil {
			return nil, m.c.fail("", err, "join group %q", req.Group)
		}
		if errors.Is(res.Error, kafkago.MemberIDRequired) && memberID == "" {
			memberID = res.MemberID
			continue
		}
		if res.Error != nil {
			return nil, fmt.Errorf("join group %q: %w", req.Group, res.Error)
		}
		joined := &Joined{MemberID: res.MemberID, Generation: res.GenerationID, LeaderID: res.LeaderID}
		for _, member := range res.Members {
			joined.Members = append(joined.Members, JoinedMember{ID: member.ID, Subscription: Subscription{
				Topics:   member.Metadata.Topics,
				Owned:    topicPartitions(member.Metadata.OwnedPartitions),
				UserData: member.Metadata.UserData,
			}})
		}
		return joined, nil
	}
	return nil, fmt.Errorf("join group %q: the coordinator asked twice for a member id", req.Group)
}

// SyncGroup ends the join of generation: the leader sends every member's
// partitions in assignments (by member id), the others none; every member
// gets its own partitions back, sorted. Its error wraps the coordinator's
// error code, such as [ErrRebalanceInProgress].
func (m *MemberClient) SyncGroup(ctx context.Context, group string, generation int, memberID, protocol string,
	assignments map[string][]TopicPartition,
) ([]TopicPartition, error) {
	req := &kafkago.SyncGroupRequest{GroupID: group, GenerationID: generation, MemberID: memberID, ProtocolType: "consumer", ProtocolName: protocol}
	for _, id := range slices.Sorted(maps.Keys(assignments)) {
		req.Assignments = append(req.Assignments, kafkago.SyncGroupRequestAssignment{
			MemberID:   id,
			Assignment: kafkago.GroupProtocolAssignment{AssignedPartitions: partitionsByTopic(assignments[id])},
		})
	}
	res, err := m.kc.SyncGroup(ctx, req)
	if err != nil {
		return nil, m.c.fail("", err, "sync group %q", group)
	}
	if res.Error != nil {
		return nil, fmt.Errorf("sync group %q: %w", group, res.Error)
	}
	return topicPartitions(res.Assignment.AssignedPartitions), nil
}

// Heartbeat tells group's coordinator that the member is alive in
// generation. Its error wraps the coordinator's error code:
// [ErrRebalanceInProgress] when the member must join again,
// [ErrUnknownMemberID] or [ErrIllegalGeneration] when it is no longer a
// member of the generation.
func (m *MemberClient) Heartbeat(ctx context.Context, group string, generation int, memberID string) error {
	res, err := m.kc.Heartbeat(ctx, &kafkago.HeartbeatRequest{GroupID: group, GenerationID: int32(generation), MemberID: memberID})
	if err != nil {
		return m.c.fail("", err, "heartbeat to group %q", group)
	}
	if res.Error != nil {
		return fmt.Errorf("heartbeat to group %q: %w", group, res.Error)
	}
	return nil
}

// LeaveGroup removes the member memberID from group at once, rather than
// when its session times out, so the group rebalances without waiting. A
// member the coordinator no longer knows has left already.
func (m *MemberClient) LeaveGroup(ctx context.Context, group, memberID string) error {
	res, err := m.kc.LeaveGroup(ctx, &kafkago.LeaveGroupRequest{GroupID: group, Members: []kafkago.LeaveGroupRequestMember{{ID: memberID}}})
	if err != nil {
		return m.c.fail("", err, "leave group %q", group)
	}
	if res.Error != nil && !errors.Is(res.Error, kafkago.UnknownMemberId) {
		return fmt.Errorf("leave group %q: %w", group, res.Error)
	}
	for _, member := range res.Members {
		if member.Error != nil && !errors.Is(member.Error, kafkago.UnknownMemberId) {
			return fmt.Errorf("leave group %q: %w", group, member.Error)
		}
	}
	return nil
}

// partitionsByTopic returns tps as the partitions of each topic.
func partitionsByTopic(tps []TopicPartition) map[string][]int {
	out := make(map[string][]int)
	for _, tp := range tps {
		out[tp.Topic] = append(out[tp.Topic], tp.Partition)
	}
	return out
}

// topicPartitions returns the partitions of each topic of byTopic as one
// sorted list.
func topicPartitions(byTopic map[string][]int) []TopicPartition {
	var tps []TopicPartition
	for topic, parts := range byTopic {
		for _, p := range parts {
			tps = append(tps, TopicPartition{Topic: topic, Partition: p})
		}
	}
	slices.SortFunc(tps, CompareTopicPartitions)
	return tps
}
