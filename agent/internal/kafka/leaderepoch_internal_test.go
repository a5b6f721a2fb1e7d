package kafka

import (
	"errors"
	"testing"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The OffsetForLeaderEpoch v4 request the agent encodes is the one
// franz-go's kmsg reads: a consumer's (replica id -1), without fencing,
// asking for one partition's epoch.
func TestEncodeOffsetForLeaderEpoch(t *testing.T) {
	tp := TopicPartition{Topic: "events", Partition: 3}
	frame := encodeOffsetForLeaderEpoch(9, "me", tp, 7)
	// size 4, key 2, version 2, correlation id 4, client id 2+n, tags 1
	head := frame[4 : 4+2+2+4]
	if key, version := int16(head[0])<<8|int16(head[1]), int16(head[2])<<8|int16(head[3]); key != 23 || version != 4 {
		t.Fatalf("api key %d version %d, want 23 and 4", key, version)
	}
	req := kmsg.NewOffsetForLeaderEpochRequest()
	req.Version = 4
	if err := req.ReadFrom(frame[4+2+2+4+2+len("me")+1:]); err != nil {
		t.Fatal(err)
	}
	if req.ReplicaID != -1 || len(req.Topics) != 1 || req.Topics[0].Topic != "events" || len(req.Topics[0].Partitions) != 1 {
		t.Fatalf("kmsg reads %+v", req)
	}
	if p := req.Topics[0].Partitions[0]; p.Partition != 3 || p.CurrentLeaderEpoch != -1 || p.LeaderEpoch != 7 {
		t.Errorf("partition %+v, want 3 with leader epoch 7 and current leader epoch -1", p)
	}
}

// offsetForLeaderEpochBody encodes a v4 response, with kmsg, of one
// partition of topic "events" as parseOffsetForLeaderEpoch gets it:
// response header tagged fields, then the body.
func offsetForLeaderEpochBody(partition, epoch int32, end int64, code int16) []byte {
	res := kmsg.NewOffsetForLeaderEpochResponse()
	res.Version = 4
	other := kmsg.NewOffsetForLeaderEpochResponseTopic()
	other.Topic = "other"
	other.Partitions = []kmsg.OffsetForLeaderEpochResponseTopicPartition{{Partition: partition, LeaderEpoch: 1, EndOffset: 1}}
	topic := kmsg.NewOffsetForLeaderEpochResponseTopic()
	topic.Topic = "events"
	p := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
	p.Partition, p.LeaderEpoch, p.EndOffset, p.ErrorCode = partition, epoch, end, code
	topic.Partitions = []kmsg.OffsetForLeaderEpochResponseTopicPartition{p}
	res.Topics = []kmsg.OffsetForLeaderEpochResponseTopic{other, topic}
	return res.AppendTo([]byte{0})
}

// The end offset is read from a kmsg response, of the partition asked
// about; an epoch the leader does not know is -1, a partition error is an
// error.
func TestParseOffsetForLeaderEpoch(t *testing.T) {
	tp := TopicPartition{Topic: "events", Partition: 3}
	if end, err := parseOffsetForLeaderEpoch(offsetForLeaderEpochBody(3, 7, 120, 0), tp, 7); err != nil || end != 120 {
		t.Errorf("end %d, %v; want 120", end, err)
	}
	if end, err := parseOffsetForLeaderEpoch(offsetForLeaderEpochBody(3, -1, -1, 0), tp, 9); err != nil || end != -1 {
		t.Errorf("an unknown epoch: end %d, %v; want -1", end, err)
	}
	code := kafkago.NotLeaderForPartition
	if _, err := parseOffsetForLeaderEpoch(offsetForLeaderEpochBody(3, -1, -1, int16(code)), tp, 7); !errors.Is(err, code) {
		t.Errorf("a partition error: %v, want %v", err, code)
	}
	if _, err := parseOffsetForLeaderEpoch(offsetForLeaderEpochBody(4, 7, 120, 0), tp, 7); err == nil {
		t.Error("a response without the partition: no error")
	}
	body := offsetForLeaderEpochBody(3, 7, 120, 0)
	if _, err := parseOffsetForLeaderEpoch(body[:len(body)-5], tp, 7); err == nil {
		t.Error("a short response: no error")
	}
}
