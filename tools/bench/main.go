// Command bench measures end-to-end ingestion on a real Kafka broker (`make
// bench` starts one): it produces 1,000,000 JSON records of about 100 bytes
// to a 4-partition topic, then measures
//
//   - a bare kafka-go consumer reading the topic (the ceiling),
//   - the agent ingesting it into a table with an explicit JSON schema,
//   - the agent ingesting it into a table with raw BINARY columns,
//
// and, to show the memory budget at work, produces 800,000 more records of
// about 1 KB (800 MB) spread over 50 topics of 8 partitions and measures the
// agent ingesting them into 50 tables of one pipeline (JSON with schema,
// flush_interval 1m), with its default --memory-limit. Each run reads from
// the earliest offset until the last offset is committed, as records/s and,
// for the agent, peak RSS. It prints a table and writes the figures as JSON
// to .bench/results.json.
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
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	PeakRSSMB     float64 `json:"peak_rss_mb,omitempty"`
	OfCeiling     float64 `json:"ratio_to_ceiling,omitempty"`
	// Files is the number of data files the agent committed.
	Files int64 `json:"files,omitempty"`
	// Memory is the agent's memory budget: its series at the end of the
	// run, and the highest use seen while it ran.
	Memory *budgetUse `json:"memory,omitempty"`
}

// budgetUse is what the agent's /metrics say of its memory budget.
type budgetUse struct {
	LimitMB    float64 `json:"limit_mb"`
	PeakUsedMB float64 `json:"peak_used_mb"` // sampled every 200ms
	Pauses     int64   `json:"pauses"`
	Flushes    int64   `json:"flushes"`
}

// The wide run: many tables of many partitions, with records of about 1 KB
// (their name is wideNameBytes random hex digits), under one memory budget.
const (
	wideTables     = 50
	widePartitions = 8
	wideNameBytes  = 900
)

// jsonValue reads the JSON records the bench produces with their schema.
var jsonValue = &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{
	Schema: "id BIGINT, name STRING, amount DOUBLE, ts TIMESTAMP, tags ARRAY<STRING>"}}

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:19092", "Kafka bootstrap address")
	records := flag.Int("records", 1_000_000, "records to produce")
	wide := flag.Int("wide-records", 800_000, fmt.Sprintf("records of about 1 KB to produce over %d topics of %d partitions for the wide run; 0 skips it",
		wideTables, widePartitions))
	agentBin := flag.String("agent", ".tools/bin/tributary-agent", "agent binary")
	out := flag.String("out", ".bench/results.json", "where to write the JSON results")
	flag.Parse()
	if err := run(*bootstrap, *records, *wide, *agentBin, *out); err != nil {
		log.Fatal(err)
	}
}

func run(bootstrap string, n, wide int, agentBin, out string) error {
	ctx := context.Background()
	topic := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	log.Printf("producing %d records to %s", n, topic)
	if err := produce(ctx, bootstrap, []string{topic}, 4, n, 0); err != nil {
		return err
	}
	// The first read of a fresh topic also warms the broker (page cache,
	// JIT); measure the ceiling on the second, as every agent run is one.
	if _, err := bareConsumer(ctx, bootstrap, topic, int64(n)); err != nil {
		return err
	}
	ceiling, err := bareConsumer(ctx, bootstrap, topic, int64(n))
	if err != nil {
		return err
	}
	results := []result{ceiling}
	for _, c := range []struct {
		name  string
		value *spec.Transformer
	}{
		{"agent: JSON with schema", jsonValue},
		{"agent: BINARY", nil},
	} {
		r, err := ingest(ctx, agentBin, bootstrap, []string{topic}, int64(n), c.name, c.value, "")
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		results = append(results, r)
	}
	// The ceiling is the faster of a read before and one after the agents,
	// so a broker still warming up does not flatter the ratios.
	if again, err := bareConsumer(ctx, bootstrap, topic, int64(n)); err == nil && again.RecordsPerSec > ceiling.RecordsPerSec {
		ceiling = again
		results[0] = again
	}
	for i := range results {
		results[i].OfCeiling = results[i].RecordsPerSec / ceiling.RecordsPerSec
	}
	if wide > 0 {
		r, err := wideRun(ctx, agentBin, bootstrap, wide)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	fmt.Printf("\n%-36s %10s %8s %12s %9s %9s %7s\n", "", "records", "seconds", "records/s", "of ceil.", "peak RSS", "files")
	for _, r := range results {
		rss, ratio, files := "-", "-", "-"
		if r.PeakRSSMB > 0 {
			rss = fmt.Sprintf("%.0f MB", r.PeakRSSMB)
		}
		if r.OfCeiling > 0 {
			ratio = fmt.Sprintf("%.0f%%", 100*r.OfCeiling)
		}
		if r.Files > 0 {
			files = strconv.FormatInt(r.Files, 10)
		}
		fmt.Printf("%-36s %10d %8.2f %12.0f %9s %9s %7s\n", r.Name, r.Records, r.Seconds, r.RecordsPerSec, ratio, rss, files)
		if m := r.Memory; m != nil && m.Pauses+m.Flushes > 0 {
			fmt.Printf("%-36s memory budget: peak %.0f MB of %.0f MB, %d fetches paused, %d flushes asked\n",
				"", m.PeakUsedMB, m.LimitMB, m.Pauses, m.Flushes)
		}
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(map[string]any{"topic": topic, "results": results, "time": time.Now().UTC()}, "", "  ")
	return os.WriteFile(out, b, 0o644)
}

// wideRun produces n records over wideTables new topics of widePartitions
// partitions and measures one agent, with its default memory budget,
// ingesting each topic into a table of its own.
func wideRun(ctx context.Context, agentBin, bootstrap string, n int) (result, error) {
	stamp := time.Now().UnixNano()
	topics := make([]string, wideTables)
	for i := range topics {
		topics[i] = fmt.Sprintf("bench-wide-%d-%02d", stamp, i)
	}
	log.Printf("producing %d records of about 1 KB to %d topics of %d partitions", n, wideTables, widePartitions)
	if err := produce(ctx, bootstrap, topics, widePartitions, n, wideNameBytes); err != nil {
		return result{}, err
	}
	name := fmt.Sprintf("agent: %d tables × %d partitions", wideTables, widePartitions)
	// A flush interval of a minute: the memory budget, not the interval,
	// decides when the tables flush.
	r, err := ingest(ctx, agentBin, bootstrap, topics, int64(n), name, jsonValue, "1m")
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}

// produce writes n JSON records, round robin, to new topics of the given
// number of partitions. The records are about 100 bytes, plus nameBytes when
// their name is that many random hex digits rather than "user-<n>".
func produce(ctx context.Context, bootstrap string, topics []string, partitions, n, nameBytes int) error {
	conn, err := kafkago.Dial("tcp", bootstrap)
	if err != nil {
		return err
	}
	defer conn.Close()
	configs := make([]kafkago.TopicConfig, len(topics))
	for i, topic := range topics {
		configs[i] = kafkago.TopicConfig{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}
	}
	if err := conn.CreateTopics(configs...); err != nil {
		return fmt.Errorf("create topics: %w", err)
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
			return fmt.Errorf("topics not ready after 30s: %d of %d partitions have a leader (%v)", led, len(topics)*partitions, err)
		}
	}
	// A transport of its own: the default one caches the metadata of an
	// earlier call, which does not know the new topics yet.
	transport := &kafkago.Transport{}
	defer transport.CloseIdleConnections()
	w := &kafkago.Writer{Addr: kafkago.TCP(bootstrap), Balancer: &kafkago.RoundRobin{}, Transport: transport,
		BatchSize: 5000, BatchBytes: 4 << 20, BatchTimeout: 10 * time.Millisecond, RequiredAcks: kafkago.RequireOne}
	defer w.Close()
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	const chunk = 20_000
	msgs := make([]kafkago.Message, 0, chunk)
	rnd := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, nameBytes/2)
	for i := 0; i < n; i++ {
		ts := base.Add(time.Duration(i) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		name := fmt.Sprintf("user-%d", i%100000)
		if nameBytes > 0 {
			for j := range random {
				random[j] = byte(rnd.Uint32())
			}
			name = hex.EncodeToString(random)
		}
		v := fmt.Sprintf(`{"id":%d,"name":"%s","amount":%d.%02d,"ts":"%s","tags":["a","b%d"]}`, i, name, i%1000, i%100, ts, i%7)
		msgs = append(msgs, kafkago.Message{Topic: topics[i%len(topics)], Value: []byte(v)})
		if len(msgs) == chunk || i == n-1 {
			if err := write(ctx, w, msgs); err != nil {
				return err
			}
			msgs = msgs[:0]
		}
	}
	return nil
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

// bareConsumer reads every partition with kafka-go's Conn.ReadBatch, the
// way the agent fetches, and decodes nothing: the ceiling.
func bareConsumer(ctx context.Context, bootstrap, topic string, n int64) (result, error) {
	start := time.Now()
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for p := 0; p < 4; p++ {
		wg.Go(func() {
			conn, err := kafkago.DialLeader(ctx, "tcp", bootstrap, topic, p)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			last, err := conn.ReadLastOffset()
			if err != nil {
				errs <- err
				return
			}
			if _, err := conn.Seek(0, kafkago.SeekAbsolute); err != nil {
				errs <- err
				return
			}
			for off := int64(0); off < last; {
				b := conn.ReadBatchWith(kafkago.ReadBatchConfig{MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 250 * time.Millisecond})
				for {
					m, err := b.ReadMessage()
					if err != nil {
						break
					}
					off = m.Offset + 1
					total.Add(1)
				}
				if err := b.Close(); err != nil && !errors.Is(err, io.EOF) {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return result{}, err
	}
	secs := time.Since(start).Seconds()
	if total.Load() != n {
		return result{}, fmt.Errorf("bare consumer read %d records, want %d", total.Load(), n)
	}
	return result{Name: "kafka-go consumer (ceiling)", Records: n, Seconds: secs, RecordsPerSec: float64(n) / secs}, nil
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

// ingest runs a fresh agent, applies a triggered pipeline with one table per
// topic, each reading from earliest, and measures until every record is
// committed. flush is the pipeline's flush_interval, "" for the default.
func ingest(ctx context.Context, agentBin, bootstrap string, topics []string, n int64, name string, value *spec.Transformer,
	flush string) (result, error) {
	dir, err := os.MkdirTemp("", "tributary-bench")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(agentBin, "serve", "--listen", "127.0.0.1:0", "--data-dir", dir, "--insecure-no-auth")
	stdout, _ := cmd.StdoutPipe()
	logf, _ := os.Create(filepath.Join(dir, "agent.log"))
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	endpoint := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		var seen strings.Builder
		for {
			k, err := stdout.Read(buf)
			seen.Write(buf[:k])
			if m := listening.FindStringSubmatch(seen.String()); m != nil {
				endpoint <- m[1]
				io.Copy(io.Discard, stdout)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var ep string
	select {
	case ep = <-endpoint:
	case <-time.After(30 * time.Second):
		return result{}, errors.New("agent did not start")
	}
	c, err := client.New(ep, "")
	if err != nil {
		return result{}, err
	}
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "bench", BootstrapServers: []string{bootstrap}}); err != nil {
		return result{}, err
	}
	off := false
	p := &spec.Pipeline{Name: "bench", Connection: "bench", DestinationCatalog: "bench", DestinationSchema: "bench", Continuous: &off,
		FlushInterval: flush}
	for i, topic := range topics {
		p.Tables = append(p.Tables, spec.Table{DestinationTable: fmt.Sprintf("t%02d", i), ConnectorOptions: spec.ConnectorOptions{
			KafkaOptions: spec.KafkaOptions{Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest, ValueTransformer: value}}})
	}
	start := time.Now()
	if _, err := c.PutPipeline(ctx, p); err != nil {
		return result{}, err
	}
	var peakUsed int64
	for i := 0; ; i++ {
		if i%10 == 0 {
			m, err := memoryMetrics(ctx, ep)
			if err != nil {
				return result{}, err
			}
			peakUsed = max(peakUsed, m["used_bytes"])
		}
		resp, err := c.GetPipeline(ctx, "bench")
		if err != nil {
			return result{}, err
		}
		if resp.Status.State == spec.StateFailed {
			return result{}, fmt.Errorf("pipeline failed: %+v", resp.Status)
		}
		if resp.Status.State == spec.StateCompleted {
			secs := time.Since(start).Seconds()
			r := result{Name: name, Records: n, Seconds: secs, RecordsPerSec: float64(n) / secs, PeakRSSMB: peakRSS(cmd.Process.Pid)}
			var rows int64
			for _, t := range resp.Status.Tables {
				rows += t.Rows
				r.Files += t.Files
			}
			if rows != n {
				return result{}, fmt.Errorf("tables have %d rows, want %d", rows, n)
			}
			m, err := memoryMetrics(ctx, ep)
			if err != nil {
				return result{}, err
			}
			r.Memory = &budgetUse{LimitMB: float64(m["limit_bytes"]) / (1 << 20), PeakUsedMB: float64(peakUsed) / (1 << 20),
				Pauses: m["pauses_total"], Flushes: m["flushes_total"]}
			return r, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
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
