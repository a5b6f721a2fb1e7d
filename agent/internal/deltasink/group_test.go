package deltasink

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafkatest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestGroupCommitterRetries: offsets whose mirror fails (the coordinator
// is not ready yet) reach the group once it is, with no newer commit to
// carry them.
func TestGroupCommitterRetries(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "events"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var refused atomic.Int32
	c.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if refused.Add(1) > 2 {
			return nil, nil, false // the third try is answered by the cluster
		}
		c.KeepControl()
		commit := req.(*kmsg.OffsetCommitRequest)
		resp := commit.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, rt := range commit.Topics {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.CoordinatorNotAvailable.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	client, err := kafka.NewClient(&spec.Connection{Name: "c", BootstrapServers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	g := NewGroupCommitter(client, "lag", slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer g.Close()
	g.Offer(map[kafka.TopicPartition]int64{{Topic: "events", Partition: 0}: 42})

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	kafkatest.WaitFor(t, 20*time.Second, "the group at offset 42", func() bool {
		offs, err := adm.FetchOffsets(context.Background(), "lag")
		if err != nil {
			return false
		}
		o, ok := offs.Lookup("events", 0)
		return ok && o.At == 42
	})
	if n := refused.Load(); n < 3 {
		t.Fatalf("%d commits sent, want the two refused and one more", n)
	}
}
