package spec

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ParsePartition parses a partition key of starting_offsets,
// ending_offsets and their by_timestamp forms: a partition number written
// in decimal without sign or leading zeros ("0", "12").
func ParsePartition(key string) (int32, error) {
	n, err := strconv.ParseInt(key, 10, 32)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != key {
		return 0, fmt.Errorf("partition %q is not a partition number: write it as a whole number from 0, like \"0\" or \"12\"", key)
	}
	return int32(n), nil
}

// FailsOnDataLoss reports whether the table fails when records it has not
// read are gone: an unset FailOnDataLoss means true.
func (ko *KafkaOptions) FailsOnDataLoss() bool { return ko.FailOnDataLoss == nil || *ko.FailOnDataLoss }

// ChecksDuplicatedGroupID reports whether the table refuses to start while
// its consumer group has members: an unset CheckDuplicatedGroupID means
// false.
func (ko *KafkaOptions) ChecksDuplicatedGroupID() bool {
	return ko.CheckDuplicatedGroupID != nil && *ko.CheckDuplicatedGroupID
}

// DiscoverEvery returns PartitionDiscoveryInterval parsed, or the default
// when unset or invalid (Validate reports an invalid one); zero means
// discovery is off, as a zero or negative interval asks.
func (ko *KafkaOptions) DiscoverEvery() time.Duration {
	d, err := time.ParseDuration(ko.PartitionDiscoveryInterval)
	if err != nil {
		d, _ = time.ParseDuration(DefaultPartitionDiscoveryInterval)
	}
	return max(d, 0)
}

// BytesEstimateWindow returns BytesEstimateWindowLength parsed, or the
// default when unset or invalid (Validate reports an invalid one).
func (ko *KafkaOptions) BytesEstimateWindow() time.Duration {
	d, err := time.ParseDuration(ko.BytesEstimateWindowLength)
	if err != nil || d < time.Second {
		d, _ = time.ParseDuration(DefaultBytesEstimateWindowLength)
	}
	return d
}

// TriggerDelay returns MaxTriggerDelay parsed, or the default when unset
// or invalid (Validate reports an invalid one).
func (ko *KafkaOptions) TriggerDelay() time.Duration {
	d, err := time.ParseDuration(ko.MaxTriggerDelay)
	if err != nil || d <= 0 {
		d, _ = time.ParseDuration(DefaultMaxTriggerDelay)
	}
	return d
}

// normalizeConsumer fills the unset options of subscriptions, positions,
// flow control and data loss with their defaults. max_trigger_delay gets
// one only with min_offsets_per_trigger, which it applies to.
func (ko *KafkaOptions) normalizeConsumer() {
	if ko.AutoOffsetReset == "" {
		ko.AutoOffsetReset = DefaultAutoOffsetReset
	}
	if ko.MaxTriggerDelay == "" && ko.MinOffsetsPerTrigger != nil {
		ko.MaxTriggerDelay = DefaultMaxTriggerDelay
	}
	if ko.FailOnDataLoss == nil {
		t := true
		ko.FailOnDataLoss = &t
	}
	if ko.CheckDuplicatedGroupID == nil {
		f := false
		ko.CheckDuplicatedGroupID = &f
	}
	if ko.PartitionDiscoveryInterval == "" {
		ko.PartitionDiscoveryInterval = DefaultPartitionDiscoveryInterval
	}
	if ko.BytesEstimateWindowLength == "" {
		ko.BytesEstimateWindowLength = DefaultBytesEstimateWindowLength
	}
}

// startingMode is StartingOffset, with unset meaning the default.
func (ko *KafkaOptions) startingMode() string {
	if ko.StartingOffset == "" {
		return DefaultStartingOffset
	}
	return ko.StartingOffset
}

// endingMode is EndingOffset, with unset meaning the default.
func (ko *KafkaOptions) endingMode() string {
	if ko.EndingOffset == "" {
		return DefaultEndingOffset
	}
	return ko.EndingOffset
}

// endingAttrs lists the ending attributes of ko that are set.
func (ko *KafkaOptions) endingAttrs() []string {
	var set []string
	for _, a := range []struct {
		attr string
		on   bool
	}{
		{"ending_offset", ko.EndingOffset != ""},
		{"ending_offsets", ko.EndingOffsets != nil},
		{"ending_timestamp", ko.EndingTimestamp != ""},
		{"ending_offsets_by_timestamp", ko.EndingOffsetsByTimestamp != nil},
	} {
		if a.on {
			set = append(set, a.attr)
		}
	}
	return set
}

// validateSubscription checks that exactly one of topics, topic_pattern
// and assign is set, and checks assign.
func (ko *KafkaOptions) validateSubscription(col collector) {
	validateExactlyOne(col, 0, "set only one of topics, topic_pattern and assign",
		attrSet{"topics", len(ko.Topics) > 0}, attrSet{"topic_pattern", ko.TopicPattern != ""}, attrSet{"assign", len(ko.Assign) > 0})
	ko.validateAssign(col)
}

// validateAssign checks assign: valid topic names, each with a non-empty
// list of distinct partition numbers.
func (ko *KafkaOptions) validateAssign(col collector) {
	if ko.Assign == nil {
		return
	}
	if len(ko.Assign) == 0 {
		col.add("assign", "assign is empty; list the partitions to read by topic, like { \"events\" = [0, 1] }")
		return
	}
	if !validateMaxItems(col, "assign", len(ko.Assign), MaxTopics) {
		return
	}
	total := 0
	for _, topic := range slices.Sorted(maps.Keys(ko.Assign)) {
		parts := ko.Assign[topic]
		total += len(parts)
		if !ValidTopic(topic) {
			col.add("assign", "%q is not a valid Kafka topic name: use 1 to 249 of A-Z a-z 0-9 . _ -", topic)
		}
		if len(parts) == 0 {
			col.add("assign", "topic %q lists no partitions; list the partitions to read, like [0, 1], or remove the topic", topic)
		}
		seen := map[int]bool{}
		for _, n := range parts {
			switch {
			case n < 0 || n > math.MaxInt32:
				col.add("assign", "topic %q: %d is not a partition number; partitions are numbered from 0", topic, n)
			case seen[n]:
				col.add("assign", "topic %q lists partition %d twice", topic, n)
			}
			seen[n] = true
		}
	}
	if total > MaxAssignedPartitions {
		col.add("assign", "%d partitions, more than the maximum of %d", total, MaxAssignedPartitions)
	}
}

// validateConsumer checks the options of positions, flow control, data
// loss, the consumer group and client properties.
func (ko *KafkaOptions) validateConsumer(col collector) {
	ko.validateStarting(col)
	ko.validateEnding(col)
	ko.validateFlowControl(col)
	ko.validateGroup(col)
	if d := ko.PartitionDiscoveryInterval; d != "" {
		switch v, err := time.ParseDuration(d); {
		case err != nil:
			col.add("partition_discovery_interval", "%q is not a duration; write it like \"5m\" or \"30s\", or \"0s\" to turn discovery off", d)
		case v > 0 && v < time.Second:
			col.add("partition_discovery_interval", "%s is shorter than the minimum of 1s; use \"0s\" to turn discovery off", v)
		}
	}
	if d := ko.BytesEstimateWindowLength; d != "" {
		if v, err := time.ParseDuration(d); err != nil || v < time.Second {
			col.add("bytes_estimate_window_length", "%q is not a duration of at least 1s; write it like \"10m\" or \"600s\"", d)
		}
	}
	ko.validateClientProperties(col)
}

// timestampPair is a mode's two exclusive ways to give a time: one for
// every partition, or one per partition.
type timestampPair struct {
	one, each string
	oneSet    bool
	eachSet   bool
}

// modeCompanion is an attribute that applies only with one value of a
// mode attribute (starting_offset, ending_offset).
type modeCompanion struct {
	attr, mode string
	set        bool
}

// validateCompanions refuses every companion of modeAttr that is set while
// modeAttr (whose value is mode) has another value, and requires the
// companions of the chosen mode: byOffset with the "specific" mode, one of
// times with the "timestamp" mode (both spelled the same for
// starting_offset and ending_offset).
func validateCompanions(col collector, modeAttr, mode string, byOffset modeCompanion, times timestampPair) {
	modePath := []string{col.path(modeAttr)}
	for _, c := range []modeCompanion{byOffset, {times.one, StartingOffsetTimestamp, times.oneSet}, {times.each, StartingOffsetTimestamp, times.eachSet}} {
		if c.set && mode != c.mode {
			col.addInvolving(c.attr, modePath, "%s applies only with %s = %q (it is %q); set %s = %q or remove %s",
				c.attr, modeAttr, c.mode, mode, modeAttr, c.mode, c.attr)
		}
	}
	switch mode {
	case byOffset.mode:
		if !byOffset.set {
			col.addInvolving(byOffset.attr, modePath, "%s = %q needs %s: the offset of each partition by topic, like { \"events\" = { \"0\" = 42 } }",
				modeAttr, mode, byOffset.attr)
		}
	case StartingOffsetTimestamp:
		both := []string{col.path(times.one), col.path(times.each)}
		switch {
		case times.oneSet && times.eachSet:
			col.addInvolving(times.each, both, "%s and %s are mutually exclusive; set only one of them", times.one, times.each)
		case !times.oneSet && !times.eachSet:
			col.addInvolving(times.one, append(both, modePath...), "%s = %q needs %s (one time for every partition) or %s (a time per partition)",
				modeAttr, mode, times.one, times.each)
		}
	}
}

// validateStarting checks starting_offset, its companions and
// auto_offset_reset.
func (ko *KafkaOptions) validateStarting(col collector) {
	mode := ko.startingMode()
	if !slices.Contains(StartingOffsets, mode) {
		col.add("starting_offset", "%q is not one of %s", mode, strings.Join(StartingOffsets, ", "))
	} else {
		validateCompanions(col, "starting_offset", mode,
			modeCompanion{"starting_offsets", StartingOffsetSpecific, ko.StartingOffsets != nil},
			timestampPair{"starting_timestamp", "starting_offsets_by_timestamp", ko.StartingTimestamp != "", ko.StartingOffsetsByTimestamp != nil})
	}
	validateTimestamp(col, "starting_timestamp", ko.StartingTimestamp)
	ko.validatePartitionMap(col, "starting_offsets", ko.StartingOffsets, OffsetEarliest, "-2 (earliest), -1 (latest) or an offset from 0")
	ko.validatePartitionMap(col, "starting_offsets_by_timestamp", ko.StartingOffsetsByTimestamp, 0, "milliseconds since the epoch, from 0")
	if r := ko.AutoOffsetReset; r != "" && !slices.Contains(AutoOffsetResets, r) {
		col.add("auto_offset_reset", "%q is not one of %s", r, strings.Join(AutoOffsetResets, ", "))
	}
}

// validateEnding checks ending_offset and its companions, and that the
// ends do not lie before the starts.
func (ko *KafkaOptions) validateEnding(col collector) {
	mode := ko.endingMode()
	if !slices.Contains(EndingOffsets, mode) {
		col.add("ending_offset", "%q is not one of %s", mode, strings.Join(EndingOffsets, ", "))
	} else {
		validateCompanions(col, "ending_offset", mode,
			modeCompanion{"ending_offsets", EndingOffsetSpecific, ko.EndingOffsets != nil},
			timestampPair{"ending_timestamp", "ending_offsets_by_timestamp", ko.EndingTimestamp != "", ko.EndingOffsetsByTimestamp != nil})
	}
	validateTimestamp(col, "ending_timestamp", ko.EndingTimestamp)
	ko.validatePartitionMap(col, "ending_offsets", ko.EndingOffsets, OffsetLatest, "-1 (latest) or an offset from 0")
	ko.validatePartitionMap(col, "ending_offsets_by_timestamp", ko.EndingOffsetsByTimestamp, 0, "milliseconds since the epoch, from 0")

	if ko.startingMode() == StartingOffsetSpecific && ko.endingMode() == EndingOffsetSpecific {
		validateStartBeforeEnd(col, "starting_offsets", "ending_offsets", ko.StartingOffsets, ko.EndingOffsets, "offset")
	}
	if ko.startingMode() == StartingOffsetTimestamp && ko.endingMode() == EndingOffsetTimestamp {
		validateStartBeforeEnd(col, "starting_offsets_by_timestamp", "ending_offsets_by_timestamp",
			ko.StartingOffsetsByTimestamp, ko.EndingOffsetsByTimestamp, "timestamp")
		start, errStart := ParseTimestamp(ko.StartingTimestamp)
		end, errEnd := ParseTimestamp(ko.EndingTimestamp)
		if errStart == nil && errEnd == nil && start > end {
			col.addInvolving("ending_timestamp", []string{col.path("starting_timestamp")},
				"ending_timestamp %q is before starting_timestamp %q; the run would read nothing", ko.EndingTimestamp, ko.StartingTimestamp)
		}
	}
}

// validateStartBeforeEnd refuses a partition whose end (in ends, attribute
// endAttr) is before its start (in starts, attribute startAttr); both are
// offsets or both timestamps (what). Negative offsets name positions and
// are not compared.
func validateStartBeforeEnd(col collector, startAttr, endAttr string, starts, ends map[string]map[string]int64, what string) {
	for _, topic := range slices.Sorted(maps.Keys(ends)) {
		for _, part := range slices.Sorted(maps.Keys(ends[topic])) {
			start, ok := starts[topic][part]
			if end := ends[topic][part]; ok && start >= 0 && end >= 0 && start > end {
				col.addInvolving(endAttr, []string{col.path(startAttr)},
					"topic %q partition %s ends at %s %d, before its starting %s %d; the run would read nothing",
					topic, part, what, end, what, start)
			}
		}
	}
}

// validateTimestamp checks the timestamp attr, when set.
func validateTimestamp(col collector, attr, v string) {
	if v == "" {
		return
	}
	if _, err := ParseTimestamp(v); err != nil {
		col.add(attr, "%v", err)
	}
}

// validatePartitionMap checks m, the map of attribute attr by topic and
// partition: valid topics the table reads, partition numbers, values of
// at least lo (allowed says which).
func (ko *KafkaOptions) validatePartitionMap(col collector, attr string, m map[string]map[string]int64, lo int64, allowed string) {
	if m == nil {
		return
	}
	if len(m) == 0 {
		col.add(attr, "%s is empty; give the partitions by topic, like { \"events\" = { \"0\" = 42 } }", attr)
		return
	}
	if !validateMaxItems(col, attr, len(m), MaxTopics) {
		return
	}
	subscription := []string{col.path("topics"), col.path("topic_pattern"), col.path("assign")}
	total := 0
	for _, topic := range slices.Sorted(maps.Keys(m)) {
		parts := m[topic]
		total += len(parts)
		if !ValidTopic(topic) {
			col.add(attr, "%q is not a valid Kafka topic name: use 1 to 249 of A-Z a-z 0-9 . _ -", topic)
			continue
		}
		if len(parts) == 0 {
			col.add(attr, "topic %q lists no partitions; give each partition's value, like { \"0\" = 42 }, or remove the topic", topic)
		}
		for _, part := range slices.Sorted(maps.Keys(parts)) {
			n, err := ParsePartition(part)
			if err != nil {
				col.add(attr, "topic %q: %v", topic, err)
				continue
			}
			if v := parts[part]; v < lo {
				col.add(attr, "topic %q partition %s: %d is not %s", topic, part, v, allowed)
			}
			if hint := ko.unreadPartition(topic, n); hint != "" {
				col.addInvolving(attr, subscription, "topic %q partition %s: %s", topic, part, hint)
			}
		}
	}
	if total > MaxAssignedPartitions {
		col.add(attr, "%d partitions, more than the maximum of %d", total, MaxAssignedPartitions)
	}
}

// unreadPartition says why the table does not read partition n of topic;
// "" when it does, or when the subscription is not valid or not fully
// known (an empty topic name is one Terraform does not know yet).
func (ko *KafkaOptions) unreadPartition(topic string, n int32) string {
	switch {
	case slices.Contains(ko.Topics, ""):
	case len(ko.Topics) > 0 && ko.TopicPattern == "" && ko.Assign == nil:
		if !slices.Contains(ko.Topics, topic) {
			return "the table does not read this topic: it is not in topics"
		}
	case ko.TopicPattern != "" && len(ko.Topics) == 0 && ko.Assign == nil:
		if re, err := CompileTopicPattern(ko.TopicPattern); err == nil && !re.MatchString(topic) {
			return "the table does not read this topic: it does not match topic_pattern"
		}
	case len(ko.Assign) > 0 && len(ko.Topics) == 0 && ko.TopicPattern == "":
		parts, ok := ko.Assign[topic]
		switch {
		case !ok:
			return "the table does not read this topic: it is not in assign"
		case !slices.Contains(parts, int(n)):
			return "the table does not read this partition: assign does not list it"
		}
	}
	return ""
}

// validateFlowControl checks the options of rate control and backlog
// splitting.
func (ko *KafkaOptions) validateFlowControl(col collector) {
	for _, o := range []struct {
		attr string
		v    *int64
		hi   int64
	}{
		{"max_offsets_per_trigger", ko.MaxOffsetsPerTrigger, math.MaxInt64},
		{"min_offsets_per_trigger", ko.MinOffsetsPerTrigger, math.MaxInt64},
		{"min_partitions", ko.MinPartitions, MaxMinPartitions},
		{"max_records_per_partition", ko.MaxRecordsPerPartition, math.MaxInt64},
	} {
		if o.v != nil {
			validateRange(col, o.attr, *o.v, 1, o.hi)
		}
	}
	if lo, hi := ko.MinOffsetsPerTrigger, ko.MaxOffsetsPerTrigger; lo != nil && hi != nil && *lo > *hi {
		col.addInvolving("min_offsets_per_trigger", []string{col.path("max_offsets_per_trigger")},
			"min_offsets_per_trigger %d is more than max_offsets_per_trigger %d; a commit could never wait for that many", *lo, *hi)
	}
	if d := ko.MaxTriggerDelay; d != "" {
		if ko.MinOffsetsPerTrigger == nil {
			col.addInvolving("max_trigger_delay", []string{col.path("min_offsets_per_trigger")},
				"max_trigger_delay applies only with min_offsets_per_trigger: it bounds how long a commit waits for that many offsets; "+
					"set min_offsets_per_trigger or remove max_trigger_delay")
		}
		if v, err := time.ParseDuration(d); err != nil || v <= 0 {
			col.add("max_trigger_delay", "%q is not a positive duration; write it like \"15m\" or \"30s\"", d)
		}
	}
}

// validateGroup checks group_id and group_id_prefix.
func (ko *KafkaOptions) validateGroup(col collector) {
	if ko.GroupID != "" && ko.GroupIDPrefix != "" {
		col.addInvolving("group_id_prefix", []string{col.path("group_id")},
			"group_id and group_id_prefix are mutually exclusive: group_id names the group, group_id_prefix prefixes the generated name; set only one of them")
	}
	for _, g := range []struct{ attr, v string }{{"group_id", ko.GroupID}, {"group_id_prefix", ko.GroupIDPrefix}} {
		switch {
		case g.v == "":
		case strings.TrimSpace(g.v) != g.v || strings.ContainsAny(g.v, "\x00\n\r\t"):
			col.add(g.attr, "%q has surrounding spaces or control characters; Kafka tools could not name the group", g.v)
		default:
			validateMaxLen(col, g.attr, g.v, MaxGroupIDLen)
		}
	}
}

// validateTriggered refuses ending positions on the tables of a continuous
// pipeline: only a triggered run (continuous = false) ends.
func (p *Pipeline) validateTriggered(col collector) {
	if !p.IsContinuous() {
		return
	}
	for i := range p.Tables {
		kc := col.index("table", i).at("connector_options").at("kafka_options")
		p.Tables[i].ConnectorOptions.KafkaOptions.refuseEnding(kc, []string{"continuous"}, "a continuous pipeline never ends")
	}
}

// ValidateWith returns the problems of f that depend on p, the pipeline it
// belongs to: ending positions while p is continuous. The provider cannot
// check this at plan time, as a fanout schema does not know its pipeline's
// mode; the agent checks it when the fanout schema is put.
func (f *FanoutSchema) ValidateWith(p *Pipeline) Errors {
	col := newCollector()
	if p.IsContinuous() {
		f.ConnectorOptions.KafkaOptions.refuseEnding(col.at("connector_options").at("kafka_options"), nil,
			fmt.Sprintf("pipeline %q is continuous and never ends", p.Name))
	}
	return *col.errs
}

// refuseEnding reports, under the kafka_options collector kc, every ending
// attribute set, which involves the attributes involves; why says why
// nothing ends.
func (ko *KafkaOptions) refuseEnding(kc collector, involves []string, why string) {
	for _, attr := range ko.endingAttrs() {
		kc.addInvolving(attr, involves,
			"%s applies only to a triggered pipeline (continuous = false): %s; set continuous = false or remove %s",
			attr, why, attr)
	}
}

// refuseOnFanout refuses, under the kafka_options collector kc of a
// fanout schema, the options only tables have: rate control and backlog
// splitting.
func (ko *KafkaOptions) refuseOnFanout(kc collector) {
	for _, attr := range ko.tableOnlyAttrs() {
		kc.add(attr, "%s is not supported on fanout schemas, only on the tables of a tributary_pipeline; remove it", attr)
	}
}

// tableOnlyAttrs returns the options of ko that are set and that only the
// tables of a pipeline honour: rate control and backlog splitting.
func (ko *KafkaOptions) tableOnlyAttrs() []string {
	return setAttrs(
		optionSet{"max_offsets_per_trigger", ko.MaxOffsetsPerTrigger != nil},
		optionSet{"min_offsets_per_trigger", ko.MinOffsetsPerTrigger != nil},
		optionSet{"max_trigger_delay", ko.MaxTriggerDelay != ""},
		optionSet{"min_partitions", ko.MinPartitions != nil},
		optionSet{"max_records_per_partition", ko.MaxRecordsPerPartition != nil},
	)
}

// optionSet is an option's attribute and whether it is set.
type optionSet struct {
	attr string
	set  bool
}

// setAttrs returns the attributes of the options of opts that are set, in
// order.
func setAttrs(opts ...optionSet) []string {
	var attrs []string
	for _, o := range opts {
		if o.set {
			attrs = append(attrs, o.attr)
		}
	}
	return attrs
}

// IgnoresErrors reports whether the table skips records that do not
// decode (ignore_errors): an unset IgnoreErrors means false.
func (ko *KafkaOptions) IgnoresErrors() bool { return ko.IgnoreErrors != nil && *ko.IgnoreErrors }

// MaxErrors returns how many bad records a table with ignore_errors takes
// before it fails: ErrorToleranceMaxCount, or
// [DefaultErrorToleranceMaxCount] when unset; -1 is no limit.
func (ko *KafkaOptions) MaxErrors() int64 {
	if ko.ErrorToleranceMaxCount == nil {
		return DefaultErrorToleranceMaxCount
	}
	return *ko.ErrorToleranceMaxCount
}

// normalizeFields fills the unset options of field names and the error
// budget: duplicate_field_strategy EXCEPTION, ignore_errors false, and
// with ignore_errors the default error_tolerance_max_count.
func (ko *KafkaOptions) normalizeFields() {
	if ko.DuplicateFieldStrategy == "" {
		ko.DuplicateFieldStrategy = DuplicateFieldException
	}
	if ko.IgnoreErrors == nil {
		f := false
		ko.IgnoreErrors = &f
	}
	if ko.IgnoresErrors() && ko.ErrorToleranceMaxCount == nil {
		n := int64(DefaultErrorToleranceMaxCount)
		ko.ErrorToleranceMaxCount = &n
	}
}

// validateFields checks the options of column names (the key and value
// field prefixes, duplicate_field_strategy) and of the error budget.
func (ko *KafkaOptions) validateFields(col collector) {
	kp, vp := ko.KeyFieldsPrefix, ko.ValueFieldsPrefix
	okLen := validateMaxLen(col, "key_fields_prefix", kp, MaxShortStringLen)
	okLen = validateMaxLen(col, "value_fields_prefix", vp, MaxShortStringLen) && okLen
	if okLen && kp != "" && vp != "" && (strings.HasPrefix(kp, vp) || strings.HasPrefix(vp, kp)) {
		col.addInvolving("value_fields_prefix", []string{col.path("key_fields_prefix")},
			"value_fields_prefix %q and key_fields_prefix %q: neither may be a prefix of the other, or a column's name "+
				"would not say which side it comes from", vp, kp)
	}
	if s := ko.DuplicateFieldStrategy; s != "" {
		validateChoice(col, "duplicate_field_strategy", s, DuplicateFieldStrategies, "strategies")
	}
	if n := ko.ErrorToleranceMaxCount; n != nil {
		if !ko.IgnoresErrors() {
			col.addInvolving("error_tolerance_max_count", []string{col.path("ignore_errors")},
				"error_tolerance_max_count applies only with ignore_errors = true: without it the first record that "+
					"does not decode goes to _corrupt_record or fails the table; set ignore_errors = true or remove error_tolerance_max_count")
		}
		validateRange(col, "error_tolerance_max_count", *n, -1, math.MaxInt64)
	}
}
