// Package kafka wires the agent to a Kafka cluster with segmentio/kafka-go:
// dialing with the connection's TLS and SASL (PLAIN, SCRAM, OAUTHBEARER,
// AWS_MSK_IAM; built once per connection and used by every connection the
// agent opens to a broker), topic and partition discovery, offset look-ups
// (by position and by time), per-partition fetching, committing offsets to
// a consumer group for lag tools, reading a group's committed offsets
// and members without joining it, joining a group as a member (the
// agents of a cluster share a pipeline's partitions so, see
// [MemberClient]), and writing records for Kafka sinks, in
// transactions or not ([Producer]). Failures whose cause is known (refused credentials, an untrusted
// certificate) come back as a [*ConnectionError] naming the connection and
// the attribute to fix. The table's own log, not Kafka, is the source of
// truth for a table's offsets; a Kafka sink keeps its source position in
// its consumer group, committed in the transaction of its records.
package kafka

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// clientID is the client.id the agent sends with every request.
const clientID = "tributary-agent"

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	Topic     string
	Partition int
}

// String returns "topic/partition".
func (tp TopicPartition) String() string { return fmt.Sprintf("%s/%d", tp.Topic, tp.Partition) }

// CompareTopicPartitions orders partitions by topic, then by number.
func CompareTopicPartitions(a, b TopicPartition) int {
	return cmp.Or(strings.Compare(a.Topic, b.Topic), a.Partition-b.Partition)
}

// Client reaches one cluster described by a [spec.Connection]. It is safe
// for concurrent use.
type Client struct {
	// name, mechanism and username are the connection's, for messages.
	name, mechanism, username string
	brokers                   []string
	dialer                    *net.Dialer
	// tls is the TLS configuration of SSL and SASL_SSL, nil for none.
	tls *tls.Config
	// sasl is the SASL mechanism, nil for none.
	sasl  sasl.Mechanism
	admin *kafkago.Client
	// epochLookup remembers, per broker address, whether the broker
	// answers OffsetForLeaderEpoch (see [Client.knowsEpochLookup]).
	epochLookup sync.Map
}

// NewClient returns a client for conn, which must be valid. It builds the
// connection's TLS configuration and SASL mechanism, which every
// connection to a broker uses, but does not connect until used. Its error
// names the connection.
func NewClient(conn *spec.Connection) (*Client, error) {
	tlsConfig, err := conn.TLSConfig()
	if err != nil {
		return nil, fmt.Errorf("connection %q: %w", conn.Name, err)
	}
	mech, err := newMechanism(context.Background(), conn)
	if err != nil {
		return nil, fmt.Errorf("connection %q: %w", conn.Name, err)
	}
	c := &Client{
		name:    conn.Name,
		brokers: slices.Clone(conn.BootstrapServers),
		dialer:  &net.Dialer{Timeout: 10 * time.Second},
		tls:     tlsConfig,
		sasl:    mech,
	}
	if s := conn.SASL; s != nil {
		c.mechanism, c.username = s.Mechanism, s.Username
	}
	// TLS and SASL are set up by dial, not by the Transport's TLS and SASL
	// fields, so that the admin requests and the agent's own requests
	// share one path whose errors name the broker.
	transport := &kafkago.Transport{Dial: c.dial, DialTimeout: dialTimeout, ClientID: clientID, MetadataTTL: 5 * time.Second}
	c.admin = &kafkago.Client{Addr: kafkago.TCP(conn.BootstrapServers...), Timeout: 15 * time.Second, Transport: transport}
	return c, nil
}

// Close releases the client's pooled connections and its metadata
// refresher. Fetchers started from it must have returned.
func (c *Client) Close() {
	c.admin.Transport.(*kafkago.Transport).CloseIdleConnections()
}

// Partitions returns every partition of the topics the options select:
// the listed topics, or every non-internal topic matching the pattern, or
// the assigned partitions. A listed or assigned topic that does not exist,
// and an assigned partition that does not exist, is an error naming it; a
// pattern that matches nothing yet returns no partitions.
func (c *Client) Partitions(ctx context.Context, ko *spec.KafkaOptions) ([]TopicPartition, error) {
	var pattern *regexp.Regexp
	req := &kafkago.MetadataRequest{Topics: ko.Topics}
	switch {
	case len(ko.Assign) > 0:
		req.Topics = slices.Sorted(maps.Keys(ko.Assign))
	case ko.TopicPattern != "":
		var err error
		if pattern, err = spec.CompileTopicPattern(ko.TopicPattern); err != nil {
			return nil, fmt.Errorf("compile topic_pattern: %w", err)
		}
		req.Topics = nil // all topics
	}
	md, err := c.admin.Metadata(ctx, req)
	if err != nil {
		return nil, c.fail("", err, "read metadata from %s", strings.Join(c.brokers, ","))
	}
	var tps []TopicPartition
	for _, t := range md.Topics {
		if pattern != nil && (t.Internal || !pattern.MatchString(t.Name)) {
			continue
		}
		if t.Error != nil {
			if errors.Is(t.Error, kafkago.UnknownTopicOrPartition) {
				return nil, fmt.Errorf("topic %q does not exist (create it, or enable auto-creation on the brokers)", t.Name)
			}
			return nil, fmt.Errorf("read metadata of topic %q: %w", t.Name, t.Error)
		}
		if assigned, ok := ko.Assign[t.Name]; ok {
			found, err := assignedPartitions(t, assigned)
			if err != nil {
				return nil, err
			}
			tps = append(tps, found...)
			continue
		}
		for _, p := range t.Partitions {
			tps = append(tps, TopicPartition{Topic: t.Name, Partition: p.ID})
		}
	}
	slices.SortFunc(tps, CompareTopicPartitions)
	return tps, nil
}

// assignedPartitions returns the partitions of topic t that assign lists,
// each once; one that t does not have is an error naming it.
func assignedPartitions(t kafkago.Topic, assign []int) ([]TopicPartition, error) {
	var tps []TopicPartition
	for _, id := range assign {
		if !slices.ContainsFunc(t.Partitions, func(p kafkago.Partition) bool { return p.ID == id }) {
			return nil, fmt.Errorf("assign: topic %q has no partition %d (it has %d partitions, 0 to %d); "+
				"remove the partition from assign, or add partitions to the topic", t.Name, id, len(t.Partitions), len(t.Partitions)-1)
		}
		tp := TopicPartition{Topic: t.Name, Partition: id}
		if !slices.Contains(tps, tp) {
			tps = append(tps, tp)
		}
	}
	return tps, nil
}

// Offset positions for [Client.Offsets].
const (
	// Earliest asks for the first offset still in the log.
	Earliest = kafkago.FirstOffset
	// Latest asks for the high watermark: the offset the next record gets.
	Latest = kafkago.LastOffset
	// LastStable asks for the last stable offset: the first offset of the
	// oldest open transaction, or the high watermark when none is open. It
	// is where a read_committed consumer's "latest" is.
	LastStable = -100
)

// Offsets returns the Earliest, Latest or LastStable offset of each
// partition.
func (c *Client) Offsets(ctx context.Context, tps []TopicPartition, which int64) (map[TopicPartition]int64, error) {
	ask := make(map[TopicPartition]int64, len(tps))
	isolation := kafkago.ReadUncommitted
	ts := which
	if which == LastStable {
		ts, isolation = Latest, kafkago.ReadCommitted
	}
	for _, tp := range tps {
		ask[tp] = ts
	}
	return c.listOffsets(ctx, ask, isolation)
}

// OffsetsForTimes returns, for each partition of times, the offset of its
// first record whose timestamp is at or after the partition's time
// (milliseconds since the epoch), or -1 when it has no such record. Under
// readCommitted only records below the last stable offset count, as for a
// read_committed consumer.
func (c *Client) OffsetsForTimes(ctx context.Context, times map[TopicPartition]int64, readCommitted bool) (map[TopicPartition]int64, error) {
	for tp, ms := range times {
		if ms < 0 {
			return nil, fmt.Errorf("list offsets of %s at a time: %d is not milliseconds since the epoch", tp, ms)
		}
	}
	isolation := kafkago.ReadUncommitted
	if readCommitted {
		isolation = kafkago.ReadCommitted
	}
	return c.listOffsets(ctx, times, isolation)
}

// listOffsets sends one ListOffsets request asking, for each partition of
// ask, for the offset at its timestamp: Earliest, Latest or a time in
// milliseconds since the epoch.
func (c *Client) listOffsets(ctx context.Context, ask map[TopicPartition]int64, isolation kafkago.IsolationLevel) (map[TopicPartition]int64, error) {
	req := &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{}, IsolationLevel: isolation}
	for tp, ts := range ask {
		req.Topics[tp.Topic] = append(req.Topics[tp.Topic], kafkago.OffsetRequest{Partition: tp.Partition, Timestamp: ts})
	}
	res, err := c.admin.ListOffsets(ctx, req)
	if err != nil {
		return nil, c.fail("", err, "list offsets")
	}
	out := make(map[TopicPartition]int64, len(ask))
	for topic, parts := range res.Topics {
		for _, p := range parts {
			if p.Error != nil {
				return nil, fmt.Errorf("list offsets of %s/%d: %w", topic, p.Partition, p.Error)
			}
			tp := TopicPartition{Topic: topic, Partition: p.Partition}
			switch ask[tp] {
			case Earliest:
				out[tp] = p.FirstOffset
			case Latest:
				out[tp] = p.LastOffset
			default:
				// kafka-go files the answer to a time under the offset
				// found, -1 for none; one time was asked per partition.
				for off := range p.Offsets {
					out[tp] = off
				}
			}
		}
	}
	for tp := range ask {
		if _, ok := out[tp]; !ok {
			return nil, fmt.Errorf("list offsets: no answer for %s", tp)
		}
	}
	return out, nil
}

// CommitGroupOffsets records next offsets under the consumer group, as a
// standalone (non-member) commit, so that lag tools see the table's
// progress. The table's log stays the source of truth.
func (c *Client) CommitGroupOffsets(ctx context.Context, group string, offsets map[TopicPartition]int64) error {
	req := &kafkago.OffsetCommitRequest{GroupID: group, GenerationID: -1, Topics: map[string][]kafkago.OffsetCommit{}}
	for tp, off := range offsets {
		req.Topics[tp.Topic] = append(req.Topics[tp.Topic], kafkago.OffsetCommit{Partition: tp.Partition, Offset: off})
	}
	res, err := c.admin.OffsetCommit(ctx, req)
	if err != nil {
		return c.fail("", err, "commit offsets of group %q", group)
	}
	for topic, parts := range res.Topics {
		for _, p := range parts {
			if p.Error != nil {
				return fmt.Errorf("commit offset of group %q for %s/%d: %w", group, topic, p.Partition, p.Error)
			}
		}
	}
	return nil
}

// TopicIDs returns the id of each of topics (see [TopicInfo.ID]).
func (c *Client) TopicIDs(ctx context.Context, topics []string) (map[string]string, error) {
	md, err := c.topicMetadata(ctx, topics, &defaultSettings)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]string, len(md))
	for name, info := range md {
		ids[name] = info.ID
	}
	return ids, nil
}

// TopicsOf returns the topics of tps, each once.
func TopicsOf(tps []TopicPartition) []string {
	var topics []string
	for _, tp := range tps {
		if !slices.Contains(topics, tp.Topic) {
			topics = append(topics, tp.Topic)
		}
	}
	return topics
}

// dialLeader opens a connection to the leader of tp, found in the cluster's
// metadata, authenticated (see [Client.dial]), with the request settings
// rs, and returns it with the leader's address and the topic's id.
func (c *Client) dialLeader(ctx context.Context, tp TopicPartition, rs *requestSettings) (conn net.Conn, addr, topicID string, err error) {
	md, err := c.topicMetadata(ctx, []string{tp.Topic}, rs)
	if err != nil {
		return nil, "", "", c.fail("", err, "find the leader of %s", tp)
	}
	info := md[tp.Topic]
	addr, ok := info.Leaders[tp.Partition]
	if !ok {
		return nil, "", "", fmt.Errorf("find the leader of %s: %w", tp, kafkago.LeaderNotAvailable)
	}
	dctx, cancel := rs.dialContext(ctx)
	conn, err = c.dial(dctx, "tcp", addr)
	cancel()
	if err != nil {
		return nil, "", "", c.fail(addr, err, "connect to %s, the leader of %s", addr, tp)
	}
	return conn, addr, info.ID, nil
}
