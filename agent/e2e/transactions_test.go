//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/testlog"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The kinds of records produce_txn.py writes to its manifest.
const (
	kindCommitted  = "committed"   // in a committed transaction
	kindAborted    = "aborted"     // in an aborted transaction
	kindPlain      = "plain"       // from a non-transactional producer
	kindOpen       = "open"        // in the transaction left open
	kindAfter      = "after"       // plain, after the open transaction on its partition
	kindAfterOther = "after_other" // plain, on the other partitions, after it
)

// eventsSchema is the value schema of the records produce.py and
// produce_txn.py write.
const eventsSchema = "id BIGINT, name STRING, amount DOUBLE, ts TIMESTAMP, tags ARRAY<STRING>"

// manifestRecord is one record of a produce_txn.py manifest.
type manifestRecord struct {
	ID        int64  `json:"id"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Kind      string `json:"kind"`
}

func readManifest(t *testing.T, path string) []manifestRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Records []manifestRecord }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("manifest %s: %v", path, err)
	}
	return m.Records
}

// countKinds returns how many records of recs are of one of kinds.
func countKinds(recs []manifestRecord, kinds ...string) int64 {
	var n int64
	for _, r := range recs {
		if slices.Contains(kinds, r.Kind) {
			n++
		}
	}
	return n
}

// checkManifest checks, with delta-rs, DuckDB and pyarrow, that the table
// holds exactly the manifest's records of kinds, each once, at the offsets
// they were written to, and no other row (no transaction marker).
func checkManifest(t *testing.T, location, manifest string, kinds ...string) bool {
	t.Helper()
	return checkTable(t, location, "--manifest", manifest, "--kinds", strings.Join(kinds, ","), "--metadata", "_kafka", "--no-orphans")
}

// scriptProcess is a Python script from testdata that the test talks to
// over stdin and stdout.
type scriptProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	out   *testlog.Buffer // stderr, and stdout as read
	done  chan error
}

func startScript(t *testing.T, script string, args ...string) *scriptProcess {
	t.Helper()
	p := &scriptProcess{lines: make(chan string, 16), out: &testlog.Buffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(env.python, append([]string{filepath.Join("testdata", script)}, args...)...)
	p.cmd.Stderr = p.out
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(p.out, sc.Text())
			p.lines <- sc.Text()
		}
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done //nolint:errcheck // the process was killed: its exit error says only that
	})
	return p
}

// expect waits until the script prints line.
func (p *scriptProcess) expect(t *testing.T, line string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l := <-p.lines:
			if l == line {
				return
			}
		case err := <-p.done:
			p.done <- err
			t.Fatalf("%s exited (%v) before printing %q:\n%s", filepath.Base(p.cmd.Path), err, line, p.out)
		case <-deadline:
			t.Fatalf("script did not print %q within %s:\n%s", line, timeout, p.out)
		}
	}
}

// TestTransactions reads one 3-partition topic written by two transactional
// producers (30 interleaved transactions, every third aborted), a plain
// producer, and a transaction left open while the agent reads, followed by
// plain records on its partition and on the others. Every record has a
// unique id and the producer's manifest says where each went. It proves:
//   - a read_committed table (the default) holds exactly the committed and
//     plain records, each once: no aborted record, no transaction marker;
//     while the transaction is open, none of its records and nothing after
//     it on its partition, but the records after it on other partitions;
//     after it commits, its records and those after it;
//   - a read_uncommitted table holds every data record, aborted and open
//     ones included, each once, and no transaction marker;
//   - a triggered run (continuous = false) under read_committed, started
//     while the transaction is open, completes at the last stable offset:
//     it holds the committed and plain records before the open transaction
//     and nothing of it or after it on its partition.
func TestTransactions(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	topic := uniqueName("e2e-txn")
	manifest := filepath.Join(t.TempDir(), "manifest.json")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0", "--partitions", "3")

	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "txn", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	table := func(name, isolation string) spec.Table {
		return spec.Table{
			DestinationTable: name,
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest, IsolationLevel: isolation,
				ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: eventsSchema}},
			}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
		}
	}
	if _, err := c.PutPipeline(ctx, &spec.Pipeline{
		Name: "txn", Connection: "txn", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "300ms",
		Tables: []spec.Table{
			table("txn_committed", ""), // the default: read_committed
			table("txn_uncommitted", spec.IsolationReadUncommitted),
		},
	}); err != nil {
		t.Fatal(err)
	}

	producer := startScript(t, "produce_txn.py", "interleaved", "--bootstrap", env.bootstrap, "--topic", topic,
		"--manifest", manifest, "--partitions", "3", "--transactions", "30", "--abort-every", "3",
		"--open", "25", "--after", "15", "--after-other", "15")
	producer.expect(t, "open", 2*time.Minute)
	recs := readManifest(t, manifest)
	t.Logf("produced %d committed, %d aborted, %d plain records; open transaction of %d records, then %d plain records on its partition and %d on the others",
		countKinds(recs, kindCommitted), countKinds(recs, kindAborted), countKinds(recs, kindPlain),
		countKinds(recs, kindOpen), countKinds(recs, kindAfter), countKinds(recs, kindAfterOther))
	all := []string{kindCommitted, kindAborted, kindPlain, kindOpen, kindAfter, kindAfterOther}
	visibleWhileOpen := []string{kindCommitted, kindPlain, kindAfterOther}
	visibleAfterCommit := []string{kindCommitted, kindPlain, kindAfterOther, kindOpen, kindAfter}

	// While the transaction is open. The read_uncommitted table reads to
	// the high watermark; once it has everything, and a few flush
	// intervals later, the read_committed table has had every chance to
	// ingest what it must not.
	uncommitted := a.waitAtLeast("txn", 1, countKinds(recs, all...), time.Minute)
	committed := a.waitAtLeast("txn", 0, countKinds(recs, visibleWhileOpen...), time.Minute)
	time.Sleep(2 * time.Second)
	t.Log("read_committed table while a transaction is open:")
	checkManifest(t, committed.Location, manifest, visibleWhileOpen...)
	t.Log("read_uncommitted table while a transaction is open:")
	checkManifest(t, uncommitted.Location, manifest, all...)

	// A triggered run started while the transaction is open ends at the
	// last stable offset, and completes.
	once := false
	trig := table("txn_triggered", "")
	if _, err := c.PutPipeline(ctx, &spec.Pipeline{
		Name: "txn-once", Connection: "txn", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "300ms",
		Continuous: &once, Tables: []spec.Table{trig},
	}); err != nil {
		t.Fatal(err)
	}
	p := a.waitFor("txn-once", "IDLE (a triggered read_committed run must end at the last stable offset while a transaction is open)",
		time.Minute, func(p *spec.PipelineResponse) bool { return p.Status.State == spec.StateIdle })
	t.Log("triggered read_committed run while a transaction is open:")
	checkManifest(t, p.Status.Tables[0].Location, manifest, visibleWhileOpen...)

	// Commit the open transaction: its records and those after it appear.
	if _, err := io.WriteString(producer.stdin, "commit\n"); err != nil {
		t.Fatal(err)
	}
	producer.expect(t, "committed", time.Minute)
	committed = a.waitAtLeast("txn", 0, countKinds(recs, visibleAfterCommit...), time.Minute)
	time.Sleep(time.Second)
	t.Log("read_committed table after the commit:")
	checkManifest(t, committed.Location, manifest, visibleAfterCommit...)
	t.Log("read_uncommitted table after the commit:")
	checkManifest(t, uncommitted.Location, manifest, all...)
}
