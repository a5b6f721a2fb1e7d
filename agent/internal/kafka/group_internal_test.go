package kafka

import (
	"errors"
	"fmt"
	"testing"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerGroupDescribeBody encodes res, a ConsumerGroupDescribe v0
// response, with franz-go's kmsg, as parseConsumerGroupDescribe gets it:
// response header tagged fields, then the body.
func consumerGroupDescribeBody(res *kmsg.ConsumerGroupDescribeResponse) []byte {
	return res.AppendTo([]byte{0})
}

func TestParseConsumerGroupDescribe(t *testing.T) {
	member := func(id, client, host string) kmsg.ConsumerGroupDescribeResponseGroupMember {
		m := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		m.MemberID, m.ClientID, m.ClientHost = id, client, host
		m.SubscribedTopics = []string{"a", "b"}
		m.Assignment.TopicPartitions = []kmsg.AssignmentTopicPartition{{TopicID: [16]byte{1}, Topic: "a", Partitions: []int32{0, 2}}}
		m.TargetAssignment.TopicPartitions = []kmsg.AssignmentTopicPartition{{Topic: "b", Partitions: []int32{1}}}
		return m
	}
	res := kmsg.NewConsumerGroupDescribeResponse()
	other := kmsg.NewConsumerGroupDescribeResponseGroup()
	other.Group = "other"
	other.Members = []kmsg.ConsumerGroupDescribeResponseGroupMember{member("x", "x", "x")}
	g := kmsg.NewConsumerGroupDescribeResponseGroup()
	g.Group, g.State = "g", "Stable"
	g.Members = []kmsg.ConsumerGroupDescribeResponseGroupMember{member("m1", "c1", "/10.0.0.1"), member("m2", "c2", "/10.0.0.2")}
	res.Groups = []kmsg.ConsumerGroupDescribeResponseGroup{other, g}
	got, err := parseConsumerGroupDescribe(consumerGroupDescribeBody(&res), "g")
	if want := "[c1 (member m1) from /10.0.0.1 c2 (member m2) from /10.0.0.2]"; err != nil || fmt.Sprint(got) != want {
		t.Fatalf("got %v, %v; want %s", got, err, want)
	}

	// A group that is not a consumer-protocol group has no members here;
	// another error is one.
	for code, wantErr := range map[int16]error{69: nil, 30: kafkago.GroupAuthorizationFailed} {
		g.ErrorCode, g.Members = code, nil
		res.Groups = []kmsg.ConsumerGroupDescribeResponseGroup{g}
		got, err := parseConsumerGroupDescribe(consumerGroupDescribeBody(&res), "g")
		if len(got) != 0 || (wantErr == nil) != (err == nil) || (wantErr != nil && !errors.Is(err, wantErr)) {
			t.Fatalf("error code %d: got %v, %v; want no members and %v", code, got, err, wantErr)
		}
	}
	body := consumerGroupDescribeBody(&res)
	if _, err := parseConsumerGroupDescribe(body[:len(body)-3], "g"); err == nil {
		t.Fatal("a truncated response parsed")
	}
}

func TestEncodeConsumerGroupDescribe(t *testing.T) {
	frame := encodeConsumerGroupDescribe(7, "my-group")
	req := kmsg.NewConsumerGroupDescribeRequest()
	// size 4, key 2, version 2, correlation id 4, client id 2+n, tags 1
	if err := req.ReadFrom(frame[4+2+2+4+2+len(clientID)+1:]); err != nil || len(req.Groups) != 1 || req.Groups[0] != "my-group" {
		t.Fatalf("kmsg reads %+v, %v", req, err)
	}
}

func FuzzConsumerGroupDescribeResponse(f *testing.F) {
	res := kmsg.NewConsumerGroupDescribeResponse()
	g := kmsg.NewConsumerGroupDescribeResponseGroup()
	g.Group = "g"
	g.Members = []kmsg.ConsumerGroupDescribeResponseGroupMember{kmsg.NewConsumerGroupDescribeResponseGroupMember()}
	res.Groups = append(res.Groups, g)
	f.Add(consumerGroupDescribeBody(&res))
	f.Fuzz(func(t *testing.T, body []byte) {
		members, _ := parseConsumerGroupDescribe(body, "g")
		if len(members) > len(body) {
			t.Fatalf("%d members from %d bytes", len(members), len(body))
		}
	})
}
