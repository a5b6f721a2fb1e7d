package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafkatest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// A table whose consumer group has a member does not start while it has
// one: it reports STARTING with an error naming the group and the member,
// and starts once the member left.
func TestManagerCheckDuplicatedGroupID(t *testing.T) {
	addr, producer := kafkatest.NewCluster(t, 2, "t")
	kafkatest.Produce(t, producer, 0, 20, func(i int) string { return fmt.Sprint(i % 10) })
	member, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("busy"), kgo.ConsumeTopics("t"), kgo.ClientID("other-job"))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	member.PollFetches(ctx) // joins the group

	p := testPipeline("t")
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.GroupID = "busy"
	check := true
	ko.CheckDuplicatedGroupID = &check
	m := startManager(t, addr, p)
	var last spec.TableStatus
	waitFor(t, 20*time.Second, "the table refusing to start", func() bool {
		st, _ := m.Status("p")
		last = st.Tables[0]
		return last.State == spec.StateStarting && strings.Contains(last.LastError, `consumer group "busy" has 1 member(s): other-job`)
	})
	if last.Rows != 0 {
		t.Fatalf("the table read %d rows while its group had a member", last.Rows)
	}
	member.Close()
	waitFor(t, 60*time.Second, "20 rows once the member left", func() bool {
		st, _ := m.Status("p")
		return st.Tables[0].Rows == 20 && st.Tables[0].State == spec.StateRunning
	})
}
