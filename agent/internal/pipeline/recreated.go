package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// goOnRecreated handles err, from [deltasink.CheckTopicIDs] for the topic ids the loop
// looked up (ids, of the topics of tps): when it is a
// [*kafka.TopicRecreatedError] and the table goes on after data loss, it
// commits, for every topic of ids that was re-created, its new id and the
// earliest offset of each of its partitions among tps as the next to read
// (the offsets go back: the new topic starts over), with the gaps, and
// returns nil; a triggered run's ends of those partitions become the new
// topic's. Otherwise it returns err.
func (l *loop) goOnRecreated(ctx context.Context, err error, tps []kafka.TopicPartition, ids map[string]string) error {
	var recreated *kafka.TopicRecreatedError
	if l.loss == nil || !errors.As(err, &recreated) {
		return err
	}
	snap := l.sink.Table().Snapshot()
	var again []kafka.TopicPartition
	conf := map[string]string{}
	for topic, id := range ids {
		if was := snap.Configuration[deltasink.TopicIDKey(topic)]; was != "" && was != id {
			conf[deltasink.TopicIDKey(topic)] = id
			l.r.log.Warn("topic re-created; it is read again from its earliest offset (fail_on_data_loss = false)",
				"topic", topic, "was", was, "now", id)
			again = append(again, slices.DeleteFunc(slices.Clone(tps), func(tp kafka.TopicPartition) bool { return tp.Topic != topic })...)
		}
	}
	earliest, lerr := l.r.client.Offsets(ctx, again, kafka.Earliest)
	if lerr != nil {
		return runner.Lookup(lerr)
	}
	if l.end != nil {
		// A triggered run that started before: the ends it fixed are the
		// old topic's, and the new one may end before them.
		ends, err := l.pos.Ends(ctx, again)
		if err != nil {
			return err
		}
		maps.Copy(l.end, ends)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	var gaps []spec.DataLossGap
	for _, tp := range again {
		if old, ok := snap.Txns[deltasink.AppID(tp)]; ok {
			gaps = append(gaps, spec.DataLossGap{Topic: tp.Topic, Partition: tp.Partition, From: old, To: earliest[tp], Reason: deltasink.LossRecreated,
				DetectedAt: now})
		}
	}
	if err := l.sink.Rewind(earliest, gaps, conf); err != nil {
		return fmt.Errorf("record the offsets of re-created topics: %w", err)
	}
	return nil
}
