package pipeline

import (
	"context"
	"log/slog"
	"maps"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
)

// groupCommitter mirrors a table's committed offsets to its Kafka consumer
// group, for lag tools, from one goroutine: commits arrive in order, and
// when Kafka is slower than the table only the newest offsets are sent. The
// table's log stays the source of truth, so a failed mirror is only logged.
type groupCommitter struct {
	client *kafka.Client
	group  string
	log    *slog.Logger
	latest chan map[kafka.TopicPartition]int64
	done   chan struct{}
}

func newGroupCommitter(client *kafka.Client, group string, log *slog.Logger) *groupCommitter {
	g := &groupCommitter{client: client, group: group, log: log,
		latest: make(chan map[kafka.TopicPartition]int64, 1), done: make(chan struct{})}
	go g.run()
	return g
}

func (g *groupCommitter) run() {
	defer close(g.done)
	for offsets := range g.latest {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := g.client.CommitGroupOffsets(ctx, g.group, offsets); err != nil {
			g.log.Debug("consumer group offsets not mirrored", "group", g.group, "err", err)
		}
		cancel()
	}
}

// offer queues a copy of offsets, replacing any not yet sent. It never
// blocks the table loop.
func (g *groupCommitter) offer(offsets map[kafka.TopicPartition]int64) {
	c := maps.Clone(offsets)
	for {
		select {
		case g.latest <- c:
			return
		default:
			select {
			case <-g.latest: // drop the older offsets
			default:
			}
		}
	}
}

// close sends what is queued and stops.
func (g *groupCommitter) close() {
	close(g.latest)
	<-g.done
}
