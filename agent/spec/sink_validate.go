package spec

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// TopicRoute is one entry of a table_topic_mapping: the tables whose id
// one of Tables matches (whole) go to Topic.
type TopicRoute struct {
	// Tables are the entry's table id patterns, in the order written.
	Tables []TablePattern
	// Topic is where the matching tables' rows go.
	Topic string
}

// TablePattern is one table id pattern of a [TopicRoute].
type TablePattern struct {
	// Pattern is the pattern as written.
	Pattern string
	// Re is Pattern compiled to match a whole table id.
	Re *regexp.Regexp
}

// Match reports whether one of the route's patterns matches the whole
// table id.
func (r *TopicRoute) Match(id string) bool {
	return slices.ContainsFunc(r.Tables, func(p TablePattern) bool { return p.Re.MatchString(id) })
}

// ParseTopicMapping parses a table_topic_mapping,
// "db.t1,db.t2:topic1;db.t3:topic2", Flink's sink.tableId-to-topic.mapping:
// entries separated by ';', each a comma-separated list of table id
// patterns (RE2, each matched against the whole id), ':', and the topic
// they share. A comma inside brackets, braces or parentheses, or escaped,
// belongs to its pattern ("t{1,3}"). Empty entries are ignored; the order
// is kept, since the first match wins.
func ParseTopicMapping(s string) ([]TopicRoute, error) {
	var routes []TopicRoute
	for i, entry := range strings.Split(s, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		// A topic name has no ':', a pattern may.
		cut := strings.LastIndexByte(entry, ':')
		if cut < 0 {
			return nil, fmt.Errorf("entry %d %q has no ':'; write \"<table id pattern>[,<table id pattern>...]:<topic>\"", i+1, entry)
		}
		list, topic := strings.TrimSpace(entry[:cut]), strings.TrimSpace(entry[cut+1:])
		if list == "" {
			return nil, fmt.Errorf("entry %d %q has no table id before ':'", i+1, entry)
		}
		if !ValidTopic(topic) {
			return nil, fmt.Errorf("entry %d %q: %q is not a valid Kafka topic name: use 1 to 249 of A-Z a-z 0-9 . _ -", i+1, entry, topic)
		}
		route := TopicRoute{Topic: topic}
		for _, pattern := range splitPatterns(list) {
			pattern = strings.TrimSpace(pattern)
			if pattern == "" {
				return nil, fmt.Errorf("entry %d %q has an empty table id in its comma-separated list", i+1, entry)
			}
			re, err := regexp.Compile(`^(?:` + pattern + `)$`)
			if err != nil {
				return nil, fmt.Errorf("entry %d %q: the table id pattern %q does not compile: %v (the syntax is RE2)",
					i+1, entry, pattern, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
			route.Tables = append(route.Tables, TablePattern{Pattern: pattern, Re: re})
		}
		routes = append(routes, route)
	}
	if len(routes) == 0 {
		return nil, errors.New("the mapping has no entry; write \"<table id pattern>:<topic>\", entries separated by ';'")
	}
	return routes, nil
}

// splitPatterns splits list at its commas outside brackets, braces and
// parentheses and not escaped with '\\', so that a pattern keeps the
// commas of its repetitions ("t{1,3}") and classes ("[,.]"). As in RE2, a
// ']' first in a class ("[]a,]", "[^],]") is one of its characters.
func splitPatterns(list string) []string {
	var out []string
	depth, class, start := 0, false, 0
	for i := 0; i < len(list); i++ {
		switch c := list[i]; {
		case c == '\\':
			i++ // the escaped character, whatever it is
		case class:
			class = c != ']'
		case c == '[':
			class = true
			if i+1 < len(list) && list[i+1] == '^' {
				i++
			}
			if i+1 < len(list) && list[i+1] == ']' {
				i++
			}
		case c == '(' || c == '{':
			depth++
		case (c == ')' || c == '}') && depth > 0:
			depth--
		case c == ',' && depth == 0:
			out = append(out, list[start:i])
			start = i + 1
		}
	}
	return append(out, list[start:])
}

// CheckTableIDs returns a problem on table_topic_mapping for every table
// id pattern of it that matches none of ids, when ids are every table id
// the sink's source can produce (the source topics of a source whose
// values are not change events, the fixed "<schema>.<table>" of a
// source_table without _source): such a pattern routes nothing, which is
// a mistake rather than a mapping. what says where ids come from. A
// mapping that does not parse is Validate's to report.
func (s *KafkaSink) CheckTableIDs(ids []string, what string) Errors {
	col := newCollector()
	s.checkTableIDs(col, ids, what)
	return *col.errs
}

// checkTableIDs is [KafkaSink.CheckTableIDs] into col.
func (s *KafkaSink) checkTableIDs(col collector, ids []string, what string) {
	routes, err := ParseTopicMapping(s.TableTopicMapping)
	if s.TableTopicMapping == "" || err != nil {
		return
	}
	for _, r := range routes {
		for _, p := range r.Tables {
			if !slices.ContainsFunc(ids, p.Re.MatchString) {
				col.add("table_topic_mapping", "the table id pattern %q (of the entry for topic %q) matches none of the "+
					"table ids the sink's rows can have, %s: %s; its rows would never reach %q. Fix the pattern (it is "+
					"matched against the whole id) or remove it", p.Pattern, r.Topic, what, strings.Join(ids, ", "), r.Topic)
			}
		}
	}
}

// sourceTableIDs returns every table id the rows of the sink's topic
// source can have, when that is known at plan time: a source whose values
// are not change events names each row after its source topic, so the
// topics of topics or assign (not topic_pattern, whose topics come and
// go); ok is false otherwise.
func (s *KafkaSink) sourceTableIDs() (ids []string, ok bool) {
	ko := s.Source
	if ko == nil || ko.ValueTransformer.Changelog() || ko.TopicPattern != "" {
		return nil, false
	}
	ids = slices.Clone(ko.Topics)
	for _, t := range slices.Sorted(maps.Keys(ko.Assign)) {
		if !slices.Contains(ids, t) {
			ids = append(ids, t)
		}
	}
	return ids, len(ids) > 0
}

// sinkTablePath is where the paths of the source's layout problems start:
// they are those of a table, whose kafka_options are the sink's source.
const sinkTablePath = "connector_options.kafka_options"

// Validate returns every problem with s, each on its attribute path.
func (s *KafkaSink) Validate() Errors {
	col := newCollector()
	validateName(col, "name", s.Name)
	validateRequiredName(col, "connection_name", s.Connection, "a connection name (the cluster the sink writes to)")
	validateExactlyOne(col, 0, "a sink reads either a table's changes or topics",
		attrSet{"source", s.Source != nil}, attrSet{"source_table", s.SourceTable != ""})
	if s.SourceTable != "" {
		parts := strings.Split(s.SourceTable, ".")
		if len(parts) != 3 || slices.ContainsFunc(parts, func(p string) bool { return !ValidIdentifier(p) }) {
			col.add("source_table", "%q is not \"<catalog>.<schema>.<table>\" of three identifiers", s.SourceTable)
		}
	}
	if s.Source != nil {
		sc := col.at("source")
		s.Source.validate(sc)
		s.Source.refuseOnSink(sc)
		if len(*col.errs) == 0 {
			t := s.SourceTableSpec()
			_, errs := t.Layout()
			for _, e := range errs {
				e.Path = "source" + strings.TrimPrefix(e.Path, sinkTablePath)
				for i, p := range e.Involves {
					e.Involves[i] = "source" + strings.TrimPrefix(p, sinkTablePath)
				}
				*col.errs = append(*col.errs, e)
			}
		}
	}
	if s.Topic != "" && s.TableTopicMapping != "" {
		col.addInvolving("table_topic_mapping", []string{"topic"},
			"topic and table_topic_mapping are mutually exclusive: topic sends every row to one topic")
	}
	if s.Topic != "" && !ValidTopic(s.Topic) {
		col.add("topic", "%q is not a valid Kafka topic name: use 1 to 249 of A-Z a-z 0-9 . _ -", s.Topic)
	}
	if s.TableTopicMapping != "" {
		if _, err := ParseTopicMapping(s.TableTopicMapping); err != nil {
			col.add("table_topic_mapping", "%v", err)
		}
	}
	if ids, ok := s.sourceTableIDs(); ok {
		s.checkTableIDs(col, ids, "the source's topics (its values are not change events)")
	}
	s.validateNoLoop(col)
	validateEnum(col, "partition_strategy", s.PartitionStrategy, PartitionStrategies, map[string]string{
		"all-to-zero": PartitionAllToZero, "hash-by-key": PartitionHashByKey,
	})
	validateEnum(col, "value_format", s.ValueFormat, SinkFormats, map[string]string{
		"debezium-json": SinkFormatDebeziumJSON, "canal-json": SinkFormatCanalJSON, "json": SinkFormatJSON,
	})
	if s.Compression != "" {
		validateChoice(col, "compression", s.Compression, Compressions, "codecs")
	}
	validateEnum(col, "delivery_guarantee", s.DeliveryGuarantee, DeliveryGuarantees, map[string]string{
		"at-least-once": DeliveryAtLeastOnce, "exactly-once": DeliveryExactlyOnce,
	})
	if s.TransactionalID != "" && s.DeliveryGuarantee != DeliveryExactlyOnce {
		col.addInvolving("transactional_id", []string{"delivery_guarantee"},
			"transactional_id applies only to delivery_guarantee = %q", DeliveryExactlyOnce)
	}
	if s.EnableIdempotence != nil && !*s.EnableIdempotence && s.DeliveryGuarantee == DeliveryExactlyOnce {
		col.addInvolving("enable_idempotence", []string{"delivery_guarantee"},
			"enable_idempotence = false contradicts delivery_guarantee = %q, whose transactions are written by an "+
				"idempotent producer; remove enable_idempotence", DeliveryExactlyOnce)
	}
	if s.IncludeSchema != nil && *s.IncludeSchema && s.ValueFormat != "" && s.ValueFormat != SinkFormatDebeziumJSON {
		col.addInvolving("include_schema", []string{"value_format"},
			"include_schema applies only to value_format = %q", SinkFormatDebeziumJSON)
	}
	if s.FlushInterval != "" {
		d, err := time.ParseDuration(s.FlushInterval)
		switch {
		case err != nil:
			col.add("flush_interval", "%q is not a duration; write it like \"5s\", \"500ms\" or \"1m\"", s.FlushInterval)
		case d < 100*time.Millisecond:
			col.add("flush_interval", "%s is shorter than the minimum of 100ms", d)
		case s.DeliveryGuarantee == DeliveryExactlyOnce && d > time.Minute:
			col.add("flush_interval", "%s is longer than the 1m maximum of an exactly-once sink: its transaction timeout, "+
				"6 flush intervals, must stay well under the brokers' transaction.max.timeout.ms (15m by default)", d)
		}
	}
	return *col.errs
}

// validateNoLoop refuses a sink that would write into its own source,
// reading back what it wrote, forever: a target topic that the source
// reads, or, for a source whose values are not change events (whose rows
// then have no source table, and go to their own source topic by
// default), neither topic nor table_topic_mapping. The agent checks the
// topics rows name at run time too ([KafkaOptions.ReadsTopic]).
func (s *KafkaSink) validateNoLoop(col collector) {
	if s.Source == nil {
		return
	}
	loop := func(attr, topic string) {
		if s.Source.ReadsTopic(topic) {
			col.addInvolving(attr, []string{"source"}, "topic %q is one the source reads: the sink would read back "+
				"what it writes, forever; write to another topic", topic)
		}
	}
	if s.Topic != "" {
		loop("topic", s.Topic)
	}
	if routes, err := ParseTopicMapping(s.TableTopicMapping); s.TableTopicMapping != "" && err == nil {
		for _, r := range routes {
			loop("table_topic_mapping", r.Topic)
		}
	}
	if s.Topic == "" && s.TableTopicMapping == "" && !s.Source.ValueTransformer.Changelog() {
		col.addInvolving("topic", []string{"table_topic_mapping", "source.value_transformer"},
			"set topic or table_topic_mapping: the source's values are not change events (%s or %s), so their rows "+
				"have no source table and would go back to their own source topic", FormatDebeziumJSON, FormatCanalJSON)
	}
}

// ReadsTopic reports whether ko reads topic: one of its topics, a topic
// its topic_pattern matches whole, or a topic of its assign.
func (ko *KafkaOptions) ReadsTopic(topic string) bool {
	if slices.Contains(ko.Topics, topic) {
		return true
	}
	if _, ok := ko.Assign[topic]; ok {
		return true
	}
	if ko.TopicPattern != "" {
		re, err := CompileTopicPattern(ko.TopicPattern)
		return err == nil && re.MatchString(topic)
	}
	return false
}

// validateEnum checks that v, if set, is one of allowed; flink maps the
// spellings of Flink's options to ours, for a hint.
func validateEnum(col collector, attr, v string, allowed []string, flink map[string]string) {
	if v == "" || slices.Contains(allowed, v) {
		return
	}
	hint := ""
	if ours, ok := flink[strings.ToLower(v)]; ok {
		hint = fmt.Sprintf("; Flink's %q is %q here", v, ours)
	}
	col.add(attr, "%q is not one of %s%s", v, strings.Join(allowed, ", "), hint)
}

// refuseOnSink refuses, under the source collector sc of a sink, the
// options a sink does not honour: a sink never ends, writes as it reads
// rather than per trigger, and fails on a record that does not decode.
func (ko *KafkaOptions) refuseOnSink(sc collector) {
	ko.refuseEnding(sc, nil, "a Kafka sink runs until it is deleted")
	refused := append(ko.tableOnlyAttrs(), setAttrs(
		optionSet{"ignore_errors", ko.IgnoresErrors()},
		optionSet{"group_id", ko.GroupID != ""},
		optionSet{"group_id_prefix", ko.GroupIDPrefix != ""},
		// A sink reports no lag in bytes: only the default is accepted,
		// since Terraform plans it.
		optionSet{"bytes_estimate_window_length", ko.BytesEstimateWindowLength != "" &&
			ko.BytesEstimateWindow() != (&KafkaOptions{}).BytesEstimateWindow()},
	)...)
	for _, attr := range refused {
		sc.add(attr, "%s is not supported on a Kafka sink's source (its positions are in the group "+
			"\"tributary-sink.<name>\"); remove it", attr)
	}
	if !ko.FailsOnDataLoss() {
		sc.add("fail_on_data_loss", "fail_on_data_loss = false is not supported on a Kafka sink's source: the sink "+
			"fails when records it has not read are gone; remove it")
	}
	for _, side := range []struct {
		attr string
		tr   *Transformer
	}{{"key_transformer", ko.KeyTransformer}, {"value_transformer", ko.ValueTransformer}} {
		if side.tr == nil || side.tr.JSONOptions == nil {
			continue
		}
		jc := sc.at(side.attr).at("json_options")
		jo := side.tr.JSONOptions
		if len(jo.InitialSchemas) > 0 {
			jc.add("initial_schemas", "initial_schemas is not supported on a Kafka sink's source: the sink keeps no "+
				"table, its columns come from the records at every start; remove it (or declare them with schema)")
		}
		if jo.InferRecordsPerPartition != nil && *jo.InferRecordsPerPartition != DefaultInferRecordsPerPartition {
			jc.add("infer_records_per_partition", "infer_records_per_partition is not supported on a Kafka sink's "+
				"source: the sink takes its first columns from the first records it fetches, and new ones as they come; remove it")
		}
	}
}
