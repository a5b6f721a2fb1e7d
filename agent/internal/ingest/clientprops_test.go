package ingest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafkatest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Subscribers of one partition with different client properties have
// fetchers of their own; those with the same share one.
func TestSourceFetchersPerClientSettings(t *testing.T) {
	addr, producer := kafkatest.NewCluster(t, 1, "s")
	kafkatest.Produce(t, producer, 0, 10, func(int) string { return "v" })
	client := kafkatest.NewClient(t, &spec.Connection{Name: "c", BootstrapServers: []string{addr}})
	src := NewSource(client, memory.New(64<<20), slog.Default())
	defer src.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tp := kafka.TopicPartition{Topic: "s"}
	small := spec.ClientSettings{PartitionFetchMaxBytes: 1024, ClientID: "small"}
	cs := []*consumer{
		consume(ctx, src, Subscription{TP: tp}),
		consume(ctx, src, Subscription{TP: tp, Settings: small}),
		consume(ctx, src, Subscription{TP: tp, Settings: small}),
	}
	for _, c := range cs {
		kafkatest.WaitFor(t, 10*time.Second, "every subscriber at 10", func() bool { return c.at() == 10 })
		c.check(t, "subscriber", 0, 10)
	}
	src.mu.Lock()
	started := src.started
	src.mu.Unlock()
	if started != 2 {
		t.Errorf("%d fetchers started, want 2: one per client settings", started)
	}
}
