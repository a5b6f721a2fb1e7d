package spec

import (
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

// triggered makes p a triggered pipeline.
func triggered(p *Pipeline) { p.Continuous = ptr(false) }

func TestKafkaOptionsValidate(t *testing.T) {
	ko := func(p *Pipeline) *KafkaOptions { return &p.Tables[0].ConnectorOptions.KafkaOptions }
	offsets := func(topic, part string, v int64) map[string]map[string]int64 {
		return map[string]map[string]int64{topic: {part: v}}
	}
	const kp = "table[0].connector_options.kafka_options."
	tests := []pipelineCase{
		// Subscriptions.
		{"assign", func(p *Pipeline) { ko(p).Topics = nil; ko(p).Assign = map[string][]int{"events": {0, 2}} }, "", ""},
		{"topics and assign", func(p *Pipeline) { ko(p).Assign = map[string][]int{"events": {0}} }, kp + "topics",
			"topics and assign are mutually exclusive; set only one of topics, topic_pattern and assign"},
		{"pattern and assign", func(p *Pipeline) {
			ko(p).Topics, ko(p).TopicPattern, ko(p).Assign = nil, "ev.*", map[string][]int{"events": {0}}
		}, kp + "topic_pattern", "topic_pattern and assign are mutually exclusive"},
		{"all three", func(p *Pipeline) { ko(p).TopicPattern = "ev.*"; ko(p).Assign = map[string][]int{"events": {0}} }, kp + "topics",
			"topics and topic_pattern and assign are mutually exclusive"},
		{"none", func(p *Pipeline) { ko(p).Topics = nil }, kp + "topics", "one of topics, topic_pattern or assign is required"},
		{"assign empty", func(p *Pipeline) { ko(p).Topics = nil; ko(p).Assign = map[string][]int{} }, kp + "assign", "assign is empty"},
		{"assign no partitions", func(p *Pipeline) { ko(p).Topics = nil; ko(p).Assign = map[string][]int{"events": {}} }, kp + "assign",
			`topic "events" lists no partitions`},
		{"assign negative partition", func(p *Pipeline) { ko(p).Topics = nil; ko(p).Assign = map[string][]int{"events": {-1}} }, kp + "assign",
			`topic "events": -1 is not a partition number`},
		{"assign partition twice", func(p *Pipeline) { ko(p).Topics = nil; ko(p).Assign = map[string][]int{"events": {1, 1}} }, kp + "assign",
			`topic "events" lists partition 1 twice`},
		{"assign bad topic", func(p *Pipeline) { ko(p).Topics = nil; ko(p).Assign = map[string][]int{"bad topic": {0}} }, kp + "assign",
			`"bad topic" is not a valid Kafka topic name`},

		// Starting positions.
		{"specific", func(p *Pipeline) {
			ko(p).StartingOffset, ko(p).StartingOffsets = StartingOffsetSpecific, map[string]map[string]int64{"events": {"0": 23, "1": -2, "2": -1}}
		}, "", ""},
		{"specific without offsets", func(p *Pipeline) { ko(p).StartingOffset = StartingOffsetSpecific }, kp + "starting_offsets",
			`starting_offset = "specific" needs starting_offsets`},
		{"offsets without specific", func(p *Pipeline) { ko(p).StartingOffsets = offsets("events", "0", 1) }, kp + "starting_offsets",
			`starting_offsets applies only with starting_offset = "specific" (it is "latest"); set starting_offset = "specific" or remove starting_offsets`},
		{"offset below -2", func(p *Pipeline) {
			ko(p).StartingOffset, ko(p).StartingOffsets = StartingOffsetSpecific, offsets("events", "0", -3)
		}, kp + "starting_offsets", `topic "events" partition 0: -3 is not -2 (earliest), -1 (latest) or an offset from 0`},
		{"partition key not a number", func(p *Pipeline) {
			ko(p).StartingOffset, ko(p).StartingOffsets = StartingOffsetSpecific, offsets("events", "p0", 1)
		}, kp + "starting_offsets", `topic "events": partition "p0" is not a partition number`},
		{"partition key negative", func(p *Pipeline) {
			ko(p).StartingOffset, ko(p).StartingOffsets = StartingOffsetSpecific, offsets("events", "-1", 1)
		}, kp + "starting_offsets", `partition "-1" is not a partition number`},
		{"partition key leading zero", func(p *Pipeline) {
			ko(p).StartingOffset, ko(p).StartingOffsets = StartingOffsetSpecific, offsets("events", "01", 1)
		}, kp + "starting_offsets", `partition "01" is not a partition number`},
		{"offsets of a topic not read", func(p *Pipeline) {
			ko(p).StartingOffset, ko(p).StartingOffsets = StartingOffsetSpecific, offsets("orders", "0", 1)
		}, kp + "starting_offsets", `topic "orders" partition 0: the table does not read this topic: it is not in topics`},
		{"offsets of a topic the pattern misses", func(p *Pipeline) {
			ko(p).Topics, ko(p).TopicPattern = nil, "ev.*"
			ko(p).StartingOffset, ko(p).StartingOffsets = StartingOffsetSpecific, offsets("orders", "0", 1)
		}, kp + "starting_offsets", "it does not match topic_pattern"},
		{"offsets of a partition not assigned", func(p *Pipeline) {
			ko(p).Topics, ko(p).Assign = nil, map[string][]int{"events": {0}}
			ko(p).StartingOffset, ko(p).StartingOffsets = StartingOffsetSpecific, offsets("events", "1", 1)
		}, kp + "starting_offsets", "the table does not read this partition: assign does not list it"},
		{"timestamp", func(p *Pipeline) {
			ko(p).StartingOffset, ko(p).StartingTimestamp = StartingOffsetTimestamp, "2023-11-14T22:13:20Z"
		}, "", ""},
		{"timestamp by partition", func(p *Pipeline) {
			ko(p).StartingOffset, ko(p).StartingOffsetsByTimestamp = StartingOffsetTimestamp, offsets("events", "0", 1_700_000_000_000)
		}, "", ""},
		{"timestamp without time", func(p *Pipeline) { ko(p).StartingOffset = StartingOffsetTimestamp }, kp + "starting_timestamp",
			`starting_offset = "timestamp" needs starting_timestamp (one time for every partition) or starting_offsets_by_timestamp`},
		{"timestamp both", func(p *Pipeline) {
			ko(p).StartingOffset, ko(p).StartingTimestamp = StartingOffsetTimestamp, "0"
			ko(p).StartingOffsetsByTimestamp = offsets("events", "0", 1)
		}, kp + "starting_offsets_by_timestamp", "starting_timestamp and starting_offsets_by_timestamp are mutually exclusive"},
		{"timestamp without mode", func(p *Pipeline) { ko(p).StartingTimestamp = "0" }, kp + "starting_timestamp",
			`starting_timestamp applies only with starting_offset = "timestamp"`},
		{"timestamps without mode", func(p *Pipeline) { ko(p).StartingOffsetsByTimestamp = offsets("events", "0", 1) }, kp + "starting_offsets_by_timestamp",
			`starting_offsets_by_timestamp applies only with starting_offset = "timestamp"`},
		{"timestamp does not parse", func(p *Pipeline) {
			ko(p).StartingOffset, ko(p).StartingTimestamp = StartingOffsetTimestamp, "yesterday"
		}, kp + "starting_timestamp", `"yesterday" is neither milliseconds since the epoch`},
		{"negative timestamp", func(p *Pipeline) {
			ko(p).StartingOffset, ko(p).StartingOffsetsByTimestamp = StartingOffsetTimestamp, offsets("events", "0", -1)
		}, kp + "starting_offsets_by_timestamp", "-1 is not milliseconds since the epoch, from 0"},
		{"group", func(p *Pipeline) {
			ko(p).StartingOffset = StartingOffsetGroup
			ko(p).AutoOffsetReset = AutoOffsetResetNone
		}, "", ""},
		{"auto_offset_reset", func(p *Pipeline) { ko(p).AutoOffsetReset = "smallest" }, kp + "auto_offset_reset",
			`"smallest" is not one of latest, earliest, none`},

		// Ending positions.
		{"ending on a triggered pipeline", func(p *Pipeline) {
			triggered(p)
			ko(p).EndingOffset, ko(p).EndingOffsets = EndingOffsetSpecific, offsets("events", "0", 100)
		}, "", ""},
		{"ending on a continuous pipeline", func(p *Pipeline) { ko(p).EndingOffset = EndingOffsetLatest }, kp + "ending_offset",
			"ending_offset applies only to a triggered pipeline (continuous = false): a continuous pipeline never ends; set continuous = false or remove ending_offset"},
		{"ending_timestamp on a continuous pipeline", func(p *Pipeline) {
			ko(p).EndingOffset, ko(p).EndingTimestamp = EndingOffsetTimestamp, "0"
		}, kp + "ending_timestamp", "ending_timestamp applies only to a triggered pipeline"},
		{"ending_offset", func(p *Pipeline) { triggered(p); ko(p).EndingOffset = "earliest" }, kp + "ending_offset",
			`"earliest" is not one of latest, specific, timestamp`},
		{"ending specific without offsets", func(p *Pipeline) { triggered(p); ko(p).EndingOffset = EndingOffsetSpecific }, kp + "ending_offsets",
			`ending_offset = "specific" needs ending_offsets`},
		{"ending offsets without specific", func(p *Pipeline) { triggered(p); ko(p).EndingOffsets = offsets("events", "0", 1) }, kp + "ending_offsets",
			`ending_offsets applies only with ending_offset = "specific" (it is "latest")`},
		{"ending offset -2", func(p *Pipeline) {
			triggered(p)
			ko(p).EndingOffset, ko(p).EndingOffsets = EndingOffsetSpecific, offsets("events", "0", -2)
		}, kp + "ending_offsets", "-2 is not -1 (latest) or an offset from 0"},
		{"ending timestamp without time", func(p *Pipeline) { triggered(p); ko(p).EndingOffset = EndingOffsetTimestamp }, kp + "ending_timestamp",
			`ending_offset = "timestamp" needs ending_timestamp`},
		{"ending timestamp without mode", func(p *Pipeline) { triggered(p); ko(p).EndingTimestamp = "0" }, kp + "ending_timestamp",
			`ending_timestamp applies only with ending_offset = "timestamp"`},
		{"ending timestamps both", func(p *Pipeline) {
			triggered(p)
			ko(p).EndingOffset, ko(p).EndingTimestamp, ko(p).EndingOffsetsByTimestamp = EndingOffsetTimestamp, "0", offsets("events", "0", 1)
		}, kp + "ending_offsets_by_timestamp", "mutually exclusive"},
		{"end before start", func(p *Pipeline) {
			triggered(p)
			ko(p).StartingOffset, ko(p).StartingOffsets = StartingOffsetSpecific, offsets("events", "0", 50)
			ko(p).EndingOffset, ko(p).EndingOffsets = EndingOffsetSpecific, offsets("events", "0", 10)
		}, kp + "ending_offsets", `topic "events" partition 0 ends at offset 10, before its starting offset 50`},
		{"end at a position after start", func(p *Pipeline) {
			triggered(p)
			ko(p).StartingOffset, ko(p).StartingOffsets = StartingOffsetSpecific, offsets("events", "0", 50)
			ko(p).EndingOffset, ko(p).EndingOffsets = EndingOffsetSpecific, offsets("events", "0", -1)
		}, "", ""},
		{"end time before start time", func(p *Pipeline) {
			triggered(p)
			ko(p).StartingOffset, ko(p).StartingTimestamp = StartingOffsetTimestamp, "2024-01-02T00:00:00Z"
			ko(p).EndingOffset, ko(p).EndingTimestamp = EndingOffsetTimestamp, "2024-01-01T00:00:00Z"
		}, kp + "ending_timestamp", "is before starting_timestamp"},

		// Flow control and splitting.
		{"rate control", func(p *Pipeline) {
			ko(p).MaxOffsetsPerTrigger, ko(p).MinOffsetsPerTrigger, ko(p).MaxTriggerDelay = ptr(int64(1000)), ptr(int64(10)), "1m"
		}, "", ""},
		{"max offsets zero", func(p *Pipeline) { ko(p).MaxOffsetsPerTrigger = ptr(int64(0)) }, kp + "max_offsets_per_trigger", "less than the minimum of 1"},
		{"min offsets zero", func(p *Pipeline) { ko(p).MinOffsetsPerTrigger = ptr(int64(0)) }, kp + "min_offsets_per_trigger", "less than the minimum of 1"},
		{"min above max", func(p *Pipeline) {
			ko(p).MaxOffsetsPerTrigger, ko(p).MinOffsetsPerTrigger = ptr(int64(10)), ptr(int64(11))
		}, kp + "min_offsets_per_trigger", "min_offsets_per_trigger 11 is more than max_offsets_per_trigger 10"},
		{"delay without min", func(p *Pipeline) { ko(p).MaxTriggerDelay = "1m" }, kp + "max_trigger_delay",
			"max_trigger_delay applies only with min_offsets_per_trigger"},
		{"delay does not parse", func(p *Pipeline) { ko(p).MinOffsetsPerTrigger, ko(p).MaxTriggerDelay = ptr(int64(1)), "15" }, kp + "max_trigger_delay",
			`"15" is not a positive duration`},
		{"min partitions", func(p *Pipeline) { ko(p).MinPartitions = ptr(int64(2000)) }, kp + "min_partitions", "more than the maximum of 1024"},
		{"max records per partition", func(p *Pipeline) { ko(p).MaxRecordsPerPartition = ptr(int64(-5)) }, kp + "max_records_per_partition",
			"less than the minimum of 1"},

		// Discovery, group, client properties.
		{"discovery off", func(p *Pipeline) { ko(p).PartitionDiscoveryInterval = "-1s" }, "", ""},
		{"discovery does not parse", func(p *Pipeline) { ko(p).PartitionDiscoveryInterval = "5" }, kp + "partition_discovery_interval", "not a duration"},
		{"discovery too often", func(p *Pipeline) { ko(p).PartitionDiscoveryInterval = "10ms" }, kp + "partition_discovery_interval",
			`shorter than the minimum of 1s; use "0s" to turn discovery off`},
		{"bytes estimate window", func(p *Pipeline) { ko(p).BytesEstimateWindowLength = "600s" }, "", ""},
		{"bytes estimate window does not parse", func(p *Pipeline) { ko(p).BytesEstimateWindowLength = "10" },
			kp + "bytes_estimate_window_length", `"10" is not a duration of at least 1s`},
		{"bytes estimate window too short", func(p *Pipeline) { ko(p).BytesEstimateWindowLength = "500ms" },
			kp + "bytes_estimate_window_length", `"500ms" is not a duration of at least 1s`},
		{"group id and prefix", func(p *Pipeline) { ko(p).GroupID, ko(p).GroupIDPrefix = "g", "p." }, kp + "group_id_prefix",
			"group_id and group_id_prefix are mutually exclusive"},
		{"group id spaces", func(p *Pipeline) { ko(p).GroupID = " g" }, kp + "group_id", "surrounding spaces"},
		{"group id long", func(p *Pipeline) { ko(p).GroupID = strings.Repeat("g", 256) }, kp + "group_id", "more than the maximum of 255"},
		{"client properties", func(p *Pipeline) {
			ko(p).ClientProperties = map[string]string{"client.id": "ingest", "fetch.min.bytes": "1024", "fetch.max.wait.ms": "250"}
		}, "", ""},
		{"client properties empty", func(p *Pipeline) { ko(p).ClientProperties = map[string]string{} }, kp + "client_properties",
			"client_properties is empty; remove it"},
		{"client property unknown", func(p *Pipeline) { ko(p).ClientProperties = map[string]string{"max.poll.records": "5"} }, kp + "client_properties",
			`key "max.poll.records" is not supported; the supported keys are client.id, fetch.max.bytes, fetch.max.wait.ms, fetch.min.bytes, ` +
				"max.partition.fetch.bytes, metadata.max.age.ms, request.timeout.ms, socket.connection.setup.timeout.ms"},
		{"client property with an attribute", func(p *Pipeline) { ko(p).ClientProperties = map[string]string{"group.id": "g"} }, kp + "client_properties",
			`key "group.id" is not a client property here: set group_id (or group_id_prefix) instead`},
		{"client property isolation", func(p *Pipeline) { ko(p).ClientProperties = map[string]string{"isolation.level": "read_committed"} },
			kp + "client_properties", "set isolation_level instead"},
		{"client property sasl", func(p *Pipeline) { ko(p).ClientProperties = map[string]string{"sasl.mechanism": "PLAIN"} },
			kp + "client_properties", `key "sasl.mechanism" is not a client property here: set sasl.mechanism of the tributary_connection`},
		{"client property jaas", func(p *Pipeline) {
			ko(p).ClientProperties = map[string]string{"kafka.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required;"}
		}, kp + "client_properties", `key "sasl.jaas.config" is not a client property here: set the sasl block: username and password ` +
			"(PLAIN, SCRAM), oauth (OAUTHBEARER), or sasl.mechanism AWS_MSK_IAM, AZURE_EVENT_HUBS_ENTRA_ID or GCP_MANAGED_KAFKA_IAM"},
		{"client property login callback", func(p *Pipeline) {
			ko(p).ClientProperties = map[string]string{"sasl.login.callback.handler.class": "com.google.cloud.hosted.kafka.auth.GcpLoginCallbackHandler"}
		}, kp + "client_properties", "set sasl.oauth (token_endpoint_url, client_id, client_secret, scope) instead of Kafka's " +
			"OAuthBearerLoginCallbackHandler, or sasl.mechanism AWS_MSK_IAM, AZURE_EVENT_HUBS_ENTRA_ID or GCP_MANAGED_KAFKA_IAM"},
		{"client property client callback", func(p *Pipeline) {
			ko(p).ClientProperties = map[string]string{"sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler"}
		}, kp + "client_properties", "set sasl.mechanism AWS_MSK_IAM, AZURE_EVENT_HUBS_ENTRA_ID or GCP_MANAGED_KAFKA_IAM instead"},
		{"client property kerberos", func(p *Pipeline) { ko(p).ClientProperties = map[string]string{"sasl.kerberos.service.name": "kafka"} },
			kp + "client_properties", `key "sasl.kerberos.service.name" is not supported: the agent has no Kerberos (GSSAPI)`},
		{"client property trust store", func(p *Pipeline) { ko(p).ClientProperties = map[string]string{"ssl.truststore.location": "/t.jks"} },
			kp + "client_properties", "set tls.ca_pem (the trust store's CA certificates as PEM) of the tributary_connection"},
		{"client property other sasl", func(p *Pipeline) {
			ko(p).ClientProperties = map[string]string{"sasl.login.refresh.window.factor": "0.8"}
		},
			kp + "client_properties", "set it with the security settings of the tributary_connection"},
		{"client property of membership", func(p *Pipeline) { ko(p).ClientProperties = map[string]string{"session.timeout.ms": "10000"} },
			kp + "client_properties", "the agent does not join the consumer group (it commits offsets for lag tools only)"},
		{"client property with Spark's prefix", func(p *Pipeline) { ko(p).ClientProperties = map[string]string{"kafka.fetch.min.bytes": "1"} },
			kp + "client_properties", `as "fetch.min.bytes"`},
		{"client property with Flink's prefix and an attribute", func(p *Pipeline) {
			ko(p).ClientProperties = map[string]string{"properties.group.id": "g"}
		}, kp + "client_properties", `key "properties.group.id": without Spark's "kafka." or Flink's "properties." prefix, key "group.id" is not a client property here: set group_id`},
		{"client property not a number", func(p *Pipeline) { ko(p).ClientProperties = map[string]string{"fetch.min.bytes": "1k"} },
			kp + "client_properties", `fetch.min.bytes = "1k" is not a whole number of bytes`},
		{"client property out of range", func(p *Pipeline) { ko(p).ClientProperties = map[string]string{"request.timeout.ms": "10"} },
			kp + "client_properties", "request.timeout.ms = 10 is out of range: use from 1000 to 600000 milliseconds"},
		{"client properties contradict", func(p *Pipeline) {
			ko(p).ClientProperties = map[string]string{"fetch.min.bytes": "2048", "fetch.max.bytes": "1024"}
		}, kp + "client_properties", "fetch.min.bytes = 2048 is more than fetch.max.bytes = 1024"},
	}
	runPipelineCases(t, tests, nil)
}

// TestKafkaOptionsInvolves: a rule that reads another attribute says so,
// so that the provider drops it while that attribute is unknown.
func TestKafkaOptionsInvolves(t *testing.T) {
	const kp = "table[0].connector_options.kafka_options."
	p := validPipeline()
	p.Tables[0].ConnectorOptions.KafkaOptions.EndingOffset = EndingOffsetLatest
	e := findProblem(t, p.Validate(), kp+"ending_offset", "triggered pipeline")
	if len(e.Involves) != 1 || e.Involves[0] != "continuous" {
		t.Errorf("ending_offset on a continuous pipeline involves %v, want [continuous]", e.Involves)
	}
}

func TestFanoutRefusesTableOnlyOptions(t *testing.T) {
	const kp = "connector_options.kafka_options."
	for attr, set := range map[string]func(ko *KafkaOptions){
		"max_offsets_per_trigger":   func(ko *KafkaOptions) { ko.MaxOffsetsPerTrigger = ptr(int64(10)) },
		"min_offsets_per_trigger":   func(ko *KafkaOptions) { ko.MinOffsetsPerTrigger = ptr(int64(10)) },
		"max_trigger_delay":         func(ko *KafkaOptions) { ko.MaxTriggerDelay = "1m" },
		"min_partitions":            func(ko *KafkaOptions) { ko.MinPartitions = ptr(int64(4)) },
		"max_records_per_partition": func(ko *KafkaOptions) { ko.MaxRecordsPerPartition = ptr(int64(1000)) },
	} {
		t.Run(attr, func(t *testing.T) {
			f := validFanout()
			set(&f.ConnectorOptions.KafkaOptions)
			wantProblem(t, f.Validate(), kp+attr, attr+" is not supported on fanout schemas")
		})
	}
	f := validFanout()
	ko := &f.ConnectorOptions.KafkaOptions
	ko.Topics, ko.Assign = nil, map[string][]int{"events": {0}}
	ko.StartingOffset, ko.StartingOffsets = StartingOffsetSpecific, map[string]map[string]int64{"events": {"0": 5}}
	ko.FailOnDataLoss, ko.GroupIDPrefix = ptr(false), "etl."
	wantProblem(t, f.Validate(), "", "")
}

func TestFanoutValidateWith(t *testing.T) {
	f := validFanout()
	f.ConnectorOptions.KafkaOptions.EndingOffset = EndingOffsetLatest
	p := validPipeline()
	wantProblem(t, f.ValidateWith(p), "connector_options.kafka_options.ending_offset",
		`ending_offset applies only to a triggered pipeline (continuous = false): pipeline "p1" is continuous and never ends`)
	triggered(p)
	wantProblem(t, f.ValidateWith(p), "", "")
}

func TestKafkaOptionsNormalize(t *testing.T) {
	p := validPipeline()
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	want := KafkaOptions{AutoOffsetReset: "latest", PartitionDiscoveryInterval: "5m"}
	if ko.AutoOffsetReset != want.AutoOffsetReset || ko.PartitionDiscoveryInterval != want.PartitionDiscoveryInterval ||
		!ko.FailsOnDataLoss() || ko.FailOnDataLoss == nil || ko.CheckDuplicatedGroupID == nil || ko.ChecksDuplicatedGroupID() ||
		ko.MaxTriggerDelay != "" || ko.EndingOffset != "" || ko.GroupIDPrefix != "" {
		t.Errorf("normalized continuous table options = %+v", ko)
	}

	p = validPipeline()
	triggered(p)
	ko = &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.MinOffsetsPerTrigger = ptr(int64(5))
	p.Normalize()
	if ko.EndingOffset != EndingOffsetLatest || ko.MaxTriggerDelay != DefaultMaxTriggerDelay {
		t.Errorf("triggered table: ending_offset %q, max_trigger_delay %q; want latest and the default", ko.EndingOffset, ko.MaxTriggerDelay)
	}
	if errs := p.Validate(); len(errs) > 0 {
		t.Errorf("a normalized triggered pipeline does not validate: %v", errs)
	}
	if got := ko.TriggerDelay(); got != 15*time.Minute {
		t.Errorf("TriggerDelay() = %v", got)
	}
	for in, want := range map[string]time.Duration{"": 5 * time.Minute, "30s": 30 * time.Second, "0s": 0, "-1m": 0} {
		ko.PartitionDiscoveryInterval = in
		if got := ko.DiscoverEvery(); got != want {
			t.Errorf("DiscoverEvery() of %q = %v, want %v", in, got, want)
		}
	}
}

func TestClientSettings(t *testing.T) {
	ko := KafkaOptions{ClientProperties: map[string]string{
		"client.id": "ingest-1", "fetch.min.bytes": "1024", "fetch.max.bytes": "1048576", "max.partition.fetch.bytes": "65536",
		"fetch.max.wait.ms": "250", "metadata.max.age.ms": "60000", "request.timeout.ms": "30000",
		"socket.connection.setup.timeout.ms": "5000",
	}}
	got, err := ko.ClientSettings()
	want := ClientSettings{
		ClientID: "ingest-1", FetchMinBytes: 1024, FetchMaxBytes: 1 << 20, PartitionFetchMaxBytes: 1 << 16,
		FetchMaxWait: 250 * time.Millisecond, MetadataMaxAge: time.Minute, RequestTimeout: 30 * time.Second,
		ConnectTimeout: 5 * time.Second,
	}
	if err != nil || got != want {
		t.Errorf("ClientSettings() = %+v, %v; want %+v", got, err, want)
	}
	if got, err := (&KafkaOptions{}).ClientSettings(); err != nil || got != (ClientSettings{}) {
		t.Errorf("no properties: %+v, %v", got, err)
	}
	ko.ClientProperties["auto.offset.reset"] = "earliest"
	if _, err := ko.ClientSettings(); err == nil || !strings.Contains(err.Error(), `client_properties: key "auto.offset.reset" is not a client property here: set starting_offset and auto_offset_reset instead`) {
		t.Errorf("ClientSettings() with auto.offset.reset: %v", err)
	}
}

func TestParsePartition(t *testing.T) {
	for in, want := range map[string]int32{"0": 0, "12": 12, "2147483647": 2147483647} {
		if got, err := ParsePartition(in); err != nil || got != want {
			t.Errorf("ParsePartition(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "-1", "+1", "01", "1.0", "2147483648", " 1"} {
		if _, err := ParsePartition(in); err == nil {
			t.Errorf("ParsePartition(%q) accepted", in)
		}
	}
}
