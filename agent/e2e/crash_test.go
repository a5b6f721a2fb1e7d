//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/testlog"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestCrashExactlyOnce kills the agent with SIGKILL at five random moments
// while 200,000 records are produced, restarting it each time on the same
// data dir. Afterwards every (partition, offset) is in the table exactly
// once, as delta-rs, DuckDB and pyarrow read it.
func TestCrashExactlyOnce(t *testing.T) {
	t.Parallel()
	crashPlain(t, 200_000, 20_000, kills(5, 500*time.Millisecond, 2500*time.Millisecond), "")
}

// TestCrashExactlyOnceObjectStores is TestCrashExactlyOnce, with 100,000
// records, on each object store (the S3-compatible server, the GCS
// emulator, the Azure emulator): data files are streamed uploads, log
// entries conditional writes, and there is no lock. With a garbage
// collection grace period of 3 seconds, the files the kills left uploaded
// but uncommitted are gone soon after.
func TestCrashExactlyOnceObjectStores(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, root string) {
		location := crashPlain(t, 100_000, 20_000, kills(5, 500*time.Millisecond, 2500*time.Millisecond), root, "--gc-grace", "3s")
		time.Sleep(5 * time.Second) // the grace, and a collection every 750ms
		checkTable(t, location, "--files-only", "--no-orphans")
	})
}

// crashPlain runs crashTest with total records of a plain producer, rate
// records a second, the agent interrupted as d says, the tables under
// warehouse ("" for the agent's default) and the agent run with flags, and
// returns the table's location.
func crashPlain(t *testing.T, total, rate int, d disruption, warehouse string, flags ...string) string {
	return crashTest(t, warehouse, flags, d, []string{"produce.py", "--count", strconv.Itoa(total), "--rate", strconv.Itoa(rate)},
		func() (int64, []string) {
			return int64(total), []string{"--count", strconv.Itoa(total), "--metadata", "_kafka", "--exactly-once", "--orphans-by-agent"}
		})
}

// TestCrashExactlyOnceTransactional is TestCrashExactlyOnce with a
// transactional producer: 60,000 records in transactions of 500, every
// fourth transaction aborted. Afterwards the table (read_committed, the
// default) holds exactly the committed records, each once, at the offsets
// the producer's delivery reports gave, and no transaction marker.
func TestCrashExactlyOnceTransactional(t *testing.T) {
	t.Parallel()
	manifest := filepath.Join(t.TempDir(), "manifest.json")
	crashTest(t, "", nil, kills(5, 500*time.Millisecond, 2500*time.Millisecond), []string{"produce_txn.py", "stream", "--count", "60000", "--txn-size", "500", "--abort-every", "4",
		"--rate", "10000", "--manifest", manifest},
		func() (int64, []string) {
			recs := readManifest(t, manifest)
			t.Logf("produced %d committed and %d aborted records", countKinds(recs, kindCommitted), countKinds(recs, kindAborted))
			return countKinds(recs, kindCommitted), []string{"--manifest", manifest, "--kinds", kindCommitted,
				"--metadata", "_kafka", "--orphans-by-agent"}
		})
}

// crashTest runs producer (a testdata script and its arguments; the
// bootstrap and topic are appended) against a fresh 4-partition topic that a
// pipeline reads from earliest into a table under warehouse ("" for the
// agent's default), interrupts the agent as d says while it produces
// (kills: SIGKILL at five random moments, restarting it each time on the
// same data dir), and then, once the producer has exited, waits for the
// number of rows expect returns and runs check_table.py with the arguments
// it returns. The agent runs with flags. It returns the table's location.
func crashTest(t *testing.T, warehouse string, flags []string, d disruption, producer []string,
	expect func() (rows int64, checkArgs []string)) string {
	dataDir := t.TempDir()
	a := startAgentOn(t, dataDir, cmp.Or(warehouse, filepath.Join(dataDir, "warehouse")), flags...)
	topic := uniqueName("e2e-crash")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0")

	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "crash", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutPipeline(ctx, crashPipeline("crash", topic)); err != nil {
		t.Fatal(err)
	}

	// Production takes several seconds; interrupt the agent at random
	// moments spread over it and the catch-up after it.
	a.produceWhile(t, d, producer[0], slices.Concat(producer[1:], []string{"--bootstrap", env.bootstrap, "--topic", topic})...)
	rows, checkArgs := expect()
	st := a.waitAtLeast("crash", 0, rows, 3*time.Minute)
	t.Logf("table %s: %d rows in %d files, version %d", st.Location, st.Rows, st.Files, st.Version)
	if !checkTable(t, st.Location, checkArgs...) {
		t.FailNow()
	}
	if st.Rows != rows {
		t.Errorf("status reports %d rows, want %d", st.Rows, rows)
	}
	return st.Location
}

// crashPipeline returns the pipeline "crash" of the crash tests: one table,
// crash, of the events JSON of topic read from earliest through
// connection, with the records' metadata in _kafka.
func crashPipeline(connection, topic string) *spec.Pipeline {
	return &spec.Pipeline{
		Name: "crash", Connection: connection, DestinationCatalog: "main", DestinationSchema: "e2e",
		FlushInterval: "300ms", MaxRowsPerFile: 7_000,
		Tables: []spec.Table{{
			DestinationTable: "crash",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
				ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: eventsSchema}},
			}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
		}},
	}
}

// disruption is what a test does to its agent while records are
// produced: times times, after a random pause of pause plus up to spread,
// it calls do with the count so far (0 first), which leaves the agent
// running again.
type disruption struct {
	times         int
	pause, spread time.Duration
	do            func(a *agent, i int)
}

// kills kills the agent with SIGKILL n times, each after a random pause of
// pause plus up to spread, starting it again each time.
func kills(n int, pause, spread time.Duration) disruption {
	return disruption{times: n, pause: pause, spread: spread, do: func(a *agent, i int) {
		a.kill()
		a.t.Logf("kill %d: agent killed", i+1)
		a.start()
	}}
}

// produceWhile runs the Python script of testdata with args, and while it
// produces interrupts the agent as d says; it fails the test, with the
// script's output, if the script fails.
func (a *agent) produceWhile(t *testing.T, d disruption, script string, args ...string) {
	t.Helper()
	wait := startPython(t, script, args...)
	for i := range d.times {
		time.Sleep(d.pause + rand.N(d.spread))
		d.do(a, i)
	}
	wait()
}

// startPython starts the Python script of testdata with args and returns
// a function that waits for it to exit, failing the test, with the
// script's output, if it fails.
func startPython(t *testing.T, script string, args ...string) (wait func()) {
	t.Helper()
	cmd := exec.Command(env.python, append([]string{filepath.Join("testdata", script)}, args...)...)
	out := &testlog.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	produced := make(chan error, 1)
	go func() { produced <- cmd.Wait() }()
	return func() {
		t.Helper()
		if err := <-produced; err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
}
