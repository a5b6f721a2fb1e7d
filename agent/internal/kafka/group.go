package kafka

import (
	"context"
	"errors"
	"fmt"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/describegroups"
)

// This file reads consumer groups without joining them: the offsets a group
// committed (OffsetFetch) and its members (DescribeGroups). Both requests
// go to the group's coordinator, which kafka-go's transport finds.

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
// not exist. It sees members of groups that use the classic rebalance
// protocol, which DescribeGroups answers for; a group of consumers that set
// group.protocol=consumer (KIP-848) shows no members here.
//
// The request is sent with kafka-go's protocol package rather than its
// DescribeGroups, which fails on members whose metadata is not a consumer's
// (Kafka Connect workers, for one): only the members' ids, client ids and
// hosts are needed.
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
	return members, nil
}
