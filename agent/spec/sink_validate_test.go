package spec

import (
	"strings"
	"testing"
)

func TestParseTopicMapping(t *testing.T) {
	routes, err := ParseTopicMapping(" db.t1:topic1; db\\.t[23]:topic2 ;")
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 2 || routes[0].Topic != "topic1" || routes[1].Pattern != `db\.t[23]` {
		t.Fatalf("routes = %+v", routes)
	}
	for id, want := range map[string]bool{"db.t2": true, "db.t3": true, "db.t4": false, "xdb.t2": false} {
		if got := routes[1].Tables.MatchString(id); got != want {
			t.Errorf("%q matches %v, want %v", id, got, want)
		}
	}
	for _, bad := range []struct{ in, want string }{
		{"", "no entry"},
		{"db.t1", "has no ':'"},
		{":t", "no table id"},
		{"a:b c", "not a valid Kafka topic name"},
		{"a(:t", "does not compile"},
	} {
		if _, err := ParseTopicMapping(bad.in); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseTopicMapping(%q) = %v, want an error containing %q", bad.in, err, bad.want)
		}
	}
}

func TestKafkaSinkValidate(t *testing.T) {
	valid := func() *KafkaSink {
		k := &KafkaSink{Name: "s", Connection: "c", Topic: "out", Source: &KafkaOptions{Topics: []string{"in"}}}
		k.Normalize()
		return k
	}
	if errs := valid().Validate(); len(errs) > 0 {
		t.Fatalf("a valid sink: %v", errs)
	}
	k := valid()
	if k.PartitionStrategy != PartitionAllToZero || k.ValueFormat != SinkFormatDebeziumJSON || k.DeliveryGuarantee != DeliveryAtLeastOnce ||
		!k.Headers() || *k.FullTableID || k.TxnID() != "tributary-sink.s" || k.Group() != "tributary-sink.s" {
		t.Fatalf("defaults: %+v", k)
	}
	// Change events go to their table's topic: no topic needed.
	k = valid()
	k.Topic, k.Source.ValueTransformer = "", &Transformer{Format: FormatDebeziumJSON}
	k.Normalize()
	if errs := k.Validate(); len(errs) > 0 {
		t.Fatalf("a sink of change events without a topic: %v", errs)
	}
	for _, tc := range []struct {
		name   string
		change func(*KafkaSink)
		path   string
		detail string
	}{
		{"no source", func(k *KafkaSink) { k.Source = nil }, "source", "one of source or source_table is required"},
		{"two sources", func(k *KafkaSink) { k.SourceTable = "main.raw.t" }, "source", "mutually exclusive"},
		{"bad table", func(k *KafkaSink) { k.Source, k.SourceTable = nil, "raw.t" }, "source_table", "three identifiers"},
		{"source topic", func(k *KafkaSink) { k.Source.Topics = []string{"a b"} }, "source.topics[0]", "not a valid Kafka topic"},
		{"source columns", func(k *KafkaSink) {
			k.Source.ValueTransformer = &Transformer{Format: FormatJSON, JSONOptions: &JSONOptions{Schema: "id BIGINT, id STRING"}}
		}, "source.value_transformer", "id"},
		{"ending", func(k *KafkaSink) { k.Source.EndingOffset = "latest" }, "source.ending_offset", "until it is deleted"},
		{"budget", func(k *KafkaSink) { on := true; k.Source.IgnoreErrors = &on }, "source.ignore_errors", "not supported on a Kafka sink"},
		{"bytes estimate window", func(k *KafkaSink) { k.Source.BytesEstimateWindowLength = "10m" },
			"source.bytes_estimate_window_length", "not supported on a Kafka sink"},
		{"flink strategy", func(k *KafkaSink) { k.PartitionStrategy = "hash-by-key" }, "partition_strategy", `Flink's "hash-by-key" is "HASH_BY_KEY"`},
		{"format", func(k *KafkaSink) { k.ValueFormat = "AVRO" }, "value_format", "not one of"},
		{"guarantee", func(k *KafkaSink) { k.DeliveryGuarantee = "exactly-once" }, "delivery_guarantee", `"EXACTLY_ONCE"`},
		{"compression case", func(k *KafkaSink) { k.Compression = "zstd" }, "compression", `codecs are upper case: "ZSTD"`},
		{"compression", func(k *KafkaSink) { k.Compression = "BROTLI" }, "compression", "not one of NONE, GZIP, SNAPPY, LZ4, ZSTD"},
		{"compression as a property", func(k *KafkaSink) { k.Source.ClientProperties = map[string]string{"compression.type": "gzip"} },
			"source.client_properties", "compression of a tributary_kafka_sink"},
		{"topic and mapping", func(k *KafkaSink) { k.Topic, k.TableTopicMapping = "t", "a:b" }, "table_topic_mapping", "mutually exclusive"},
		{"bad topic", func(k *KafkaSink) { k.Topic = "a/b" }, "topic", "not a valid"},
		{"transactional id", func(k *KafkaSink) { k.TransactionalID = "x" }, "transactional_id", "EXACTLY_ONCE"},
		{"schema of JSON", func(k *KafkaSink) { k.ValueFormat = SinkFormatJSON; *k.IncludeSchema = true }, "include_schema", "DEBEZIUM_JSON"},
		{"flush", func(k *KafkaSink) { k.FlushInterval = "10ms" }, "flush_interval", "minimum"},
		{"loop by topic", func(k *KafkaSink) { k.Topic = "in" }, "topic", "the source reads"},
		{"loop by mapping", func(k *KafkaSink) { k.Topic, k.TableTopicMapping = "", "db.t:other;.*:in" }, "table_topic_mapping", `topic "in"`},
		{"loop by pattern", func(k *KafkaSink) { k.Source.Topics, k.Source.TopicPattern, k.Topic = nil, "in.*", "in2" }, "topic", "the source reads"},
		{"default topic of rows", func(k *KafkaSink) { k.Topic = "" }, "topic", "set topic or table_topic_mapping"},
		{"data loss", func(k *KafkaSink) { off := false; k.Source.FailOnDataLoss = &off }, "source.fail_on_data_loss", "not supported"},
		{"initial schemas", func(k *KafkaSink) {
			k.Source.ValueTransformer = &Transformer{Format: FormatJSON, JSONOptions: &JSONOptions{SchemaEvolutionMode: SchemaEvolutionAddNewColumns,
				InitialSchemas: map[string]string{"t": "id BIGINT"}}}
		}, "source.value_transformer.json_options.initial_schemas", "not supported"},
		{"infer records", func(k *KafkaSink) {
			n := int64(10)
			k.Source.ValueTransformer = &Transformer{Format: FormatJSON, JSONOptions: &JSONOptions{SchemaEvolutionMode: SchemaEvolutionAddNewColumns,
				InferRecordsPerPartition: &n}}
		}, "source.value_transformer.json_options.infer_records_per_partition", "not supported"},
		{"long txn", func(k *KafkaSink) { k.DeliveryGuarantee, k.FlushInterval = DeliveryExactlyOnce, "2m" }, "flush_interval", "1m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := valid()
			tc.change(k)
			for _, e := range k.Validate() {
				if strings.HasPrefix(e.Path, tc.path) && strings.Contains(e.Detail, tc.detail) {
					return
				}
			}
			t.Fatalf("problems %v, want one at %s containing %q", k.Validate(), tc.path, tc.detail)
		})
	}
}
