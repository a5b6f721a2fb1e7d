package spec

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseTopicMapping(t *testing.T) {
	routes, err := ParseTopicMapping(" db.t1:topic1; db\\.t[23]:topic2 ;")
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 2 || routes[0].Topic != "topic1" || routes[1].Tables[0].Pattern != `db\.t[23]` {
		t.Fatalf("routes = %+v", routes)
	}
	for id, want := range map[string]bool{"db.t2": true, "db.t3": true, "db.t4": false, "xdb.t2": false} {
		if got := routes[1].Match(id); got != want {
			t.Errorf("%q matches %v, want %v", id, got, want)
		}
	}
	// Flink's form: comma-separated table ids share a topic; commas of a
	// repetition, a class or an escape stay in their pattern.
	routes, err = ParseTopicMapping(`inventory.customers, inventory.orders:crm;inventory.products:catalog;db\.t{1,2},x[,]y,a\,b,[]z,]w,[^],]v:other`)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, r := range routes {
		var pats []string
		for _, p := range r.Tables {
			pats = append(pats, p.Pattern)
		}
		got = append(got, append(pats, "->"+r.Topic))
	}
	want := [][]string{{"inventory.customers", "inventory.orders", "->crm"}, {"inventory.products", "->catalog"},
		{`db\.t{1,2}`, "x[,]y", `a\,b`, "[]z,]w", "[^],]v", "->other"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("routes %q, want %q", got, want)
	}
	for id, want := range map[string]bool{"inventory.customers": true, "inventory.orders": true, "inventory.products": false,
		"inventory.customers,inventory.orders": false} {
		if got := routes[0].Match(id); got != want {
			t.Errorf("crm: %q matches %v, want %v", id, got, want)
		}
	}
	for _, id := range []string{"db.tt", "x,y", "a,b", "]w", ",w", "av"} {
		if !routes[2].Match(id) {
			t.Errorf("other: %q does not match", id)
		}
	}
	for _, bad := range []struct{ in, want string }{
		{"", "no entry"},
		{"db.t1", "has no ':'"},
		{":t", "no table id"},
		{"a:b c", "not a valid Kafka topic name"},
		{"a(:t", "does not compile"},
		{"a,,b:t", "empty table id"},
		{"a,(:t", `pattern "(" does not compile`},
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
		!k.Headers() || *k.FullTableID || !k.Idempotent() || !*k.EnableIdempotence || k.TxnID() != "tributary-sink.s" || k.Group() != "tributary-sink.s" {
		t.Fatalf("defaults: %+v", k)
	}
	// Change events go to their table's topic: no topic needed.
	k = valid()
	k.Topic, k.Source.ValueTransformer = "", &Transformer{Format: FormatDebeziumJSON}
	k.Normalize()
	if errs := k.Validate(); len(errs) > 0 {
		t.Fatalf("a sink of change events without a topic: %v", errs)
	}
	// Its table ids come from the events: no pattern is refused.
	k.TableTopicMapping = "nowhere.t:a"
	if errs := k.Validate(); len(errs) > 0 {
		t.Fatalf("a mapping of change events: %v", errs)
	}
	// A topic_pattern source's topics are not known at plan time.
	k = valid()
	k.Topic, k.TableTopicMapping, k.Source.Topics, k.Source.TopicPattern = "", "other:a", nil, "in.*"
	if errs := k.Validate(); len(errs) > 0 {
		t.Fatalf("a mapping of a topic_pattern source: %v", errs)
	}
	// Every pattern of the source's topics matches one: valid.
	k = valid()
	k.Topic, k.Source.Topics, k.TableTopicMapping = "", []string{"in", "in2"}, "in:a;in2:b"
	if errs := k.Validate(); len(errs) > 0 {
		t.Fatalf("a mapping of every source topic: %v", errs)
	}
	// The default window written as Spark writes it is the default.
	k = valid()
	k.Source.BytesEstimateWindowLength = "300s"
	if errs := k.Validate(); len(errs) > 0 {
		t.Fatalf("the default bytes_estimate_window_length as 300s: %v", errs)
	}
	k = valid()
	k.Topic, k.Source.Topics, k.TableTopicMapping = "", []string{"in", "in2"}, "in:a;in2:b"
	if errs := k.CheckTableIDs([]string{"raw.t"}, "the table's"); len(errs) != 2 || errs[0].Path != "table_topic_mapping" {
		t.Fatalf("CheckTableIDs: %v", errs)
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
		{"idempotence off exactly once", func(k *KafkaSink) { off := false; k.DeliveryGuarantee, k.EnableIdempotence = DeliveryExactlyOnce, &off },
			"enable_idempotence", "contradicts"},
		{"mapping matches no source topic", func(k *KafkaSink) { k.Topic, k.TableTopicMapping = "", "in:a;inn,other:b" },
			"table_topic_mapping", `pattern "inn" (of the entry for topic "b") matches none`},
		{"mapping matches no assigned topic", func(k *KafkaSink) {
			k.Topic, k.TableTopicMapping, k.Source.Topics, k.Source.Assign = "", "x:a", nil, map[string][]int{"in": {0}}
		}, "table_topic_mapping", `pattern "x"`},
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
