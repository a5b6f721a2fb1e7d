package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/describegroups"
)

// This file reads consumer groups without joining them: the offsets a group
// committed (OffsetFetch) and its members (DescribeGroups, and
// ConsumerGroupDescribe for the consumer rebalance protocol). Every request
// goes to the group's coordinator.

// GroupOffsets returns the next offsets group committed for tps; a
// partition the group committed no offset for is left out. A group that
// does not exist has committed nothing.
func (c *Client) GroupOffsets(ctx context.Context, group string, tps []TopicPartition) (map[TopicPartition]int64, error) {
	req := &kafkago.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{}}
	for _, tp := range tps {
		req.Topics[tp.Topic] = append(req.Topics[tp.Topic], tp.Partition)
	}
	res, err := c.admin.OffsetFetch(ctx, req)
	if err != nil {
		return nil, c.fail("", err, "read the committed offsets of group %q", group)
	}
	if errors.Is(res.Error, kafkago.GroupIdNotFound) { // some brokers say so rather than answer -1
		return map[TopicPartition]int64{}, nil
	}
	if res.Error != nil {
		return nil, fmt.Errorf("read the committed offsets of group %q: %w", group, res.Error)
	}
	out := map[TopicPartition]int64{}
	for topic, parts := range res.Topics {
		for _, p := range parts {
			if p.Error != nil {
				return nil, fmt.Errorf("read the committed offset of group %q for %s/%d: %w", group, topic, p.Partition, p.Error)
			}
			if p.CommittedOffset >= 0 { // -1: nothing committed
				out[TopicPartition{Topic: topic, Partition: p.Partition}] = p.CommittedOffset
			}
		}
	}
	return out, nil
}

// GroupMember is a member of a consumer group, as DescribeGroups reports
// it.
type GroupMember struct {
	// ID is the member id the coordinator gave it.
	ID string
	// ClientID is the client.id the member sent.
	ClientID string
	// Host is the address the member connected from.
	Host string
}

// String returns "client id (member id) from host".
func (m GroupMember) String() string {
	return fmt.Sprintf("%s (member %s) from %s", m.ClientID, m.ID, m.Host)
}

// GroupMembers returns the members of group, none when it has none or does
// not exist: those of the classic rebalance protocol, which DescribeGroups
// reports, and those of the consumer rebalance protocol (KIP-848, consumers
// with group.protocol=consumer), which only ConsumerGroupDescribe does.
//
// DescribeGroups is sent with kafka-go's protocol package rather than its
// DescribeGroups, which fails on members whose metadata is not a
// consumer's (Kafka Connect workers, for one): only the members' ids,
// client ids and hosts are needed.
func (c *Client) GroupMembers(ctx context.Context, group string) ([]GroupMember, error) {
	ctx, cancel := context.WithTimeout(ctx, c.admin.Timeout)
	defer cancel()
	msg, err := c.admin.Transport.RoundTrip(ctx, c.admin.Addr, &describegroups.Request{Groups: []string{group}})
	if err != nil {
		return nil, c.fail("", err, "describe group %q", group)
	}
	res, ok := msg.(*describegroups.Response)
	if !ok {
		return nil, fmt.Errorf("describe group %q: unexpected answer %T", group, msg)
	}
	var members []GroupMember
	for _, g := range res.Groups {
		if g.GroupID != group {
			continue
		}
		if err := kafkago.Error(g.ErrorCode); g.ErrorCode != 0 {
			if errors.Is(err, kafkago.GroupIdNotFound) {
				return nil, nil
			}
			return nil, fmt.Errorf("describe group %q: %w", group, err)
		}
		for _, m := range g.Members {
			members = append(members, GroupMember{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost})
		}
	}
	if len(members) > 0 {
		return members, nil
	}
	return c.consumerGroupMembers(ctx, group)
}

// ConsumerGroupDescribe (KIP-848) is not in kafka-go; v0 is encoded here.
const (
	apiConsumerGroupDescribe     = 69
	consumerGroupDescribeVersion = 0
)

// consumerGroupMembers returns the members group has under the consumer
// rebalance protocol, asking its coordinator with ConsumerGroupDescribe;
// none when the coordinator does not know that API (Kafka before 3.7 has
// no such groups) or the group is not one of them.
func (c *Client) consumerGroupMembers(ctx context.Context, group string) ([]GroupMember, error) {
	addr, ok, err := c.coordinatorWith(ctx, group, apiConsumerGroupDescribe, consumerGroupDescribeVersion)
	if err != nil || !ok {
		return nil, err
	}
	conn, err := c.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, c.fail(addr, err, "connect to %s, the coordinator of group %q", addr, group)
	}
	defer conn.Close()
	const correlationID = 1
	body, err := exchange(ctx, conn, encodeConsumerGroupDescribe(correlationID, group), correlationID, "consumer group describe", metadataTimeout)
	if err != nil {
		return nil, c.fail(addr, err, "describe consumer group %q at %s", group, addr)
	}
	return parseConsumerGroupDescribe(body, group)
}

// coordinatorWith returns the address of group's coordinator, and whether
// it knows version of API apiKey.
func (c *Client) coordinatorWith(ctx context.Context, group string, apiKey, version int) (addr string, ok bool, err error) {
	found, err := c.admin.FindCoordinator(ctx, &kafkago.FindCoordinatorRequest{Key: group, KeyType: kafkago.CoordinatorKeyTypeConsumer})
	if err != nil {
		return "", false, c.fail("", err, "find the coordinator of group %q", group)
	}
	if found.Error != nil {
		return "", false, fmt.Errorf("find the coordinator of group %q: %w", group, found.Error)
	}
	addr = net.JoinHostPort(found.Coordinator.Host, strconv.Itoa(found.Coordinator.Port))
	ok, err = c.brokerKnows(ctx, addr, apiKey, version)
	if err != nil {
		return "", false, fmt.Errorf("the coordinator of group %q: %w", group, err)
	}
	return addr, ok, nil
}

// brokerKnows reports whether the broker at addr knows version of API
// apiKey, asking it for its API versions.
func (c *Client) brokerKnows(ctx context.Context, addr string, apiKey, version int) (bool, error) {
	versions, err := c.admin.ApiVersions(ctx, &kafkago.ApiVersionsRequest{Addr: kafkago.TCP(addr)})
	if err != nil {
		return false, c.fail(addr, err, "ask %s for its API versions", addr)
	}
	return slices.ContainsFunc(versions.ApiKeys, func(k kafkago.ApiVersionsResponseApiKey) bool {
		return k.ApiKey == apiKey && k.MinVersion <= version && version <= k.MaxVersion
	}), nil
}

// encodeConsumerGroupDescribe returns a whole ConsumerGroupDescribe v0
// request frame for group.
func encodeConsumerGroupDescribe(correlationID int32, group string) []byte {
	b := appendRequestHeader(make([]byte, 0, 64), apiConsumerGroupDescribe, consumerGroupDescribeVersion, correlationID, clientID)
	b = binary.AppendUvarint(b, 2) // one group id
	b = binary.AppendUvarint(b, uint64(len(group)+1))
	b = append(b, group...)
	b = append(b, 0, 0) // include authorized operations: false; tagged fields
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// parseConsumerGroupDescribe decodes a ConsumerGroupDescribe v0 response
// body (after the correlation id) and returns the members of group; none
// when the group is not a consumer-protocol group.
func parseConsumerGroupDescribe(body []byte, group string) ([]GroupMember, error) {
	d := compactDecoder{wireDecoder{buf: body}}
	d.tags()  // response header tagged fields
	d.int32() // throttle time
	var members []GroupMember
	var groupErr error
	for range d.compactLen() {
		code := d.int16()
		message := d.compactString()
		id := d.compactString()
		d.compactString() // state
		d.int32()         // group epoch
		d.int32()         // assignment epoch
		d.compactString() // assignor name
		var found []GroupMember
		for range d.compactLen() {
			m := GroupMember{ID: d.compactString()}
			d.compactString() // instance id
			d.compactString() // rack id
			d.int32()         // member epoch
			m.ClientID = d.compactString()
			m.Host = d.compactString()
			for range d.compactLen() { // subscribed topic names
				d.compactString()
			}
			d.compactString() // subscribed topic regex
			for range 2 {     // assignment, target assignment
				for range d.compactLen() { // topic partitions
					d.take(16)        // topic id
					d.compactString() // topic name
					for range d.compactLen() {
						d.int32()
					}
					d.tags()
				}
				d.tags()
			}
			d.tags()
			found = append(found, m)
		}
		d.int32() // authorized operations
		d.tags()
		switch {
		case id != group:
		case code == 0:
			members = found
		case errors.Is(kafkago.Error(code), kafkago.GroupIdNotFound):
			// not a consumer-protocol group (or none at all)
		default:
			groupErr = fmt.Errorf("describe consumer group %q: %w: %s", group, kafkago.Error(code), message)
		}
	}
	d.tags()
	if d.err != nil {
		return nil, fmt.Errorf("decode the consumer group describe response: %w", d.err)
	}
	return members, groupErr
}
