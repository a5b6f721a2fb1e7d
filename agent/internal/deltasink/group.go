package deltasink

import (
	"context"
	"log/slog"
	"maps"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
)

// GroupCommitter mirrors a table's committed offsets to its Kafka consumer
// group, for lag tools, from one goroutine: commits arrive in order, and
// when Kafka is slower than the table only the newest offsets are sent. The
// table's log stays the source of truth, so a failed mirror is only logged,
// and tried again (after [groupRetryFirst], doubling up to [groupRetryMax])
// until it succeeds or newer offsets replace it: the table's last commit
// reaches the group even when the coordinator was not ready for it (a new
// cluster creates __consumer_offsets on first use).
type GroupCommitter struct {
	client *kafka.Client
	group  string
	log    *slog.Logger
	latest chan map[kafka.TopicPartition]int64
	done   chan struct{}
}

// How long a failed mirror waits before it is tried again: groupRetryFirst
// at first, doubling up to groupRetryMax.
const (
	groupRetryFirst = time.Second
	groupRetryMax   = 30 * time.Second
)

// NewGroupCommitter returns the committer that mirrors offsets to group,
// sending them in a goroutine of its own until Close.
func NewGroupCommitter(client *kafka.Client, group string, log *slog.Logger) *GroupCommitter {
	g := &GroupCommitter{client: client, group: group, log: log,
		latest: make(chan map[kafka.TopicPartition]int64, 1), done: make(chan struct{})}
	go g.run()
	return g
}

// run sends the offsets offered until close, each until it is sent or
// newer ones come.
func (g *GroupCommitter) run() {
	defer close(g.done)
	var pending map[kafka.TopicPartition]int64 // offered, not yet sent
	backoff := groupRetryFirst
	for {
		var retry <-chan time.Time
		if pending != nil {
			retry = time.After(backoff)
		}
		select {
		case offsets, ok := <-g.latest:
			if !ok {
				return
			}
			pending, backoff = offsets, groupRetryFirst
		case <-retry:
			backoff = min(2*backoff, groupRetryMax)
		}
		if g.send(pending) {
			pending = nil
		}
	}
}

// send commits offsets to the group and reports whether it did.
func (g *GroupCommitter) send(offsets map[kafka.TopicPartition]int64) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.client.CommitGroupOffsets(ctx, g.group, offsets); err != nil {
		g.log.Debug("consumer group offsets not mirrored; retrying", "group", g.group, "err", err)
		return false
	}
	return true
}

// Offer queues a copy of offsets, replacing any not yet sent. It never
// blocks the table loop.
func (g *GroupCommitter) Offer(offsets map[kafka.TopicPartition]int64) {
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

// Close tries once to send what is queued, and stops.
func (g *GroupCommitter) Close() {
	close(g.latest)
	<-g.done
}
