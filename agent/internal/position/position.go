package position

import (
	"context"
	"fmt"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// This file decides where a table's, fanout schema's or Kafka sink's partitions start
// and where a triggered run ends, from the kafka_options (starting and
// ending offsets and timestamps, auto_offset_reset), and names the
// consumer group.
//
// Starting positions apply only to partitions the log records no offset
// for, and only while the log is new: a partition or topic that appears
// later (discovered, or created while the agent was down) starts at the
// earliest offset, so that none of its records is skipped.

// GroupID returns the consumer group of a table or fanout schema with
// options ko in pipeline: group_id, else group_id_prefix (by default
// "tributary.") followed by "<pipeline>.<qualified>", where qualified is
// "<catalog>.<schema>.<table>" of a table, and the same with the fanout
// schema's name in place of the table for a fanout schema, in lower case.
// The table's committed offsets are mirrored to it, starting_offset
// "group" starts from its committed offsets, and check_duplicated_group_id
// looks for its members.
func GroupID(ko *spec.KafkaOptions, pipeline, qualified string) string {
	if ko.GroupID != "" {
		return ko.GroupID
	}
	prefix := ko.GroupIDPrefix
	if prefix == "" {
		prefix = spec.DefaultGroupIDPrefix
	}
	return prefix + pipeline + "." + strings.ToLower(qualified)
}

// Finder looks up the start and end offsets of the partitions of one
// table, fanout schema or Kafka sink.
type Finder struct {
	// Client asks the brokers.
	Client *kafka.Client
	// Options are the kafka_options of the table, fanout schema or
	// Kafka sink.
	Options *spec.KafkaOptions
	// Group is the consumer group (see [GroupID]).
	Group string
	// Owner names the table, fanout schema or Kafka sink in messages:
	// "the table", "the fanout schema", "the kafka sink".
	Owner string
}

// Latest returns the latest position of a consumer at the options'
// isolation level: the last stable offset under read_committed, else the
// high watermark.
func (p *Finder) Latest() int64 {
	if p.Options.ReadCommitted() {
		return kafka.LastStable
	}
	return kafka.Latest
}

// Offsets returns where new partitions tps start, and, with withEnds (a
// triggered run's first partitions), where they end. starting is the
// starting_offset mode of the table's first partitions, or
// [spec.StartingOffsetEarliest] for partitions discovered later; logged
// says the log records the offsets of some partition already, which makes
// every new partition start at the earliest offset (a fanout schema's
// progress log has an entry, its route, before any partition's offset, so
// having entries is not enough). A failed look-up is a [runner.LookupError]; a
// partition that has no position to start at under auto_offset_reset
// "none", or a position that cannot be, is a [runner.FatalError].
func (p *Finder) Offsets(ctx context.Context, tps []kafka.TopicPartition, starting string,
	logged, withEnds bool) (starts, ends map[kafka.TopicPartition]int64, err error) {
	if logged {
		starting = spec.StartingOffsetEarliest
	}
	if starts, err = p.Starts(ctx, tps, starting); err != nil {
		return nil, nil, err
	}
	if withEnds {
		if ends, err = p.Ends(ctx, tps); err != nil {
			return nil, nil, err
		}
	}
	return starts, ends, nil
}

// Starts returns the starting offset of each of tps under starting mode
// starting.
func (p *Finder) Starts(ctx context.Context, tps []kafka.TopicPartition, starting string) (map[kafka.TopicPartition]int64, error) {
	ko := p.Options
	// explicit holds the offsets the mode gives; the partitions it leaves
	// out start at auto_offset_reset, and -2 and -1 in it mean earliest
	// and latest.
	var explicit map[kafka.TopicPartition]int64
	var err error
	switch starting {
	case spec.StartingOffsetEarliest:
		return p.Lookup(ctx, tps, kafka.Earliest)
	case spec.StartingOffsetTimestamp:
		if explicit, err = p.atTimes(ctx, tps, ko.StartingTimestamp, ko.StartingOffsetsByTimestamp, "starting"); err != nil {
			return nil, err
		}
	case spec.StartingOffsetSpecific:
		if explicit, err = listed(tps, ko.StartingOffsets, "starting_offsets"); err != nil {
			return nil, err
		}
		if err := p.checkBelowLatest(ctx, explicit); err != nil {
			return nil, err
		}
	case spec.StartingOffsetGroup:
		if explicit, err = p.Client.GroupOffsets(ctx, p.Group, tps); err != nil {
			return nil, runner.Lookup(err)
		}
	default: // latest
		return p.Lookup(ctx, tps, p.Latest())
	}
	// Partitions to look up: those the mode leaves out, at
	// auto_offset_reset, and those it gives as earliest or latest.
	reset := map[int64][]kafka.TopicPartition{}
	for _, tp := range tps {
		off, ok := explicit[tp]
		switch {
		case !ok:
			which, err := p.reset(tp, starting)
			if err != nil {
				return nil, err
			}
			reset[which] = append(reset[which], tp)
		case off == spec.OffsetEarliest:
			reset[kafka.Earliest] = append(reset[kafka.Earliest], tp)
		case off == spec.OffsetLatest:
			reset[p.Latest()] = append(reset[p.Latest()], tp)
		case off < 0:
			return nil, runner.Fatal(fmt.Errorf("starting_offsets: topic %q partition %d: %d is not an offset; "+
				"give an offset, -2 for earliest or -1 for latest", tp.Topic, tp.Partition, off))

		}
	}
	starts := map[kafka.TopicPartition]int64{}
	for _, tp := range tps {
		if off, ok := explicit[tp]; ok && off >= 0 {
			starts[tp] = off
		}
	}
	for which, group := range reset {
		found, err := p.Lookup(ctx, group, which)
		if err != nil {
			return nil, err
		}
		for tp, off := range found {
			starts[tp] = off
		}
	}
	return starts, nil
}

// reset returns the position, Earliest or the latest, that tp starts at
// when starting mode starting gives it none: auto_offset_reset's. With
// auto_offset_reset "none" it is a [runner.FatalError] naming the partition and
// the fix.
func (p *Finder) reset(tp kafka.TopicPartition, starting string) (int64, error) {
	switch p.Options.AutoOffsetReset {
	case spec.AutoOffsetResetEarliest:
		return kafka.Earliest, nil
	case spec.AutoOffsetResetNone:
		var why string
		switch starting {
		case spec.StartingOffsetGroup:
			why = fmt.Sprintf("consumer group %q has committed no offset for it", p.Group)
		case spec.StartingOffsetSpecific:
			why = "starting_offsets does not list it"
		default:
			why = "starting_offsets_by_timestamp does not list it"
		}
		return 0, runner.Fatal(fmt.Errorf("topic %q partition %d has no starting position: starting_offset is %q, %s, "+
			"and auto_offset_reset is \"none\"; give the partition a position there, or set auto_offset_reset to \"earliest\" or \"latest\"",
			tp.Topic, tp.Partition, starting, why))

	default: // latest
		return p.Latest(), nil
	}
}

// Ends returns the end offset of each of tps in a triggered run, fixed
// when the run starts: ending_offset "latest" (the default) is the last
// stable offset under read_committed and the high watermark otherwise;
// "specific" takes ending_offsets (-1 latest; partitions left out end at
// latest); "timestamp" ends each partition before its first record at or
// after ending_timestamp or its ending_offsets_by_timestamp (at latest
// when it has none, or when it is left out). An end past the latest is
// the latest: a run never waits for records not yet written. An end below
// a partition's start means nothing to read in it.
func (p *Finder) Ends(ctx context.Context, tps []kafka.TopicPartition) (map[kafka.TopicPartition]int64, error) {
	ko := p.Options
	latest, err := p.Lookup(ctx, tps, p.Latest())
	if err != nil {
		return nil, err
	}
	var explicit map[kafka.TopicPartition]int64
	switch ko.EndingOffset {
	case spec.EndingOffsetSpecific:
		if explicit, err = listed(tps, ko.EndingOffsets, "ending_offsets"); err != nil {
			return nil, err
		}
	case spec.EndingOffsetTimestamp:
		if explicit, err = p.atTimes(ctx, tps, ko.EndingTimestamp, ko.EndingOffsetsByTimestamp, "ending"); err != nil {
			return nil, err
		}
	}
	for tp, off := range explicit {
		if off < spec.OffsetLatest {
			return nil, runner.Fatal(fmt.Errorf("ending_offsets: topic %q partition %d: %d is not an end; give an offset, or -1 for latest",
				tp.Topic, tp.Partition, off))

		}
		if off >= 0 && off < latest[tp] {
			latest[tp] = off
		}
	}
	return latest, nil
}

// Lookup returns the Earliest, Latest or LastStable offset of each of tps;
// a failure is a [runner.LookupError].
func (p *Finder) Lookup(ctx context.Context, tps []kafka.TopicPartition, which int64) (map[kafka.TopicPartition]int64, error) {
	if len(tps) == 0 {
		return map[kafka.TopicPartition]int64{}, nil
	}
	offs, err := p.Client.Offsets(ctx, tps, which)
	if err != nil {
		return nil, runner.Lookup(err)
	}
	return offs, nil
}

// atTimes returns, for each of tps that has a time, the offset of its
// first record at or after it, or -1 (latest) when it has none. Every
// partition has the time all when it is set (<side>_timestamp, side being
// "starting" or "ending"); else the partitions byPartition
// (<side>_offsets_by_timestamp) lists have theirs.
func (p *Finder) atTimes(ctx context.Context, tps []kafka.TopicPartition, all string, byPartition map[string]map[string]int64,
	side string) (map[kafka.TopicPartition]int64, error) {
	times := map[kafka.TopicPartition]int64{}
	if all != "" {
		ms, err := spec.ParseTimestamp(all)
		if err != nil {
			return nil, runner.Fatal(fmt.Errorf("%s_timestamp: %w", side, err))
		}
		for _, tp := range tps {
			times[tp] = ms
		}
	} else {
		var err error
		if times, err = listed(tps, byPartition, side+"_offsets_by_timestamp"); err != nil {
			return nil, err
		}
	}
	if len(times) == 0 {
		return times, nil
	}
	offs, err := p.Client.OffsetsForTimes(ctx, times, p.Options.ReadCommitted())
	if err != nil {
		return nil, runner.Lookup(err)
	}
	for tp, off := range offs {
		if off < 0 {
			offs[tp] = spec.OffsetLatest
		}
	}
	return offs, nil
}

// listed returns the values m, the map of attribute attr by topic and
// partition number, gives the partitions of tps; partitions tps does not
// hold are ignored. A partition key that is not a number is a
// [runner.FatalError].
func listed(tps []kafka.TopicPartition, m map[string]map[string]int64, attr string) (map[kafka.TopicPartition]int64, error) {
	out := map[kafka.TopicPartition]int64{}
	for topic, parts := range m {
		for key, v := range parts {
			n, err := spec.ParsePartition(key)
			if err != nil {
				return nil, runner.Fatal(fmt.Errorf("%s: topic %q: %w", attr, topic, err))
			}
			tp := kafka.TopicPartition{Topic: topic, Partition: int(n)}
			for _, have := range tps {
				if have == tp {
					out[tp] = v
				}
			}
		}
	}
	return out, nil
}

// checkBelowLatest fails, with a [runner.FatalError] naming the partition, when a
// starting offset of explicit is past its partition's latest offset. Kafka
// answers a fetch there with OFFSET_OUT_OF_RANGE, which the fetcher takes
// for lost records; the mistake is the offset, and the error says so.
func (p *Finder) checkBelowLatest(ctx context.Context, explicit map[kafka.TopicPartition]int64) error {
	var given []kafka.TopicPartition
	for tp, off := range explicit {
		if off >= 0 {
			given = append(given, tp)
		}
	}
	latest, err := p.Lookup(ctx, given, kafka.Latest)
	if err != nil {
		return err
	}
	for tp, end := range latest {
		if explicit[tp] > end {
			return runner.Fatal(fmt.Errorf("starting_offsets gives topic %q partition %d offset %d, past its latest offset %d; "+
				"give an offset up to %d, or -1 for latest", tp.Topic, tp.Partition, explicit[tp], end, end))

		}
	}
	return nil
}

// CheckGroupMembers returns, with check_duplicated_group_id set, an error
// naming the members of the consumer group when it has any: another
// consumer uses the group, so the table must not start. The error is not
// fatal: the runner stays STARTING with it and tries again.
func (p *Finder) CheckGroupMembers(ctx context.Context) error {
	if !p.Options.ChecksDuplicatedGroupID() {
		return nil
	}
	members, err := p.Client.GroupMembers(ctx, p.Group)
	if err != nil {
		return fmt.Errorf("check_duplicated_group_id: %w", err)
	}
	if len(members) == 0 {
		return nil
	}
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.String()
	}
	return fmt.Errorf("check_duplicated_group_id: consumer group %q has %d member(s): %s; "+
		"stop those consumers, or set group_id (or group_id_prefix) to a group nothing else uses; %s does not start until then, and tries again",
		p.Group, len(members), strings.Join(names, ", "), p.Owner)
}
