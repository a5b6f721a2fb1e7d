package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumer"
)

// This file joins consumer groups as a member, with the classic group
// protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), for the agents of
// a cluster sharing the partitions of a pipeline. The protocol type is
// "consumer" and the members' subscriptions and assignments are in the
// consumer protocol's format (kafka-go's protocol/consumer), so Kafka's own
// tools (kafka-consumer-groups --describe) show every member and what it
// reads.
//
// The requests are encoded here, in their flexible versions, rather than
// sent with kafka-go's Client: kafka-go v0.4 decodes the Heartbeat and
// LeaveGroup responses of versions 1 and later with the error code and the
// throttle time swapped (so a heartbeat never sees REBALANCE_IN_PROGRESS),
// and the SyncGroup response of version 5 with classic strings where Kafka
// sends compact ones.

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

// The group APIs and the (flexible) versions sent.
const (
	apiJoinGroup      = 11
	joinGroupVersion  = 6
	apiHeartbeat      = 12
	heartbeatVersion  = 4
	apiLeaveGroup     = 13
	leaveGroupVersion = 4
	apiSyncGroup      = 14
	syncGroupVersion  = 4
)

// MemberClient speaks the group protocol for one member of one group. Its
// requests go to the group's coordinator over one connection of its own,
// with the connection's TLS and SASL like every other connection of its
// [Client], under a client.id of its own. It is safe for concurrent use;
// its requests are sent one at a time (a JoinGroup waiting for a
// rebalance holds the connection, as the broker answers a connection's
// requests in order).
type MemberClient struct {
	c        *Client
	clientID string

	mu sync.Mutex
	// conn is the connection to the coordinator, nil before the first
	// request and after a failure (the next request finds the
	// coordinator again).
	conn          net.Conn
	correlationID int32
}

// MemberClient returns a client for joining a group whose requests carry
// clientID (the agent's name, so that the group's description names the
// agent). Close it when done.
func (c *Client) MemberClient(clientID string) *MemberClient {
	return &MemberClient{c: c, clientID: clientID}
}

// Close closes the member client's connection.
func (m *MemberClient) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closeConn()
}

func (m *MemberClient) closeConn() {
	if m.conn != nil {
		_ = m.conn.Close()
		m.conn = nil
	}
}

// coordinatorErrors are the error codes after which the member must find
// the group's coordinator again.
var coordinatorErrors = []error{kafkago.NotCoordinatorForGroup, kafkago.GroupCoordinatorNotAvailable}

// roundTrip sends a request of API apiKey at version to group's
// coordinator, its body appended by body, and waits up to timeout for the
// answer; parse reads the response body after its throttle time and error
// code, up to its last tagged fields. It returns the response's error code
// as an error (after parse, which also runs when there is one); what names
// the request in errors. A failure, and an answer that the broker is not
// the coordinator, drops the connection.
func (m *MemberClient) roundTrip(ctx context.Context, group, what string, apiKey, version int16, timeout time.Duration,
	body func(b []byte) []byte, parse func(d *compactDecoder) error,
) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conn == nil {
		addr, ok, err := m.c.coordinatorWith(ctx, group, apiJoinGroup, joinGroupVersion)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("the coordinator of group %q, %s, does not know JoinGroup v%d: the brokers must run Kafka 2.4 or later",
				group, addr, joinGroupVersion)
		}
		if m.conn, err = m.c.dial(ctx, "tcp", addr); err != nil {
			return m.c.fail(addr, err, "connect to %s, the coordinator of group %q", addr, group)
		}
	}
	m.correlationID++
	frame := body(appendRequestHeader(make([]byte, 0, 256), apiKey, version, m.correlationID, m.clientID))
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	res, err := exchange(ctx, m.conn, frame, m.correlationID, what, timeout)
	if err == nil {
		d := compactDecoder{wireDecoder{buf: res}}
		d.tags()  // response header tagged fields
		d.int32() // throttle time
		code := d.int16()
		if parse != nil {
			err = parse(&d)
		}
		d.tags()
		switch {
		case err != nil: // parse's
		case d.err != nil:
			err = fmt.Errorf("decode the %s response: %w", what, d.err)
		case code != 0:
			err = kafkago.Error(code)
		}
	}
	if err != nil && (!isKafkaError(err) || slices.ContainsFunc(coordinatorErrors, func(e error) bool { return errors.Is(err, e) })) {
		m.closeConn()
	}
	return err
}

// isKafkaError reports whether err holds an error code a broker answered.
func isKafkaError(err error) bool {
	var ke kafkago.Error
	return errors.As(err, &ke)
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
// the coordinator formed the generation, up to the rebalance timeout and
// the session timeout. A coordinator that wants new members to ask again
// with the id it gave (MEMBER_ID_REQUIRED) is asked again here; when that
// second join fails, [GivenMemberID] returns the id from its error. Its
// error wraps the coordinator's error code, such as [ErrUnknownMemberID].
func (m *MemberClient) JoinGroup(ctx context.Context, req JoinRequest) (*Joined, error) {
	sub := consumer.Subscription{Version: consumer.MaxVersionSupported, Topics: req.Subscription.Topics,
		UserData: req.Subscription.UserData, OwnedPartitions: toConsumer(req.Subscription.Owned)}
	metadata, err := protocol.Marshal(consumer.MaxVersionSupported, sub)
	if err != nil {
		return nil, fmt.Errorf("join group %q: encode the subscription: %w", req.Group, err)
	}
	memberID := req.MemberID
	for range 2 { // the second time with the id MEMBER_ID_REQUIRED gave
		var joined Joined
		err := m.roundTrip(ctx, req.Group, "join group", apiJoinGroup, joinGroupVersion, req.RebalanceTimeout+req.SessionTimeout,
			func(b []byte) []byte {
				b = appendCompactString(b, req.Group)
				b = binary.BigEndian.AppendUint32(b, uint32(req.SessionTimeout.Milliseconds()))
				b = binary.BigEndian.AppendUint32(b, uint32(req.RebalanceTimeout.Milliseconds()))
				b = appendCompactString(b, memberID)
				b = append(b, 0) // group instance id: null (no static membership)
				b = appendCompactString(b, "consumer")
				b = append(b, 2) // one protocol
				b = appendCompactString(b, req.Protocol)
				b = appendCompactString(b, string(metadata))
				return append(b, 0, 0) // protocol's tagged fields, request's tagged fields
			},
			func(d *compactDecoder) error {
				joined.Generation = int(d.int32())
				d.compactString() // protocol name
				joined.LeaderID = d.compactString()
				joined.MemberID = d.compactString()
				for range d.compactLen() {
					jm := JoinedMember{ID: d.compactString()}
					d.compactString() // group instance id
					meta := d.compactString()
					d.tags()
					var sub consumer.Subscription
					if d.err == nil {
						if err := protocol.Unmarshal([]byte(meta), consumer.MaxVersionSupported, &sub); err != nil {
							return fmt.Errorf("decode the subscription of member %s: %w", jm.ID, err)
						}
					}
					jm.Subscription = Subscription{Topics: sub.Topics, Owned: consumerPartitions(sub.OwnedPartitions), UserData: sub.UserData}
					joined.Members = append(joined.Members, jm)
				}
				return nil
			})
		if errors.Is(err, kafkago.MemberIDRequired) && memberID == "" {
			memberID = joined.MemberID
			continue
		}
		if err != nil {
			err = m.c.fail("", err, "join group %q", req.Group)
			if memberID != req.MemberID && !errors.Is(err, ErrUnknownMemberID) {
				err = &givenIDError{id: memberID, err: err}
			}
			return nil, err
		}
		return &joined, nil
	}
	return nil, fmt.Errorf("join group %q: the coordinator asked twice for a member id", req.Group)
}

// givenIDError is the error of a join that failed after the coordinator
// gave the member an id: see [GivenMemberID].
type givenIDError struct {
	id  string
	err error
}

func (e *givenIDError) Error() string { return e.err.Error() }
func (e *givenIDError) Unwrap() error { return e.err }

// GivenMemberID returns the member id the coordinator gave a new member
// whose JoinGroup then failed (its answer did not come in time, its
// connection broke), or "" when it gave none. The member must join again
// with that id: the coordinator counts the join it holds as a member of
// the group until its session expires, and a rebalance waits for every
// member; a member that joined again without the id would add one more
// such ghost at each try, and under load (joins that wait longer than
// their timeout) the group would never finish rebalancing.
func GivenMemberID(err error) string {
	var e *givenIDError
	if errors.As(err, &e) {
		return e.id
	}
	return ""
}

// SyncGroup ends the join of generation: the leader sends every member's
// partitions in assignments (by member id), the others none; every member
// gets its own partitions back, sorted. Its error wraps the coordinator's
// error code, such as [ErrRebalanceInProgress].
func (m *MemberClient) SyncGroup(ctx context.Context, group string, generation int, memberID string, timeout time.Duration,
	assignments map[string][]TopicPartition,
) ([]TopicPartition, error) {
	encoded := make(map[string][]byte, len(assignments))
	for id, tps := range assignments {
		a := consumer.Assignment{Version: consumer.MaxVersionSupported, AssignedPartitions: toConsumer(tps)}
		b, err := protocol.Marshal(consumer.MaxVersionSupported, a)
		if err != nil {
			return nil, fmt.Errorf("sync group %q: encode the assignment of %s: %w", group, id, err)
		}
		encoded[id] = b
	}
	var assigned []TopicPartition
	err := m.roundTrip(ctx, group, "sync group", apiSyncGroup, syncGroupVersion, timeout,
		func(b []byte) []byte {
			b = appendCompactString(b, group)
			b = binary.BigEndian.AppendUint32(b, uint32(generation))
			b = appendCompactString(b, memberID)
			b = append(b, 0) // group instance id: null
			b = binary.AppendUvarint(b, uint64(len(encoded)+1))
			for _, id := range slices.Sorted(maps.Keys(encoded)) {
				b = appendCompactString(b, id)
				b = appendCompactString(b, string(encoded[id]))
				b = append(b, 0) // tagged fields
			}
			return append(b, 0) // tagged fields
		},
		func(d *compactDecoder) error {
			// Empty when the leader assigned nothing, as Kafka answers a
			// member the leader left out.
			if raw := d.compactString(); raw != "" && d.err == nil {
				var a consumer.Assignment
				if err := protocol.Unmarshal([]byte(raw), consumer.MaxVersionSupported, &a); err != nil {
					return fmt.Errorf("decode the assignment: %w", err)
				}
				assigned = consumerPartitions(a.AssignedPartitions)
			}
			return nil
		})
	if err != nil {
		return nil, m.c.fail("", err, "sync group %q", group)
	}
	return assigned, nil
}

// Heartbeat tells group's coordinator that the member is alive in
// generation, waiting up to timeout for the answer. Its error wraps the
// coordinator's error code: [ErrRebalanceInProgress] when the member must
// join again, [ErrUnknownMemberID] or [ErrIllegalGeneration] when it is no
// longer a member of the generation.
func (m *MemberClient) Heartbeat(ctx context.Context, group string, generation int, memberID string, timeout time.Duration) error {
	err := m.roundTrip(ctx, group, "heartbeat", apiHeartbeat, heartbeatVersion, timeout,
		func(b []byte) []byte {
			b = appendCompactString(b, group)
			b = binary.BigEndian.AppendUint32(b, uint32(generation))
			b = appendCompactString(b, memberID)
			return append(b, 0, 0) // group instance id: null; tagged fields
		}, nil)
	if err != nil {
		return m.c.fail("", err, "heartbeat to group %q", group)
	}
	return nil
}

// LeaveGroup removes the member memberID from group at once, rather than
// when its session times out, so the group rebalances without waiting. A
// member the coordinator no longer knows has left already.
func (m *MemberClient) LeaveGroup(ctx context.Context, group, memberID string) error {
	err := m.roundTrip(ctx, group, "leave group", apiLeaveGroup, leaveGroupVersion, metadataTimeout,
		func(b []byte) []byte {
			b = appendCompactString(b, group)
			b = append(b, 2) // one member
			b = appendCompactString(b, memberID)
			return append(b, 0, 0, 0) // group instance id: null; member's tagged fields; tagged fields
		},
		func(d *compactDecoder) error {
			for range d.compactLen() {
				d.compactString() // member id
				d.compactString() // group instance id
				if code := d.int16(); code != 0 && !errors.Is(kafkago.Error(code), kafkago.UnknownMemberId) {
					return kafkago.Error(code)
				}
				d.tags()
			}
			return nil
		})
	if errors.Is(err, kafkago.UnknownMemberId) { // it has left already
		err = nil
	}
	if err != nil {
		return m.c.fail("", err, "leave group %q", group)
	}
	return nil
}

// consumerPartitions returns the partitions of the consumer protocol's
// topic partitions, sorted.
func consumerPartitions(tps []consumer.TopicPartition) []TopicPartition {
	var out []TopicPartition
	for _, t := range tps {
		for _, p := range t.Partitions {
			out = append(out, TopicPartition{Topic: t.Topic, Partition: int(p)})
		}
	}
	slices.SortFunc(out, CompareTopicPartitions)
	return out
}

// toConsumer returns tps, sorted, as the consumer protocol's topic
// partitions.
func toConsumer(tps []TopicPartition) []consumer.TopicPartition {
	var out []consumer.TopicPartition
	for _, tp := range slices.SortedFunc(slices.Values(tps), CompareTopicPartitions) {
		if len(out) == 0 || out[len(out)-1].Topic != tp.Topic {
			out = append(out, consumer.TopicPartition{Topic: tp.Topic})
		}
		last := &out[len(out)-1]
		last.Partitions = append(last.Partitions, int32(tp.Partition))
	}
	return out
}
