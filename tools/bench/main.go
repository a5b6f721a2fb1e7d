// Command bench measures end-to-end ingestion on a real Kafka broker (`make
// bench` starts one): it produces 1,000,000 JSON records of about 100 bytes
// to a 4-partition topic, then measures
//
//   - a bare kafka-go consumer reading the topic (the ceiling),
//   - the agent ingesting it into a table with an explicit JSON schema,
//   - the agent ingesting it into a table with raw BINARY columns,
//
// each from the earliest offset until the last offset is committed, as
// records/s and, for the agent, peak RSS. It prints a table and writes the
// figures as JSON to .bench/results.json.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
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
	OfCeiling     float64 `json:"ratio_to_ceiling"`
}

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:19092", "Kafka bootstrap address")
	records := flag.Int("records", 1_000_000, "records to produce")
	agentBin := flag.String("agent", ".tools/bin/tributary-agent", "agent binary")
	out := flag.String("out", ".bench/results.json", "where to write the JSON results")
	flag.Parse()
	if err := run(*bootstrap, *records, *agentBin, *out); err != nil {
		log.Fatal(err)
	}
}

func run(bootstrap string, n int, agentBin, out string) error {
	ctx := context.Background()
	topic := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	log.Printf("producing %d records to %s", n, topic)
	if err := produce(ctx, bootstrap, topic, n); err != nil {
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
		{"agent: JSON with schema", &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{
			Schema: "id BIGINT, name STRING, amount DOUBLE, ts TIMESTAMP, tags ARRAY<STRING>"}}},
		{"agent: BINARY", nil},
	} {
		r, err := ingest(ctx, agentBin, bootstrap, topic, int64(n), c.name, c.value)
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
	fmt.Printf("\n%-28s %10s %8s %12s %9s %9s\n", "", "records", "seconds", "records/s", "of ceil.", "peak RSS")
	for _, r := range results {
		rss := "-"
		if r.PeakRSSMB > 0 {
			rss = fmt.Sprintf("%.0f MB", r.PeakRSSMB)
		}
		fmt.Printf("%-28s %10d %8.2f %12.0f %8.0f%% %9s\n", r.Name, r.Records, r.Seconds, r.RecordsPerSec, 100*r.OfCeiling, rss)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(map[string]any{"topic": topic, "results": results, "time": time.Now().UTC()}, "", "  ")
	return os.WriteFile(out, b, 0o644)
}

// produce writes n JSON records of about 100 bytes to a new 4-partition topic.
func produce(ctx context.Context, bootstrap, topic string, n int) error {
	conn, err := kafkago.Dial("tcp", bootstrap)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.CreateTopics(kafkago.TopicConfig{Topic: topic, NumPartitions: 4, ReplicationFactor: 1}); err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	w := &kafkago.Writer{Addr: kafkago.TCP(bootstrap), Topic: topic, Balancer: &kafkago.RoundRobin{},
		BatchSize: 5000, BatchBytes: 4 << 20, BatchTimeout: 10 * time.Millisecond, RequiredAcks: kafkago.RequireOne}
	defer w.Close()
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	const chunk = 20_000
	msgs := make([]kafkago.Message, 0, chunk)
	for i := 0; i < n; i++ {
		ts := base.Add(time.Duration(i) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		v := fmt.Sprintf(`{"id":%d,"name":"user-%d","amount":%d.%02d,"ts":"%s","tags":["a","b%d"]}`, i, i%100000, i%1000, i%100, ts, i%7)
		msgs = append(msgs, kafkago.Message{Value: []byte(v)})
		if len(msgs) == chunk || i == n-1 {
			if err := w.WriteMessages(ctx, msgs...); err != nil {
				return fmt.Errorf("produce: %w", err)
			}
			msgs = msgs[:0]
		}
	}
	return nil
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

// ingest runs a fresh agent, applies a triggered pipeline reading the topic
// from earliest, and measures until every record is committed.
func ingest(ctx context.Context, agentBin, bootstrap, topic string, n int64, name string, value *spec.Transformer) (result, error) {
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
	p := &spec.Pipeline{Name: "bench", Connection: "bench", DestinationCatalog: "bench", DestinationSchema: "bench",
		Continuous: &off, Tables: []spec.Table{{DestinationTable: "t", ConnectorOptions: spec.ConnectorOptions{
			KafkaOptions: spec.KafkaOptions{Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest, ValueTransformer: value}}}}}
	start := time.Now()
	if _, err := c.PutPipeline(ctx, p); err != nil {
		return result{}, err
	}
	for {
		resp, err := c.GetPipeline(ctx, "bench")
		if err != nil {
			return result{}, err
		}
		if resp.Status.State == spec.StateFailed {
			return result{}, fmt.Errorf("pipeline failed: %+v", resp.Status)
		}
		if resp.Status.State == spec.StateCompleted {
			if rows := resp.Status.Tables[0].Rows; rows != n {
				return result{}, fmt.Errorf("table has %d rows, want %d", rows, n)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	secs := time.Since(start).Seconds()
	return result{Name: name, Records: n, Seconds: secs, RecordsPerSec: float64(n) / secs, PeakRSSMB: peakRSS(cmd.Process.Pid)}, nil
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
