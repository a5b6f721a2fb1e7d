// Command bench measures end-to-end ingestion on a real Kafka broker (`make
// bench` starts one): it produces 1,000,000 JSON records of about 100 bytes
// to a 4-partition topic, then measures
//
//   - a bare kafka-go consumer reading the topic (the ceiling),
//   - the agent ingesting it into a table with an explicit JSON schema,
//   - the agent ingesting it with no schema: inferred from the first
//     records of each partition (json_options.schema_evolution_mode
//     ADD_NEW_COLUMNS), compared to the JSON row's records/s,
//   - the agent ingesting it into a table with raw BINARY columns,
//   - the agent ingesting it as JSON without a schema, into a VARIANT
//     column,
//   - with -s3-root, the agent ingesting it with the JSON schema into a
//     table on an object store (make bench starts an S3-compatible server),
//   - with -s3-root, clusters of agents (-cluster-agents, one and two by
//     default) on the same machine ingesting it likewise through a
//     continuous pipeline, its partitions shared through Kafka's group
//     protocol, until the table's log holds every record;
//
// with -registry-url (make bench starts a schema registry), produces the
// same records in Avro and in Protobuf, each to a topic of its own, framed
// for the registry (Confluent's wire format) with a schema of the same
// columns registered under the topic's value subject, and measures the
// agent ingesting each with the schema it fetches from the registry,
// against the JSON run's records/s;
//
// measures the capacity of an agent reading the 100-byte records while
// they are produced on the same machine (for a third of -freshness-time,
// the producer as fast as it can go, flush_interval 1s), and then
// freshness (-freshness-time, twice): records of about 100 bytes
// produced at half that capacity, read by a continuous pipeline
// with flush_interval 1s and then 10s, each record's latency from its
// produce to the first commit that holds it (as the agent's status reports
// its committed offsets, polled every 20 ms), p50, p99 and max;
//
// produces 200,000 JSON records of about 1 KB with 30 columns (scalars of
// every kind, arrays, structs, an array of structs and a map) to another
// 4-partition topic and measures a bare consumer (the ceiling of that topic)
// and the agent ingesting them with their full schema and as a VARIANT;
//
// to show the memory budget at work, produces 800,000 more records of
// about 1 KB (800 MB) spread over 50 topics of 8 partitions and measures the
// agent ingesting them into 50 tables of one pipeline (JSON with schema,
// flush_interval 1m), with its default --memory-limit;
//
// produces 4,000,000 records of about 100 bytes to another topic and
// measures the agent ingesting them into a table of small files (2,000 rows
// each) without compaction and with it (auto_compact_min_files 10,
// target_file_size_mb 8, so that passes commit while the agent ingests,
// which the row counts), in turn, three times with and four without, each
// row the median of its runs,
// then DuckDB and delta-rs scanning each table once its compaction settled;
//
// and produces 1,000,000 records of about 120 bytes, those of 100 bytes
// with a first field event_type of 50 values, to another 4-partition topic
// and measures the agent reading them into one VARIANT table, then the
// agent routing them by that field (a fanout schema, fanout_by
// `cast(value AS STRING):event_type::string`, each value as a VARIANT) to
// 50 tables of one triggered pipeline, and logs the second's rate as a
// share of the first's. Each run reads from the earliest offset until the
// last offset is committed, as records/s,
// bytes/s of record values and, for the agent, peak RSS and CPU seconds
// per GB and per million records (summed over the agents of a cluster).
// Every row but the capacity, freshness and compaction rows also gives the
// CPU seconds the broker and the S3 server used meanwhile (-broker-pid,
// -s3-pid), and the row to S3 its ratios to the row to local disk, of
// records/s and of CPU time. Then it runs two benchmarks of the repository with
// go test, from the repository's root, and reports what they measure: the
// commits/s one table on the -s3-root server takes from 1, 2, 4 and 8
// writers (BenchmarkConcurrentWriters in agent/internal/table), and how
// long partitions go without an owner when an agent of three is killed or
// leaves (BenchmarkRebalancePause in agent/internal/membership). It prints
// a table and writes the figures as JSON to .bench/results.json (those of
// go test under "benchmarks"), each with where it was measured: the broker (-broker, as tools/kafka.sh reports it), the CPUs
// of the machine and the Go version of the harness.
package main

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// result is one measured line.
type result struct {
	Name          string  `json:"name"`
	Records       int64   `json:"records"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"records_per_sec"`
	// BytesPerSec counts the bytes of the record values read.
	BytesPerSec float64 `json:"bytes_per_sec"`
	PeakRSSMB   float64 `json:"peak_rss_mb,omitempty"`
	// CPUSeconds is the CPU time (user and system) the agents used from
	// their start to the row's end; CPUPerGB and CPUPerMillion divide it by
	// the gigabytes (10^9 bytes) of record values and the millions of
	// records read: the cost of the row per core.
	CPUSeconds    float64 `json:"cpu_seconds,omitempty"`
	CPUPerGB      float64 `json:"cpu_seconds_per_gb,omitempty"`
	CPUPerMillion float64 `json:"cpu_seconds_per_million_records,omitempty"`
	// BrokerCPUSeconds and StoreCPUSeconds are the CPU time the broker and
	// the S3 server used while the row ran, agent start and stop included
	// (not measured for the capacity, freshness and compaction rows): on a
	// machine whose cores they share with the agent, time the agent did
	// not get.
	BrokerCPUSeconds float64 `json:"broker_cpu_seconds,omitempty"`
	StoreCPUSeconds  float64 `json:"store_cpu_seconds,omitempty"`
	// OfLocal is, for the row to S3, the ratio of its records/s to the
	// JSON row's to local disk, on the same records; CPUOfLocal the ratio
	// of the agent's CPU seconds, and MachineCPUOfLocal that of the
	// agent's, the broker's and the S3 server's together.
	OfLocal           float64 `json:"ratio_to_local_disk,omitempty"`
	CPUOfLocal        float64 `json:"cpu_ratio_to_local_disk,omitempty"`
	MachineCPUOfLocal float64 `json:"machine_cpu_ratio_to_local_disk,omitempty"`
	// OfCeiling is the ratio of the row's records/s to the bare
	// consumer's on the same records.
	OfCeiling float64 `json:"ratio_to_ceiling,omitempty"`
	// OfJSON is, for the registry rows, the ratio of their records/s to
	// the JSON row's on the same records.
	OfJSON float64 `json:"ratio_to_json,omitempty"`
	// OfUncompacted is, for the compacting row, the ratio of its
	// records/s to the row's without compaction on the same records, the
	// median of each compacting run's to the runs beside it.
	OfUncompacted float64 `json:"ratio_to_uncompacted,omitempty"`
	// CompactedWhile is, for the compacting row, the compaction commits
	// and the files they rewrote before the last record was in the table:
	// the compaction the ingestion ran beside.
	CompactedWhile *compacted `json:"compacted_while_ingesting,omitempty"`
	// Runs are, for a line that is the median of several runs, the
	// records/s of each, in the order they ran.
	Runs []float64 `json:"records_per_sec_of_runs,omitempty"`
	// Latency is, for a freshness row, what it measured.
	Latency *latency `json:"latency,omitempty"`
	// Files is the number of data files the agent committed.
	Files int64 `json:"files,omitempty"`
	// Memory is the agent's memory budget: its series at the end of the
	// run, and the highest use seen while it ran.
	Memory *budgetUse `json:"memory,omitempty"`
	// Topics are the topics read.
	Topics []string `json:"topics"`
	// Readers is, for a cluster's line, how many partitions each agent
	// read at the end of the run, by agent name.
	Readers map[string]int `json:"partitions_by_agent,omitempty"`
	// columns is the Delta schema (schemaString) of the agent's first
	// table, when it is a local folder; "" if unknown.
	columns string
}

// compacted counts compaction commits and the files they rewrote.
type compacted struct {
	Commits int64 `json:"commits"`
	Files   int64 `json:"files"`
}

// budgetUse is what the agent's /metrics say of its memory budget.
type budgetUse struct {
	LimitMB    float64 `json:"limit_mb"`
	PeakUsedMB float64 `json:"peak_used_mb"` // sampled every 200ms
	Pauses     int64   `json:"pauses"`
	Flushes    int64   `json:"flushes"`
}

// environment says where the figures were measured.
type environment struct {
	// Broker is the broker as tools/kafka.sh reports it ("kafka 4.4.0").
	Broker    string `json:"broker"`
	Bootstrap string `json:"bootstrap"`
	// CPUs is the number of logical CPUs of the machine, shared by the
	// broker, the producer, the consumers and the agent.
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// String describes e in one line.
func (e environment) String() string {
	return fmt.Sprintf("broker %s at %s; %d CPUs; harness built with %s %s", e.Broker, e.Bootstrap, e.CPUs, e.GoVersion, e.Platform)
}

// options are the command-line flags.
type options struct {
	bootstrap, broker, agentBin, out string
	// s3Root, if set, is an object store root (with its driver options)
	// the JSON run of the 100-byte records, the clusters and the go test
	// benchmark of one table's commit rate also write to.
	s3Root string
	// servers are the broker's and the S3 server's processes.
	servers servers
	// registry, if its URL is set, is the schema registry the Avro and
	// Protobuf runs register their schemas in and the agent reads them
	// from.
	registry spec.SchemaRegistry
	// records, wideJSON, wide, fanout and compaction are the record
	// counts of the runs on 100-byte records, on 1 KB records of 30
	// columns, on 50 tables, of the fanout to 50 tables and of the
	// compaction run.
	records, wideJSON, wide, fanout, compaction int
	// compactionRounds is how many agents of the compaction run compact;
	// one more does not, before, between and after them.
	compactionRounds int
	// python is the tool venv's interpreter, which scans the compaction
	// run's tables.
	python string
	// clusters are the sizes of the clusters of agents that ingest the
	// 100-byte records to s3Root, a line each.
	clusters []int
	// writersTime and rebalanceTime are the -benchtime of the go test
	// benchmarks of one table's commit rate (on s3Root) and of the
	// rebalance pause; "" skips them.
	writersTime, rebalanceTime string
	// freshness is how long each freshness run produces, 0 for none;
	// freshnessRate its records/s when the JSON row does not run.
	freshness     time.Duration
	freshnessRate float64
}

// Every topic but those of the wide run has topicPartitions partitions.
const topicPartitions = 4

// The wide run: many tables of many partitions, with records of about 1 KB
// (their name is wideNameBytes random hex digits), under one memory budget.
const (
	wideTables     = 50
	widePartitions = 8
	wideNameBytes  = 900
)

// jsonValue reads the JSON records of smallRecords with their schema.
var jsonValue = &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{
	Schema: "id BIGINT, name STRING, amount DOUBLE, ts TIMESTAMP, tags ARRAY<STRING>"}}

// variantValue reads JSON records without a schema, each whole into a
// VARIANT column.
var variantValue = &spec.Transformer{Format: spec.FormatJSON}

// inferredValue reads the JSON records of smallRecords without a schema:
// inferred from the first records of each partition, with new fields added
// as columns.
var inferredValue = &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{
	SchemaEvolutionMode: spec.SchemaEvolutionAddNewColumns}}

// eventValue reads the records of eventRecords with their schema: the
// columns of event, in order.
var eventValue = &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{
	Schema: "id BIGINT, event_id STRING, account_id BIGINT, session_id STRING, event_type STRING, " +
		"ts TIMESTAMP, event_date DATE, amount DECIMAL(10,2), price DOUBLE, discount DOUBLE, tax_rate DOUBLE, " +
		"is_test BOOLEAN, quantity INT, country STRING, city STRING, user_agent STRING, referrer STRING, " +
		"message STRING, tags ARRAY<STRING>, scores ARRAY<BIGINT>, " +
		"device STRUCT<os: STRING, os_version: STRING, model: STRING, width: INT, height: INT>, " +
		"location STRUCT<lat: DOUBLE, lon: DOUBLE, accuracy_m: FLOAT>, " +
		"cart STRUCT<cart_id: BIGINT, currency: STRING, " +
		"items: ARRAY<STRUCT<sku: STRING, qty: INT, unit_price: DECIMAL(10,2)>>>, " +
		"attributes MAP<STRING, STRING>, retries SMALLINT, priority TINYINT, checksum BINARY, " +
		"received_at TIMESTAMP_NTZ, score FLOAT, version INT"}}

// main runs the benchmarks the flags ask for.
func main() {
	var o options
	flag.StringVar(&o.bootstrap, "bootstrap", "127.0.0.1:19092", "Kafka bootstrap address")
	flag.StringVar(&o.broker, "broker", "unknown", `the broker at -bootstrap, as tools/kafka.sh reports it ("kafka 4.4.0"), for the results`)
	flag.IntVar(&o.records, "records", 1_000_000, "records of about 100 bytes to produce; 0 skips their runs")
	flag.IntVar(&o.wideJSON, "wide-json-records", 200_000, "JSON records of about 1 KB with 30 columns to produce; 0 skips their run")
	flag.IntVar(&o.wide, "wide-records", 800_000, fmt.Sprintf("records of about 1 KB to produce over %d topics of %d partitions for the wide run; 0 skips it",
		wideTables, widePartitions))
	flag.IntVar(&o.fanout, "fanout-records", 1_000_000, fmt.Sprintf("records of about 120 bytes of %d event types to produce for the fanout run; 0 skips it",
		fanoutTables))
	flag.IntVar(&o.compaction, "compaction-records", 16_000_000, fmt.Sprintf("records of about 100 bytes to produce for the compaction run "+
		"(files of %d rows, compacted past %d, against the same without compaction, and a scan of each table); 0 skips it",
		compactRows, compactMinFiles))
	flag.IntVar(&o.compactionRounds, "compaction-rounds", 5, "agents of the compaction run that compact, alternating with one more that does not; "+
		"the rows are the medians of each kind, so more rounds give a steadier ratio on a noisy machine")
	flag.StringVar(&o.python, "python", ".tools/py/bin/python", "the Python with DuckDB and delta-rs (tools/tools.sh venv) that scans the compaction run's tables")
	flag.StringVar(&o.agentBin, "agent", ".tools/bin/tributary-agent", "agent binary")
	flag.StringVar(&o.s3Root, "s3-root", "", "an object store `root` (s3://bucket?endpoint=...&use_path_style=true&region=...) "+
		"the JSON run of the 100-byte records, the clusters and BenchmarkConcurrentWriters also write to "+
		"(the server's keys from $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY); \"\" skips those runs")
	flag.IntVar(&o.servers.broker, "broker-pid", 0, "the process id of the broker (tools/kafka.sh pid), whose CPU time each row "+
		"but the capacity, freshness and compaction rows reports; 0 leaves it out")
	flag.IntVar(&o.servers.store, "s3-pid", 0, "the process id of the S3 server of -s3-root (tools/s3.sh pid), likewise")
	flag.StringVar(&o.registry.URL, "registry-url", os.Getenv("SCHEMA_REGISTRY_URL"),
		"a Confluent-compatible schema registry the Avro and Protobuf runs of the 100-byte records register their schemas in; \"\" skips those runs")
	flag.StringVar(&o.registry.APIKey, "registry-key", os.Getenv("SCHEMA_REGISTRY_KEY"), "the registry's API key (basic auth)")
	flag.StringVar(&o.registry.APISecret, "registry-secret", os.Getenv("SCHEMA_REGISTRY_SECRET"),
		"the registry's API secret; $SCHEMA_REGISTRY_SECRET by default, which keeps it off the command line")
	registryCA := flag.String("registry-ca", os.Getenv("SCHEMA_REGISTRY_CA_FILE"),
		"a PEM `file` with the CA that signed an https registry's certificate; the bench and the agent trust it")
	clusters := flag.String("cluster-agents", "1,2", "sizes of the clusters of agents (--cluster) that ingest the 100-byte records "+
		"with the JSON schema to -s3-root, comma-separated, a line each; \"\" skips them")
	flag.StringVar(&o.writersTime, "writers-benchtime", "5s", "-benchtime of BenchmarkConcurrentWriters (agent/internal/table): "+
		"the commits/s of one table on -s3-root from 1, 2, 4 and 8 writers; \"\" skips it")
	flag.StringVar(&o.rebalanceTime, "rebalance-benchtime", "5x", "-benchtime of BenchmarkRebalancePause (agent/internal/membership): "+
		"how long partitions go without an owner when an agent of three is killed or leaves; \"\" skips it")
	flag.DurationVar(&o.freshness, "freshness-time", 30*time.Second, "how long each freshness run (flush_interval 1s and 10s) produces "+
		"records of about 100 bytes at half the capacity of an agent reading them as they are produced "+
		"(measured for a third of it first); 0 skips them")
	flag.Float64Var(&o.freshnessRate, "freshness-rate", 100_000, "records/s of the freshness runs when -records is 0")
	flag.StringVar(&o.out, "out", ".bench/results.json", "where to write the JSON results")
	flag.Parse()
	if o.freshnessRate <= 0 {
		log.Fatalf("-freshness-rate: %v: the freshness runs need a rate above 0", o.freshnessRate)
	}
	if o.compactionRounds < 1 {
		log.Fatalf("-compaction-rounds: %d: at least one agent must compact", o.compactionRounds)
	}
	for _, f := range strings.Split(*clusters, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			log.Fatalf("-cluster-agents: %q is not a number of agents", f)
		}
		o.clusters = append(o.clusters, n)
	}
	if *registryCA != "" {
		pem, err := os.ReadFile(*registryCA)
		if err != nil {
			log.Fatalf("-registry-ca: %v", err)
		}
		o.registry.CAPEM = string(pem)
	}
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

// run measures every run o asks for, prints the table and writes the
// results.
func run(o options) error {
	ctx := context.Background()
	env := environment{Broker: o.broker, Bootstrap: o.bootstrap, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	var results []result
	small := []agentRun{{name: "agent: JSON with schema", value: jsonValue}, {name: "agent: JSON, inferred schema", value: inferredValue},
		{name: "agent: BINARY"}, {name: "agent: JSON as VARIANT", value: variantValue}}
	// s3Row is the index in small of the row to S3, 0 when none runs.
	s3Row := 0
	if o.s3Root != "" {
		s3Row = len(small)
		small = append(small, agentRun{name: "agent: JSON with schema, to S3", value: jsonValue,
			warehouse: spec.JoinLocation(o.s3Root, fmt.Sprintf("run-%d", time.Now().UnixNano()))})
		for _, n := range o.clusters {
			small = append(small, agentRun{name: clusterRowName(n), value: jsonValue,
				warehouse: spec.JoinLocation(o.s3Root, fmt.Sprintf("cluster%d-%d", n, time.Now().UnixNano())), cluster: n})
		}
	}
	// jsonRate is the JSON row's records/s, 0 when it does not run.
	var jsonRate float64
	if o.records > 0 {
		s := suite{topic: "bench", records: o.records, what: "records of about 100 bytes", record: smallRecords(0, smallJSON),
			ceiling: "kafka-go consumer (ceiling)", agents: small, servers: o.servers}
		rs, err := s.measure(ctx, o.agentBin, o.bootstrap)
		if err != nil {
			return err
		}
		jsonRate = rs[1].RecordsPerSec
		// The inferred row reads the JSON row's records: like for like.
		inferred := &rs[2]
		inferred.OfJSON = inferred.RecordsPerSec / rs[1].RecordsPerSec
		log.Printf("%s: inferred columns %s", inferred.Name, inferred.columns)
		if s3Row > 0 {
			compareToLocal(&rs[1+s3Row], rs[1]) // rs[0] is the ceiling
		}
		results = append(results, rs...)
		if o.registry.URL != "" {
			// The same records, framed for the registry: like for like
			// with the JSON row, which they are compared to.
			for _, f := range registryFormats {
				r, err := registryRun(ctx, o, f)
				if err != nil {
					return err
				}
				r.OfJSON = r.RecordsPerSec / rs[1].RecordsPerSec
				switch {
				case r.columns == "" || rs[1].columns == "":
				case r.columns == rs[1].columns:
					log.Printf("%s: the table has the JSON table's columns", r.Name)
				default:
					log.Printf("warning: %s: the table's columns differ from the JSON table's:\n  %s\n  %s", r.Name, r.columns, rs[1].columns)
				}
				results = append(results, r)
			}
		}
	}
	if o.freshness > 0 {
		// At half the capacity of the agent on these records while they
		// are produced on the same machine.
		rate := o.freshnessRate
		if jsonRate > 0 {
			r, err := capacityRun(ctx, o.agentBin, o.bootstrap, o.freshness/3)
			if err != nil {
				return err
			}
			results = append(results, r)
			rate = r.RecordsPerSec / 2
			log.Printf("freshness at %.0f records/s, half the capacity read while produced (the JSON row read %.0f records/s produced beforehand)",
				rate, jsonRate)
		}
		for _, flush := range []time.Duration{time.Second, 10 * time.Second} {
			r, err := freshnessRun(ctx, o.agentBin, o.bootstrap, rate, flush, o.freshness)
			if err != nil {
				return err
			}
			results = append(results, r)
		}
	}
	if o.wideJSON > 0 {
		s := suite{topic: "bench-json1k", records: o.wideJSON, what: "JSON records of about 1 KB with 30 columns", record: eventRecords(),
			ceiling: "kafka-go consumer, 1 KB records (ceiling)", agents: []agentRun{
				{name: "agent: JSON 1 KB, 30 columns", value: eventValue},
				{name: "agent: JSON 1 KB as VARIANT", value: variantValue},
			}, servers: o.servers}
		rs, err := s.measure(ctx, o.agentBin, o.bootstrap)
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	if o.wide > 0 {
		r, err := wideRun(ctx, o.agentBin, o.bootstrap, o.wide, o.servers)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	if o.fanout > 0 {
		rs, err := fanoutRun(ctx, o.agentBin, o.bootstrap, o.fanout, o.servers)
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	var scans []scanRow
	if o.compaction > 0 {
		rs, ss, err := compactionRun(ctx, o.agentBin, o.bootstrap, o.python, o.compaction, o.compactionRounds)
		if err != nil {
			return err
		}
		results = append(results, rs...)
		scans = ss
	}
	var benches []benchRow
	if o.writersTime != "" && o.s3Root != "" {
		rows, err := writersRows(ctx, o.s3Root, o.writersTime)
		if err != nil {
			return err
		}
		benches = append(benches, rows...)
	}
	if o.rebalanceTime != "" {
		rows, err := rebalanceRows(ctx, o.rebalanceTime)
		if err != nil {
			return err
		}
		benches = append(benches, rows...)
	}
	fmt.Printf("\n%s\n\n%-42s %10s %8s %12s %8s %9s %8s %9s %7s %9s %9s\n", env, "", "records", "seconds", "records/s", "MB/s", "of ceil.", "of JSON",
		"peak RSS", "files", "CPU s/GB", "CPU s/M")
	for _, r := range results {
		rss, ratio, ofJSON, files, perGB, perM := "-", "-", "-", "-", "-", "-"
		if r.PeakRSSMB > 0 {
			rss = fmt.Sprintf("%.0f MB", r.PeakRSSMB)
		}
		if r.CPUPerGB > 0 {
			perGB, perM = fmt.Sprintf("%.1f", r.CPUPerGB), fmt.Sprintf("%.2f", r.CPUPerMillion)
		}
		if r.OfCeiling > 0 {
			ratio = fmt.Sprintf("%.0f%%", 100*r.OfCeiling)
		}
		if r.OfJSON > 0 {
			ofJSON = fmt.Sprintf("%.0f%%", 100*r.OfJSON)
		}
		if r.Files > 0 {
			files = strconv.FormatInt(r.Files, 10)
		}
		fmt.Printf("%-42s %10d %8.2f %12.0f %8.1f %9s %8s %9s %7s %9s %9s\n", r.Name, r.Records, r.Seconds, r.RecordsPerSec, r.BytesPerSec/(1<<20),
			ratio, ofJSON, rss, files, perGB, perM)
		if m := r.Memory; m != nil && m.Pauses+m.Flushes > 0 {
			fmt.Printf("%-42s memory budget: peak %.0f MB of %.0f MB, %d fetches paused, %d flushes asked\n",
				"", m.PeakUsedMB, m.LimitMB, m.Pauses, m.Flushes)
		}
		if len(r.Readers) > 0 {
			fmt.Printf("%-42s partitions read at the end, by agent: %v\n", "", r.Readers)
		}
		if l := r.Latency; l != nil {
			fmt.Printf("%-42s latency at %.0f records/s: p50 %.2f s, p99 %.2f s, max %.2f s (bar: p99 <= %.0f s)\n", "", l.Rate, l.P50, l.P99, l.Max, l.Bar)
		}
		if r.BrokerCPUSeconds+r.StoreCPUSeconds > 0 {
			fmt.Printf("%-42s beside it: the broker used %.2f CPU s, the S3 server %.2f\n", "", r.BrokerCPUSeconds, r.StoreCPUSeconds)
		}
		if r.OfLocal > 0 {
			line := fmt.Sprintf("%.0f%% of the records/s to local disk", 100*r.OfLocal)
			if r.CPUOfLocal > 0 {
				line += fmt.Sprintf("; CPU s of the agent %.0f%% of those to local disk", 100*r.CPUOfLocal)
			}
			if r.MachineCPUOfLocal > 0 {
				line += fmt.Sprintf(", of the agent, broker and S3 server %.0f%%", 100*r.MachineCPUOfLocal)
			}
			fmt.Printf("%-42s %s\n", "", line)
		}
		if r.OfUncompacted > 0 {
			fmt.Printf("%-42s %.0f%% of the records/s without compaction\n", "", 100*r.OfUncompacted)
		}
		if len(r.Runs) > 0 {
			fmt.Printf("%-42s the median of runs at %v records/s\n", "", r.Runs)
		}
		if c := r.CompactedWhile; c != nil {
			fmt.Printf("%-42s while ingesting: %d compaction commits of %d files\n", "", c.Commits, c.Files)
		}
	}
	if len(scans) > 0 {
		fmt.Printf("\n%-42s %8s %12s %12s\n", "table scans (best of 3)", "files", "DuckDB s", "delta-rs s")
	}
	for _, s := range scans {
		fmt.Printf("%-42s %8d %12.3f %12.3f\n", s.Name, s.Files, s.Seconds["duckdb"], s.Seconds["delta-rs"])
	}
	if len(benches) > 0 {
		fmt.Printf("\n%-42s %s\n", "go test benchmarks", "metrics")
	}
	for _, b := range benches {
		var metrics []string
		for _, unit := range slices.Sorted(maps.Keys(b.Metrics)) {
			metrics = append(metrics, fmt.Sprintf("%10.2f %s", b.Metrics[unit], unit))
		}
		fmt.Printf("%-42s %s\n", b.Name, strings.Join(metrics, "  "))
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	b, _ := json.MarshalIndent(map[string]any{"environment": env, "results": results, "scans": scans, "benchmarks": benches, "time": time.Now().UTC()}, "", "  ")
	if err := os.WriteFile(o.out, b, 0o644); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// suite is a topic of topicPartitions partitions, produced once, and the
// agent runs that read it, each measured against the ceiling of a bare
// consumer reading the same topic.
type suite struct {
	// topic prefixes the name of the topic, and what describes its
	// records in the log.
	topic, what string
	records     int
	record      recordFunc
	// ceiling names the bare consumer's line.
	ceiling string
	agents  []agentRun
	// servers are the processes whose CPU time each row reports.
	servers servers
}

// servers are the processes beside the agent on the machine: the Kafka
// broker and the S3 server, by process id, 0 when not known.
type servers struct{ broker, store int }

// cpu returns the CPU seconds the broker and the S3 server have used so
// far, 0 for one not known.
func (s servers) cpu() (broker, store float64) {
	if s.broker > 0 {
		broker = cpuSeconds(s.broker)
	}
	if s.store > 0 {
		store = cpuSeconds(s.store)
	}
	return broker, store
}

// around measures a row with row, and sets on it the CPU seconds the
// servers used meanwhile.
// A server whose CPU time cannot be read at either end (it stopped) leaves
// its figure at 0.
func (s servers) around(row func() (result, error)) (result, error) {
	broker, store := s.cpu()
	r, err := row()
	b, st := s.cpu()
	if broker > 0 && b >= broker {
		r.BrokerCPUSeconds = b - broker
	}
	if store > 0 && st >= store {
		r.StoreCPUSeconds = st - store
	}
	return r, err
}

// compareToLocal sets on s3, the row to S3, its ratios to local, the JSON
// row to local disk on the same records: of records/s, of the agent's CPU
// time, and of the machine's (the agent's, the broker's and the S3
// server's). Where the three share the cores and keep them busy, the
// records/s ratio cannot rise above the machine's CPU ratio's inverse.
func compareToLocal(s3 *result, local result) {
	s3.OfLocal = s3.RecordsPerSec / local.RecordsPerSec
	if local.CPUSeconds > 0 {
		s3.CPUOfLocal = s3.CPUSeconds / local.CPUSeconds
	}
	if local.BrokerCPUSeconds > 0 && s3.StoreCPUSeconds > 0 {
		m := local.CPUSeconds + local.BrokerCPUSeconds + local.StoreCPUSeconds
		s3.MachineCPUOfLocal = (s3.CPUSeconds + s3.BrokerCPUSeconds + s3.StoreCPUSeconds) / m
	}
}

// agentRun is one agent, or one cluster of agents, ingesting a suite's
// topic: the name of its line, its value transformer (nil for BINARY), its
// warehouse ("" for the agent's default, a folder in its data folder) and,
// for a cluster, the number of its agents (0 for a single agent without
// --cluster).
type agentRun struct {
	name      string
	value     *spec.Transformer
	warehouse string
	cluster   int
}

// measure produces s's records to a new topic and measures the bare
// consumer, then each agent run, on it. It returns the ceiling first.
func (s suite) measure(ctx context.Context, agentBin, bootstrap string) ([]result, error) {
	topic := fmt.Sprintf("%s-%d", s.topic, time.Now().UnixNano())
	log.Printf("producing %d %s to %s", s.records, s.what, topic)
	bytes, err := produce(ctx, bootstrap, []string{topic}, topicPartitions, s.records, s.record)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", topic, err)
	}
	w := load{topics: []string{topic}, partitions: topicPartitions, records: int64(s.records), bytes: bytes}
	// The first read of a fresh topic also warms the broker (page cache,
	// JIT); measure the ceiling on the second, as every agent run is one.
	if _, err := bareConsumer(ctx, bootstrap, w, s.ceiling); err != nil {
		return nil, err
	}
	read := func() (result, error) { return bareConsumer(ctx, bootstrap, w, s.ceiling) }
	ceiling, err := s.servers.around(read)
	if err != nil {
		return nil, err
	}
	results := []result{ceiling}
	for _, a := range s.agents {
		r, err := s.servers.around(func() (result, error) {
			if a.cluster > 0 {
				return clusterIngest(ctx, agentBin, bootstrap, w, a)
			}
			return ingest(ctx, agentBin, bootstrap, w, a.name, a.value, "", a.warehouse, nil)
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.name, err)
		}
		results = append(results, r)
	}
	// The ceiling is the faster of a read before and one after the agents,
	// so a broker still warming up does not flatter the ratios.
	if again, err := s.servers.around(read); err == nil && again.RecordsPerSec > ceiling.RecordsPerSec {
		ceiling = again
		results[0] = again
	}
	for i := range results {
		results[i].OfCeiling = results[i].RecordsPerSec / ceiling.RecordsPerSec
	}
	return results, nil
}

// wideRun produces n records over wideTables new topics of widePartitions
// partitions and measures one agent, with its default memory budget,
// ingesting each topic into a table of its own.
func wideRun(ctx context.Context, agentBin, bootstrap string, n int, servers servers) (result, error) {
	stamp := time.Now().UnixNano()
	topics := make([]string, wideTables)
	for i := range topics {
		topics[i] = fmt.Sprintf("bench-wide-%d-%02d", stamp, i)
	}
	log.Printf("producing %d records of about 1 KB to %d topics of %d partitions", n, wideTables, widePartitions)
	bytes, err := produce(ctx, bootstrap, topics, widePartitions, n, smallRecords(wideNameBytes, smallJSON))
	if err != nil {
		return result{}, err
	}
	name := fmt.Sprintf("agent: %d tables × %d partitions", wideTables, widePartitions)
	// A flush interval of a minute: the memory budget, not the interval,
	// decides when the tables flush.
	w := load{topics: topics, partitions: widePartitions, records: int64(n), bytes: bytes}
	r, err := servers.around(func() (result, error) { return ingest(ctx, agentBin, bootstrap, w, name, jsonValue, "1m", "", nil) })
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}

// The fanout run: one topic of topicPartitions partitions whose records
// carry an event_type of fanoutTables values, routed by it to a table each.
const fanoutTables = 50

// fanoutBy routes a record of fanoutRecords by its event_type field.
const fanoutBy = "cast(value AS STRING):event_type::string"

// fanoutRecords makes the records of smallRecords with a first field
// event_type, "event_00" to "event_49" in turn.
func fanoutRecords() recordFunc {
	record := smallRecords(0, smallJSON)
	return func(i int) []byte {
		v := record(i)
		return append(fmt.Appendf(nil, `{"event_type":"event_%02d",`, i%fanoutTables), v[1:]...)
	}
}

// fanoutRun produces n records of fanoutRecords to a new topic and measures
// one agent reading them into one VARIANT table, then one agent routing
// them by fanoutBy, each value as a VARIANT, to fanoutTables tables: a
// triggered pipeline without tables and a fanout schema of it. The first
// row is what the second is compared with: the same records, so that the
// ratio measures the routing and the many tables, not the records' size.
func fanoutRun(ctx context.Context, agentBin, bootstrap string, n int, servers servers) ([]result, error) {
	topic := fmt.Sprintf("bench-fanout-%d", time.Now().UnixNano())
	log.Printf("producing %d records of %d event types to %s", n, fanoutTables, topic)
	bytes, err := produce(ctx, bootstrap, []string{topic}, topicPartitions, n, fanoutRecords())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", topic, err)
	}
	w := load{topics: []string{topic}, partitions: topicPartitions, records: int64(n), bytes: bytes}
	one, err := servers.around(func() (result, error) {
		return ingest(ctx, agentBin, bootstrap, w, oneTableRow, variantValue, "", "", nil)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", oneTableRow, err)
	}
	r, err := servers.around(func() (result, error) { return fanoutTo(ctx, agentBin, bootstrap, w) })
	if err != nil {
		return nil, err
	}
	log.Printf("%s: %.0f%% of %s", r.Name, 100*r.RecordsPerSec/one.RecordsPerSec, one.Name)
	return []result{one, r}, nil
}

// oneTableRow names the row of the fanout's records read into one VARIANT
// table.
const oneTableRow = "agent: fanout's records, one VARIANT table"

// fanoutTo measures one agent routing the records of w by fanoutBy to
// fanoutTables tables, each value as a VARIANT.
func fanoutTo(ctx context.Context, agentBin, bootstrap string, w load) (result, error) {
	topic := w.topics[0]
	name := fmt.Sprintf("agent: fanout to %d tables", fanoutTables)
	a, err := startAgent(ctx, agentBin, bootstrap, "", nil)
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", name, err)
	}
	defer a.stop()
	if _, err := a.c.PutPipeline(ctx, benchPipeline(false, "", nil)); err != nil {
		return result{}, fmt.Errorf("%s: %w", name, err)
	}
	f := &spec.FanoutSchema{Name: "bench", Pipeline: "bench", DestinationCatalog: "bench", DestinationSchema: "fanout",
		ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{topic},
			StartingOffset: spec.StartingOffsetEarliest}},
		FanoutOptions: spec.FanoutOptions{FanoutBy: fanoutBy, Transforms: []spec.FanoutTransform{{InputColumn: "value"}}}}
	start := time.Now()
	if _, err := a.c.PutFanoutSchema(ctx, f); err != nil {
		return result{}, fmt.Errorf("%s: %w", name, err)
	}
	r, err := a.await(ctx, name, w, start, func(ctx context.Context) (string, []spec.TableStatus, error) {
		resp, err := a.c.GetFanoutSchema(ctx, f.Name)
		if err != nil {
			return "", nil, err
		}
		st := resp.Status
		if st.State == spec.StateIdle && len(st.Tables) != fanoutTables {
			return "", nil, fmt.Errorf("the fanout completed with %d tables, want %d", len(st.Tables), fanoutTables)
		}
		return st.State, st.Tables, nil
	})
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}

// load is what produce wrote for a run to read: the topics, each of
// partitions partitions, the number of records and the number of bytes of
// their values.
type load struct {
	topics     []string
	partitions int
	records    int64
	bytes      int64
}

// measured is the line of a run that read all of w in secs seconds.
func measured(name string, w load, secs float64) result {
	return result{Name: name, Records: w.records, Seconds: secs, RecordsPerSec: float64(w.records) / secs,
		BytesPerSec: float64(w.bytes) / secs, Topics: w.topics}
}

// recordFunc returns the value of the i-th record produced. The values of
// successive calls must not share memory.
type recordFunc func(i int) []byte

// small is the logical record of smallRecords: the columns of jsonValue,
// in order.
type small struct {
	ID     int64     `avro:"id"`
	Name   string    `avro:"name"`
	Amount float64   `avro:"amount"` // two decimals
	TS     time.Time `avro:"ts"`     // whole milliseconds
	Tags   []string  `avro:"tags"`
}

// smallRecords makes records of 5 columns (those of jsonValue), encoded by
// encode, of about 100 bytes as JSON, plus nameBytes when their name is
// that many random hex digits rather than "user-<n>". Every encoding gets
// the same records.
func smallRecords(nameBytes int, encode func(small) []byte) recordFunc {
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	rnd := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, nameBytes/2)
	return func(i int) []byte {
		name := fmt.Sprintf("user-%d", i%100000)
		if nameBytes > 0 {
			for j := range random {
				random[j] = byte(rnd.Uint32())
			}
			name = hex.EncodeToString(random)
		}
		return encode(small{ID: int64(i), Name: name, Amount: float64(i%1000) + float64(i%100)/100,
			TS: base.Add(time.Duration(i) * time.Millisecond), Tags: []string{"a", "b" + strconv.Itoa(i%7)}})
	}
}

// smallJSON encodes r as JSON, its amount with two decimals and its
// timestamp in milliseconds. Its strings need no escaping.
func smallJSON(r small) []byte {
	b := fmt.Appendf(nil, `{"id":%d,"name":"%s","amount":%.2f,"ts":"%s","tags":[`, r.ID, r.Name, r.Amount,
		r.TS.Format("2006-01-02T15:04:05.000Z"))
	for j, t := range r.Tags {
		if j > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), t...), '"')
	}
	return append(b, "]}"...)
}

// event is a record of eventRecords: its fields are the 30 columns of
// eventValue, in order.
type event struct {
	ID         int64             `json:"id"`
	EventID    string            `json:"event_id"`
	AccountID  int64             `json:"account_id"`
	SessionID  string            `json:"session_id"`
	EventType  string            `json:"event_type"`
	TS         string            `json:"ts"`
	EventDate  string            `json:"event_date"`
	Amount     json.Number       `json:"amount"`
	Price      float64           `json:"price"`
	Discount   float64           `json:"discount"`
	TaxRate    float64           `json:"tax_rate"`
	IsTest     bool              `json:"is_test"`
	Quantity   int32             `json:"quantity"`
	Country    string            `json:"country"`
	City       string            `json:"city"`
	UserAgent  string            `json:"user_agent"`
	Referrer   string            `json:"referrer"`
	Message    string            `json:"message"`
	Tags       []string          `json:"tags"`
	Scores     []int64           `json:"scores"`
	Device     device            `json:"device"`
	Location   location          `json:"location"`
	Cart       cart              `json:"cart"`
	Attributes map[string]string `json:"attributes"`
	Retries    int16             `json:"retries"`
	Priority   int8              `json:"priority"`
	Checksum   []byte            `json:"checksum"` // base64, as BINARY reads it
	ReceivedAt string            `json:"received_at"`
	Score      float32           `json:"score"`
	Version    int32             `json:"version"`
}

// device is the device column of an event.
type device struct {
	OS        string `json:"os"`
	OSVersion string `json:"os_version"`
	Model     string `json:"model"`
	Width     int32  `json:"width"`
	Height    int32  `json:"height"`
}

// location is the location column of an event.
type location struct {
	Lat       float64 `json:"lat"`
	Lon       float64 `json:"lon"`
	AccuracyM float32 `json:"accuracy_m"`
}

// cart is the cart column of an event: a struct holding an array of
// structs.
type cart struct {
	CartID   int64      `json:"cart_id"`
	Currency string     `json:"currency"`
	Items    []cartItem `json:"items"`
}

// cartItem is an element of a cart's items.
type cartItem struct {
	SKU       string      `json:"sku"`
	Qty       int32       `json:"qty"`
	UnitPrice json.Number `json:"unit_price"`
}

// Choices for columns of events; the strings are of varying lengths.
var (
	eventTypes = []string{"view", "click", "search", "add_to_cart", "purchase", "refund_requested"}
	countries  = []string{"NL", "DE", "FR", "US", "GB", "JP", "BR", "IN"}
	cities     = []string{"Amsterdam", "Berlin", "Paris", "San Francisco", "London", "Tokyo", "São Paulo", "Bengaluru"}
	userAgents = []string{
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
		"Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/AP1A.240405.002)",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0",
		"okhttp/4.12.0",
	}
	referrers = []string{"https://www.example.com/", "https://search.example.org/results?q=", "https://news.example.net/articles/", ""}
	devices   = []device{
		{"Android", "14", "Pixel 8", 1080, 2400},
		{"iOS", "17.4.1", "iPhone15,3", 1290, 2796},
		{"Windows", "10.0.19045", "Desktop", 1920, 1080},
		{"Linux", "6.8", "ThinkPad X1 Carbon", 2560, 1440},
	}
	currencies = []string{"EUR", "USD", "GBP", "JPY"}
	taxRates   = []float64{0, 0.07, 0.09, 0.19, 0.21}
	words      = strings.Fields("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua")
	attrKeys   = []string{"campaign", "channel", "experiment", "locale", "app_version", "utm_source"}
	attrValues = []string{"spring_sale", "email", "B", "en-GB", "5.12.0", "newsletter", "control", "push"}
)

// eventRecords makes JSON records of about 1 KB with the 30 columns of
// eventValue, of random content with a fixed seed.
func eventRecords() recordFunc {
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	rnd := rand.New(rand.NewPCG(3, 4))
	pick := func(s []string) string { return s[rnd.IntN(len(s))] }
	cents := func(below int) json.Number {
		return json.Number(fmt.Sprintf("%d.%02d", rnd.IntN(below), rnd.IntN(100)))
	}
	return func(i int) []byte {
		ts := base.Add(time.Duration(i) * time.Millisecond)
		e := event{
			ID:        int64(i),
			EventID:   fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", rnd.Uint32(), rnd.IntN(1<<16), rnd.IntN(1<<16), rnd.IntN(1<<16), rnd.Int64N(1<<48)),
			AccountID: rnd.Int64N(10_000_000),
			SessionID: fmt.Sprintf("%016x%016x", rnd.Uint64(), rnd.Uint64()),
			EventType: pick(eventTypes),
			TS:        ts.Format("2006-01-02T15:04:05.000Z"),
			EventDate: ts.Format("2006-01-02"),
			Amount:    cents(100_000),
			Price:     math.Round(rnd.Float64()*100_000) / 100,
			Discount:  math.Round(rnd.Float64()*50) / 100,
			TaxRate:   taxRates[rnd.IntN(len(taxRates))],
			IsTest:    rnd.IntN(20) == 0,
			Quantity:  rnd.Int32N(10) + 1,
			Country:   pick(countries),
			City:      pick(cities),
			UserAgent: pick(userAgents),
			Referrer:  pick(referrers),
			Tags:      []string{},
			Scores:    []int64{},
			Device:    devices[rnd.IntN(len(devices))],
			Location: location{Lat: math.Round(rnd.Float64()*180e6-90e6) / 1e6, Lon: math.Round(rnd.Float64()*360e6-180e6) / 1e6,
				AccuracyM: float32(rnd.IntN(1000)) / 10},
			Cart:       cart{CartID: rnd.Int64N(1 << 40), Currency: pick(currencies)},
			Attributes: map[string]string{},
			Retries:    int16(rnd.IntN(3)),
			Priority:   int8(rnd.IntN(5)),
			Checksum:   make([]byte, 16),
			ReceivedAt: ts.Add(time.Duration(rnd.IntN(5_000_000)) * time.Microsecond).Format("2006-01-02T15:04:05.000000"),
			Score:      rnd.Float32(),
			Version:    3,
		}
		if e.Referrer != "" {
			e.Referrer += pick(words) + "-" + strconv.Itoa(rnd.IntN(100_000))
		}
		msg := make([]string, rnd.IntN(6))
		for j := range msg {
			msg[j] = pick(words)
		}
		e.Message = strings.Join(msg, " ")
		for range rnd.IntN(4) {
			e.Tags = append(e.Tags, pick(words))
		}
		for range rnd.IntN(4) {
			e.Scores = append(e.Scores, rnd.Int64N(1<<32))
		}
		for range rnd.IntN(2) + 1 {
			e.Cart.Items = append(e.Cart.Items, cartItem{SKU: fmt.Sprintf("SKU-%06d", rnd.IntN(1_000_000)), Qty: rnd.Int32N(5) + 1,
				UnitPrice: cents(1000)})
		}
		for range rnd.IntN(2) + 1 {
			e.Attributes[pick(attrKeys)] = pick(attrValues)
		}
		for j := range e.Checksum {
			e.Checksum[j] = byte(rnd.Uint32())
		}
		v, err := json.Marshal(e)
		if err != nil {
			panic(err) // an event always marshals
		}
		return v
	}
}

// produce writes n records, the values record makes, round robin, to new
// topics of the given number of partitions, and returns the number of
// bytes of the values.
func produce(ctx context.Context, bootstrap string, topics []string, partitions, n int, record recordFunc) (int64, error) {
	conn, err := kafkago.Dial("tcp", bootstrap)
	if err != nil {
		return 0, fmt.Errorf("dial %s: %w", bootstrap, err)
	}
	defer conn.Close()
	configs := make([]kafkago.TopicConfig, len(topics))
	for i, topic := range topics {
		configs[i] = kafkago.TopicConfig{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}
	}
	if err := conn.CreateTopics(configs...); err != nil {
		return 0, fmt.Errorf("create topics: %w", err)
	}
	// Topics are created asynchronously: wait until every partition has a
	// leader.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ps, err := conn.ReadPartitions(topics...)
		led := 0
		for _, p := range ps {
			if p.Leader.Host != "" {
				led++
			}
		}
		if err == nil && led == len(topics)*partitions {
			break
		}
		if time.Now().After(deadline) {
			//nolint:errorlint // err is the last probe's, nil when it answered: detail, not the cause
			return 0, fmt.Errorf("topics not ready after 30s: %d of %d partitions have a leader (%v)", led, len(topics)*partitions, err)
		}
	}
	// A transport of its own: the default one caches the metadata of an
	// earlier call, which does not know the new topics yet. Batches of at
	// most 1 MiB: the broker refuses bigger ones (max.message.bytes).
	transport := &kafkago.Transport{}
	defer transport.CloseIdleConnections()
	w := &kafkago.Writer{Addr: kafkago.TCP(bootstrap), Balancer: &kafkago.RoundRobin{}, Transport: transport,
		BatchSize: 5000, BatchBytes: 1 << 20, BatchTimeout: 10 * time.Millisecond, RequiredAcks: kafkago.RequireOne}
	defer w.Close()
	const chunk = 20_000
	msgs := make([]kafkago.Message, 0, chunk)
	var bytes int64
	for i := 0; i < n; i++ {
		v := record(i)
		bytes += int64(len(v))
		msgs = append(msgs, kafkago.Message{Topic: topics[i%len(topics)], Value: v})
		if len(msgs) == chunk || i == n-1 {
			if err := write(ctx, w, msgs); err != nil {
				return 0, err
			}
			msgs = msgs[:0]
		}
	}
	return bytes, nil
}

// write writes msgs, writing again those that failed (the leaders of new
// partitions take a moment to settle) a few times: none is written twice.
func write(ctx context.Context, w *kafkago.Writer, msgs []kafkago.Message) error {
	for attempt := 1; ; attempt++ {
		err := w.WriteMessages(ctx, msgs...)
		var failed kafkago.WriteErrors
		if !errors.As(err, &failed) {
			if err != nil {
				return fmt.Errorf("produce: %w", err)
			}
			return nil
		}
		var again []kafkago.Message
		var first error
		for i, err := range failed {
			if err != nil {
				again = append(again, msgs[i])
				first = cmp.Or(first, err)
			}
		}
		if attempt == 10 {
			return fmt.Errorf("produce: %d of %d messages failed 10 times, the first with: %w", len(again), len(msgs), first)
		}
		msgs = again
		time.Sleep(500 * time.Millisecond)
	}
}

// bareConsumer reads every partition of w with kafka-go's Conn.ReadBatch,
// the way the agent fetches, and decodes nothing: the ceiling. name names
// its line.
func bareConsumer(ctx context.Context, bootstrap string, w load, name string) (result, error) {
	start := time.Now()
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, len(w.topics)*w.partitions)
	for _, topic := range w.topics {
		for p := 0; p < w.partitions; p++ {
			wg.Go(func() {
				if err := readPartition(ctx, bootstrap, topic, p, func(kafkago.Message) { total.Add(1) }); err != nil {
					errs <- fmt.Errorf("bare consumer, %s/%d: %w", topic, p, err)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return result{}, err
	}
	secs := time.Since(start).Seconds()
	if total.Load() != w.records {
		return result{}, fmt.Errorf("bare consumer read %d records, want %d", total.Load(), w.records)
	}
	return measured(name, w, secs), nil
}

// readPartition reads one partition from offset 0 to its last offset,
// adding the records it reads to total.
func readPartition(ctx context.Context, bootstrap, topic string, partition int, each func(kafkago.Message)) error {
	conn, err := kafkago.DialLeader(ctx, "tcp", bootstrap, topic, partition)
	if err != nil {
		return err
	}
	defer conn.Close()
	last, err := conn.ReadLastOffset()
	if err != nil {
		return err
	}
	if _, err := conn.Seek(0, kafkago.SeekAbsolute); err != nil {
		return err
	}
	for off := int64(0); off < last; {
		b := conn.ReadBatchWith(kafkago.ReadBatchConfig{MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 250 * time.Millisecond})
		for {
			m, err := b.ReadMessage()
			if err != nil {
				break
			}
			off = m.Offset + 1
			each(m)
		}
		if err := b.Close(); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	return nil
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

// benchAgent is a fresh agent of one run, on a data folder of its own,
// with the connection "bench" to the broker.
type benchAgent struct {
	cmd *exec.Cmd
	dir string
	ep  string
	c   *client.Client
}

// startAgent starts an agent on a new data folder, writing its tables under
// warehouse ("" for its default, a folder in its data folder), and creates
// the connection "bench" to bootstrap, with registry if not nil. Stop it
// with stop.
func startAgent(ctx context.Context, agentBin, bootstrap, warehouse string, registry *spec.SchemaRegistry) (*benchAgent, error) {
	a, err := spawnAgent(agentBin, warehouse)
	if err != nil {
		return nil, err
	}
	if err := a.putConnection(ctx, bootstrap, registry); err != nil {
		a.stop()
		return nil, err
	}
	return a, nil
}

// putConnection creates the connection "bench" to bootstrap through a,
// with registry if not nil.
func (a *benchAgent) putConnection(ctx context.Context, bootstrap string, registry *spec.SchemaRegistry) error {
	_, err := a.c.PutConnection(ctx, &spec.Connection{Name: "bench", BootstrapServers: []string{bootstrap}, SchemaRegistry: registry})
	return err
}

// spawnAgent starts an agent on a new data folder, writing its tables
// under warehouse ("" for its default, a folder in its data folder), with
// the extra serve flags, and waits until it listens. Stop it with stop.
func spawnAgent(agentBin, warehouse string, extra ...string) (*benchAgent, error) {
	dir, err := os.MkdirTemp("", "tributary-bench")
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", dir, "--insecure-no-auth"}
	if warehouse != "" {
		args = append(args, "--warehouse", warehouse)
	}
	a := &benchAgent{cmd: exec.Command(agentBin, append(args, extra...)...), dir: dir}
	stdout, _ := a.cmd.StdoutPipe()
	logf, _ := os.Create(filepath.Join(dir, "agent.log"))
	a.cmd.Stderr = logf
	if err := a.cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	endpoint := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		var seen strings.Builder
		for {
			k, err := stdout.Read(buf)
			seen.Write(buf[:k])
			if m := listening.FindStringSubmatch(seen.String()); m != nil {
				endpoint <- m[1]
				_, _ = io.Copy(io.Discard, stdout)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case a.ep = <-endpoint:
	case <-time.After(30 * time.Second):
		a.stop()
		return nil, errors.New("agent did not start")
	}
	if a.c, err = client.New(a.ep, ""); err != nil {
		a.stop()
		return nil, err
	}
	return a, nil
}

// stop kills the agent and removes its data folder.
func (a *benchAgent) stop() {
	_ = a.cmd.Process.Kill()
	_ = a.cmd.Wait()
	_ = os.RemoveAll(a.dir)
}

// benchPipeline returns the pipeline "bench" through the connection
// "bench", continuous or triggered, with the given flush_interval ("" for
// the default) and tables.
func benchPipeline(continuous bool, flush string, tables []spec.Table) *spec.Pipeline {
	return &spec.Pipeline{Name: "bench", Connection: "bench", DestinationCatalog: "bench", DestinationSchema: "bench",
		Continuous: &continuous, FlushInterval: flush, Tables: tables}
}

// tablesOf returns one table per topic of w, each reading it from the
// earliest offset with value (nil for BINARY).
func tablesOf(w load, value *spec.Transformer) []spec.Table {
	var tables []spec.Table
	for i, topic := range w.topics {
		tables = append(tables, spec.Table{DestinationTable: fmt.Sprintf("t%02d", i), ConnectorOptions: spec.ConnectorOptions{
			KafkaOptions: spec.KafkaOptions{Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest, ValueTransformer: value}}})
	}
	return tables
}

// await polls status, the state and tables of what the run applied at
// start, until it is IDLE and returns the run's line: every record of
// w must be committed, none of them corrupt (a record that does not fit
// the schema would measure the wrong work).
func (a *benchAgent) await(ctx context.Context, name string, w load, start time.Time,
	status func(context.Context) (state string, tables []spec.TableStatus, err error)) (result, error) {
	var peakUsed int64
	for i := 0; ; i++ {
		if i%10 == 0 {
			m, err := memoryMetrics(ctx, a.ep)
			if err != nil {
				return result{}, err
			}
			peakUsed = max(peakUsed, m["used_bytes"])
		}
		state, tables, err := status(ctx)
		if err != nil {
			return result{}, err
		}
		if state == spec.StateFailed {
			return result{}, fmt.Errorf("run failed: state %s, tables %+v", state, tables)
		}
		if state == spec.StateIdle {
			secs := time.Since(start).Seconds()
			r := measured(name, w, secs)
			r.addUsage(a.cmd.Process.Pid)
			if err := tally(&r, w, tables); err != nil {
				return result{}, err
			}
			if len(tables) > 0 {
				r.columns = tableColumns(tables[0].Location)
			}
			if r.Memory, err = a.budgetUse(ctx, peakUsed); err != nil {
				return result{}, err
			}
			return r, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// budgetUse returns what a's memory budget says now, with peakUsed, the
// most the caller saw in use.
func (a *benchAgent) budgetUse(ctx context.Context, peakUsed int64) (*budgetUse, error) {
	m, err := memoryMetrics(ctx, a.ep)
	if err != nil {
		return nil, err
	}
	return &budgetUse{LimitMB: float64(m["limit_bytes"]) / (1 << 20), PeakUsedMB: float64(peakUsed) / (1 << 20),
		Pauses: m["pauses_total"], Flushes: m["flushes_total"]}, nil
}

// tally adds the files of tables to r, and checks that they hold every
// record of w, once, none of them corrupt.
func tally(r *result, w load, tables []spec.TableStatus) error {
	var rows, corrupt int64
	for _, t := range tables {
		rows += t.Rows
		corrupt += t.CorruptRecords
		r.Files += t.Files
	}
	if rows != w.records || corrupt != 0 {
		return fmt.Errorf("tables have %d rows, %d of them corrupt, want %d, none corrupt", rows, corrupt, w.records)
	}
	return nil
}

// ingest runs a fresh agent, applies a triggered pipeline with one table per
// topic of w, each reading from earliest, and measures until every record is
// committed. flush is the pipeline's flush_interval, "" for the default;
// warehouse the agent's --warehouse, "" for its default.
func ingest(ctx context.Context, agentBin, bootstrap string, w load, name string, value *spec.Transformer,
	flush, warehouse string, registry *spec.SchemaRegistry) (result, error) {
	a, err := startAgent(ctx, agentBin, bootstrap, warehouse, registry)
	if err != nil {
		return result{}, err
	}
	defer a.stop()
	start := time.Now()
	if _, err := a.c.PutPipeline(ctx, benchPipeline(false, flush, tablesOf(w, value))); err != nil {
		return result{}, err
	}
	return a.await(ctx, name, w, start, func(ctx context.Context) (string, []spec.TableStatus, error) {
		resp, err := a.c.GetPipeline(ctx, "bench")
		if err != nil {
			return "", nil, err
		}
		return resp.Status.State, resp.Status.Tables, nil
	})
}

// tableColumns returns the schemaString of the first metaData action in
// the Delta log of the table at location, a local folder, or "" if it
// cannot read it.
func tableColumns(location string) string {
	b, err := os.ReadFile(filepath.Join(strings.TrimPrefix(location, "file://"), "_delta_log", "00000000000000000000.json"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		var action struct {
			MetaData *struct {
				SchemaString string `json:"schemaString"`
			} `json:"metaData"`
		}
		if json.Unmarshal([]byte(line), &action) == nil && action.MetaData != nil {
			return action.MetaData.SchemaString
		}
	}
	return ""
}

// memoryMetrics returns the tributary_memory_* series of the agent at ep.
func memoryMetrics(ctx context.Context, ep string) (map[string]int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ep+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	m := map[string]int64{}
	for _, line := range strings.Split(string(body), "\n") {
		if name, value, ok := strings.Cut(line, " "); ok && strings.HasPrefix(name, "tributary_memory_") {
			m[strings.TrimPrefix(name, "tributary_memory_")], _ = strconv.ParseInt(value, 10, 64)
		}
	}
	return m, nil
}

// addUsage adds to r what the agent processes pids used so far: their
// high-water resident set sizes and their CPU time, and sets the CPU cost
// per GB and per million records of r's records.
func (r *result) addUsage(pids ...int) {
	for _, pid := range pids {
		r.PeakRSSMB += peakRSS(pid)
		r.CPUSeconds += cpuSeconds(pid)
	}
	if r.CPUSeconds > 0 && r.Records > 0 {
		r.CPUPerMillion = r.CPUSeconds / (float64(r.Records) / 1e6)
		r.CPUPerGB = r.CPUSeconds / (r.BytesPerSec * r.Seconds / 1e9)
	}
}

// peakRSS reads the process's high-water resident set size in MB.
func peakRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// userHZ is the unit of the CPU times in /proc/<pid>/stat: clock ticks,
// which Linux reports at 100 a second whatever its kernel's HZ.
const userHZ = 100

// cpuSeconds reads the CPU time, user and system, the process has used.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: the fields
	// counted are those after it (state is the first, utime the 12th and
	// stime the 13th).
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / userHZ
}
