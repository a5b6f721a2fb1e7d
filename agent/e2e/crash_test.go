//go:build e2e

package e2e

import (
	"context"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestCrashExactlyOnce kills the agent with SIGKILL at five random moments
// while 200,000 records are produced, restarting it each time on the same
// data dir. Afterwards every (partition, offset) is in the table exactly
// once, as delta-rs, DuckDB and pyarrow read it.
func TestCrashExactlyOnce(t *testing.T) {
	const total = 200_000
	dataDir := t.TempDir()
	a := startAgent(t, dataDir)
	topic := uniqueName("e2e-crash")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0")

	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "crash", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	p := &spec.Pipeline{
		Name: "crash", Connection: "crash", DestinationCatalog: "main", DestinationSchema: "e2e",
		FlushInterval: "300ms", MaxRowsPerFile: 7_000,
		Tables: []spec.Table{{
			DestinationTable: "crash",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
				ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{
					Schema: "id BIGINT, name STRING, amount DOUBLE, ts TIMESTAMP, tags ARRAY<STRING>"}},
			}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
		}},
	}
	if _, err := c.PutPipeline(ctx, p); err != nil {
		t.Fatal(err)
	}

	producer := exec.Command(env.python, filepath.Join("testdata", "produce.py"), "--bootstrap", env.bootstrap,
		"--topic", topic, "--count", "200000", "--rate", "20000")
	out := &outputBuffer{}
	producer.Stdout, producer.Stderr = out, out
	if err := producer.Start(); err != nil {
		t.Fatal(err)
	}
	produced := make(chan error, 1)
	go func() { produced <- producer.Wait() }()

	// Production takes about 10s at 20,000 records/s; kill at five random
	// moments spread over it and the catch-up after it.
	for i := 0; i < 5; i++ {
		time.Sleep(time.Duration(500+rand.IntN(2500)) * time.Millisecond)
		a.kill()
		t.Logf("kill %d: agent killed", i+1)
		a.start()
	}
	if err := <-produced; err != nil {
		t.Fatalf("producer: %v\n%s", err, out)
	}
	st := a.waitRows("crash", 0, total, 3*time.Minute)
	t.Logf("table %s: %d rows in %d files, version %d", st.Location, st.Rows, st.Files, st.Version)
	t.Log(python(t, "check_table.py", st.Location, "--count", "200000", "--metadata", "_kafka", "--exactly-once", "--no-orphans"))
}
