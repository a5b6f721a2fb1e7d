//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// cluster is a set of agent processes of one cluster: one name, one
// warehouse on an object store, one secrets key and one token.
type cluster struct {
	t         *testing.T
	name      string
	warehouse string
	keyFile   string
	token     string
	agents    []*agent
}

// newCluster returns a cluster of no agents yet, with a new name, on a new
// root of the S3-compatible server (skipping the test without one).
func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{t: t, name: uniqueName("cluster"), warehouse: storeRoot(t, "s3"),
		token: uniqueName("e2e-token") + strings.Repeat("0", 32)}
	c.keyFile = filepath.Join(t.TempDir(), "secrets.key")
	key := make([]byte, 32)
	copy(key, c.name)
	if err := os.WriteFile(c.keyFile, []byte(base64.StdEncoding.EncodeToString(key)), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// join starts one more agent of the cluster, named agent<n>, on a data
// folder of its own.
func (c *cluster) join() *agent {
	c.t.Helper()
	dataDir := c.t.TempDir()
	if err := os.WriteFile(filepath.Join(dataDir, "token"), []byte(c.token), 0o600); err != nil {
		c.t.Fatal(err)
	}
	a := startAgentOn(c.t, dataDir, c.warehouse, c.flags(fmt.Sprintf("agent%d", len(c.agents)))...)
	c.agents = append(c.agents, a)
	return a
}

// gcGrace is the garbage collection grace of a cluster's agents: short,
// so that a test sees the files a killed agent left collected, and ten
// times longer than any flush interval of these tests.
const gcGrace = 8 * time.Second

// flags returns the serve flags of the cluster's agent of the name.
func (c *cluster) flags(name string) []string {
	return []string{"--cluster", c.name, "--agent-name", name, "--secrets-key-file", c.keyFile, "--cluster-sync-interval", "500ms",
		"--gc-grace", gcGrace.String()}
}

// TestClusterSharesState: a connection and a pipeline created through one
// agent of a cluster are what every other agent answers at once, secrets
// included where the engine needs them; a single agent's state moves into
// the cluster with `tributary-agent state import`.
func TestClusterSharesState(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a, b := c.join(), c.join()
	ctx := context.Background()
	conn := &spec.Connection{Name: "kafka", BootstrapServers: []string{env.bootstrap},
		SchemaRegistry: &spec.SchemaRegistry{URL: "http://127.0.0.1:1", APIKey: "k", APISecret: "registry-secret-value"}}
	if _, err := a.client().PutConnection(ctx, conn); err != nil {
		t.Fatal(err)
	}
	got, err := b.client().GetConnection(ctx, "kafka")
	if err != nil {
		t.Fatalf("GET through the other agent: %v", err)
	}
	if got.SchemaRegistry == nil || got.SchemaRegistry.APISecret != "" {
		t.Errorf("the other agent answers %+v, want the connection without its secret", got.SchemaRegistry)
	}

	// A single agent with state of its own, stopped, then imported.
	single := startAgentOn(t, t.TempDir(), c.warehouse)
	p := &spec.Pipeline{Name: "imported", Connection: "kafka", DestinationCatalog: "main", DestinationSchema: "e2e",
		Tables: []spec.Table{{DestinationTable: "imported", ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
			Topics: []string{uniqueName("e2e-import")}}}}}}
	if _, err := single.client().PutConnection(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if _, err := single.client().PutPipeline(ctx, p); err != nil {
		t.Fatal(err)
	}
	single.stop()
	out, err := exec.Command(env.agentBin, "state", "import", "--data-dir", single.dataDir, "--cluster", c.name,
		"--warehouse", c.warehouse, "--secrets-key-file", c.keyFile).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "copied 1 object(s)") {
		t.Fatalf("state import: %v\n%s", err, out)
	}
	for _, ag := range c.agents {
		if _, err := ag.client().GetPipeline(ctx, "imported"); err != nil {
			t.Errorf("after the import, GET through an agent of the cluster: %v", err)
		}
	}
	// The connection it held already, the same, was left alone; one that
	// differs stops the import.
	conn.BootstrapServers = []string{"127.0.0.1:1"}
	if _, err := b.client().PutConnection(ctx, conn); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(env.agentBin, "state", "import", "--data-dir", single.dataDir, "--cluster", c.name,
		"--warehouse", c.warehouse, "--secrets-key-file", c.keyFile).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `connections "kafka" exists in both and differs`) {
		t.Errorf("an import of a differing connection: %v\n%s", err, out)
	}

	// An agent with another key is refused, naming its key file.
	other := filepath.Join(t.TempDir(), "other.key")
	if err := os.WriteFile(other, []byte(base64.StdEncoding.EncodeToString(make([]byte, 32))), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	cmd := exec.Command(env.agentBin, "serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--warehouse", c.warehouse,
		"--insecure-no-auth", "--cluster", c.name, "--agent-name", "intruder", "--secrets-key-file", other)
	done := make(chan []byte, 1)
	go func() { out, _ := cmd.CombinedOutput(); done <- out }()
	select {
	case out := <-done:
		if !strings.Contains(string(out), "another secrets key than the one in "+other) {
			t.Errorf("an agent with another key: %s", out)
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Error("an agent with another key started")
	}
}

// TestClusterExactlyOnce: three agents of a cluster run one pipeline of
// two tables and a fanout schema over a topic of 12 partitions while
// 300,000 records are
// produced and the cluster changes under it: an agent is killed with
// SIGKILL, a fourth joins, one stops gracefully, the killed one starts
// again, and every agent is restarted in turn. Afterwards the three tables
// hold every (partition, offset) exactly once, as delta-rs, DuckDB and pyarrow
// read them, no file is left uncommitted once the grace has passed, and
// every partition is read by one of the running agents.
func TestClusterExactlyOnce(t *testing.T) {
	t.Parallel()
	const total = 300_000
	c := newCluster(t)
	for range 3 {
		c.join()
	}
	topic := uniqueName("e2e-cluster")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0", "--partitions", "12")
	ctx := context.Background()
	api := c.agents[0].client()
	if _, err := api.PutConnection(ctx, &spec.Connection{Name: "kafka", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	source := spec.KafkaOptions{Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest}
	parsed := source
	parsed.ValueTransformer = &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: eventsSchema}}
	p := &spec.Pipeline{Name: "cluster", Connection: "kafka", DestinationCatalog: "main", DestinationSchema: "e2e",
		// Compaction past 10 small files: each table, the fanout's too,
		// makes more than that on the way, so each is compacted while
		// the partitions move.
		FlushInterval: "500ms", MaxRowsPerFile: 20_000, AutoCompactMinFiles: 10,
		Tables: []spec.Table{
			{DestinationTable: "events", ConnectorOptions: spec.ConnectorOptions{KafkaOptions: parsed},
				TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"}},
			{DestinationTable: "raw", ConnectorOptions: spec.ConnectorOptions{KafkaOptions: source},
				TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"}},
		}}
	if _, err := api.PutPipeline(ctx, p); err != nil {
		t.Fatal(err)
	}
	// And a fanout schema of the same topic, routing every record to one
	// table of its destination schema.
	if _, err := api.PutFanoutSchema(ctx, &spec.FanoutSchema{Name: "cluster-fanout", Pipeline: "cluster", DestinationCatalog: "main",
		DestinationSchema: "e2e_fanout", ConnectorOptions: spec.ConnectorOptions{KafkaOptions: source},
		FanoutOptions: spec.FanoutOptions{FanoutBy: "'routed'"}, TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"}}); err != nil {
		t.Fatal(err)
	}

	produced := startPython(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic,
		"--count", fmt.Sprint(total), "--partitions", "12", "--rate", "12000")
	step := func(what string, do func()) {
		time.Sleep(3 * time.Second)
		do()
		t.Log(what)
	}
	a0, a1, a2 := c.agents[0], c.agents[1], c.agents[2]
	step("agent0 killed", a0.kill)
	step("agent3 joined", func() { c.join() })
	step("agent1 stopped", a1.stop)
	step("agent0 started again", a0.start)
	for _, a := range []*agent{a0, a2, c.agents[3]} {
		step("an agent restarted", func() { a.stop(); a.start() })
	}
	produced()

	f := a2.waitFanoutRows("cluster-fanout", map[string]int64{"routed": total}, 3*time.Minute)
	locations := []string{f.Status.Tables[0].Location}
	// Every table is compacted on the way (a file per partition per flush
	// makes more than auto_compact_min_files small files), by the agent
	// that reads its first partition at the time, while the partitions move:
	// the compactions lose and duplicate nothing.
	awaitCompaction(t, locations[0], time.Minute)
	checkTable(t, locations[0], "--count", fmt.Sprint(total), "--metadata", "_kafka", "--exactly-once", "--orphans-by-agent", "--compacted")
	live := map[string]bool{"agent0": true, "agent2": true, "agent3": true}
	for i, name := range []string{"events", "raw"} {
		st := a2.waitAtLeast("cluster", i, total, 3*time.Minute)
		locations = append(locations, st.Location)
		t.Logf("table %s: %d rows in %d files, version %d", name, st.Rows, st.Files, st.Version)
		awaitCompaction(t, st.Location, time.Minute)
		checkTable(t, st.Location, "--count", fmt.Sprint(total), "--metadata", "_kafka", "--exactly-once", "--orphans-by-agent", "--compacted")
		if len(st.Partitions) != 12 {
			t.Errorf("table %s: status lists %d partitions, want 12: %+v", name, len(st.Partitions), st.Partitions)
		}
		for _, ps := range st.Partitions {
			if !live[ps.Agent] {
				t.Errorf("table %s: partition %d is read by %q, not a running agent", name, ps.Partition, ps.Agent)
			}
		}
	}
	if t.Failed() {
		// What the agents said of their tables' maintenance.
		for i, a := range c.agents {
			all, _ := os.ReadFile(filepath.Join(a.dataDir, "agent.log"))
			t.Logf("agent%d's log on maintenance:\n%s", i, linesWith(string(all), "compact", "vacuum"))
		}
	}
	// What the killed agent uploaded and never committed is collected
	// once the grace has passed (a collection runs every few seconds).
	time.Sleep(gcGrace + 5*time.Second)
	for _, location := range locations {
		checkTable(t, location, "--files-only", "--no-orphans")
	}
}

// TestClusterZombie: an agent frozen (SIGSTOP) while it holds records it
// read but had not committed loses its partitions to the other agent once
// Kafka's session timeout passes; the other agent reads them again from the
// table's log and commits them. Thawed (SIGCONT), the frozen agent must not
// commit what it held: the table holds every record exactly once.
func TestClusterZombie(t *testing.T) {
	t.Parallel()
	const first, second = 20_000, 10_000
	c := newCluster(t)
	zombie, other := c.join(), c.join()
	topic := uniqueName("e2e-zombie")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0", "--partitions", "6")
	ctx := context.Background()
	api := other.client()
	if _, err := api.PutConnection(ctx, &spec.Connection{Name: "kafka", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	// A long flush interval: what the agents read stays in their buffers.
	if _, err := api.PutPipeline(ctx, &spec.Pipeline{Name: "zombie", Connection: "kafka", DestinationCatalog: "main", DestinationSchema: "e2e",
		FlushInterval: "15s", Tables: []spec.Table{{DestinationTable: "zombie",
			ConnectorOptions:   spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"}}}}); err != nil {
		t.Fatal(err)
	}
	// Both agents own partitions before the records come.
	other.waitFor("zombie", "partitions on both agents", time.Minute, func(p *spec.PipelineResponse) bool {
		agents := map[string]bool{}
		for _, ps := range p.Status.Tables[0].Partitions {
			agents[ps.Agent] = true
		}
		return len(agents) == 2
	})
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", fmt.Sprint(first), "--partitions", "6")
	time.Sleep(3 * time.Second) // read, not committed
	if err := zombie.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Log("agent0 frozen")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", fmt.Sprint(second), "--partitions", "6")
	st := other.waitAtLeast("zombie", 0, first+second, 2*time.Minute)
	t.Logf("the other agent committed every record: %d rows, version %d", st.Rows, st.Version)
	if err := zombie.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	t.Log("agent0 thawed")
	time.Sleep(20 * time.Second) // past the zombie's flush interval
	st = other.waitAtLeast("zombie", 0, first+second, time.Minute)
	checkTable(t, st.Location, "--count", fmt.Sprint(first+second), "--metadata", "_kafka", "--exactly-once", "--orphans-by-agent")
	if log := zombie.log(); !strings.Contains(log, "giving up every partition, another agent may own them now") {
		t.Errorf("the thawed agent did not give its partitions up; its log:\n%s", log)
	}
}

// TestClusterRuns: runs of a triggered pipeline started through either
// agent of a cluster read every partition, on whichever agent owns it, up
// to its end: after each run every record produced before it is in the
// table exactly once.
func TestClusterRuns(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a, b := c.join(), c.join()
	topic := uniqueName("e2e-cluster-runs")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "3000", "--partitions", "6")
	ctx := context.Background()
	if _, err := a.client().PutConnection(ctx, &spec.Connection{Name: "kafka", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	off := false
	if _, err := a.client().PutPipeline(ctx, &spec.Pipeline{Name: "runs", Connection: "kafka", DestinationCatalog: "main",
		DestinationSchema: "e2e", FlushInterval: "500ms", Continuous: &off, Tables: []spec.Table{{DestinationTable: "runs",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{topic},
				StartingOffset: spec.StartingOffsetEarliest, EndingOffset: spec.EndingOffsetLatest}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"}}}}); err != nil {
		t.Fatal(err)
	}
	idle := func(through *agent, want int64) spec.TableStatus {
		p := through.waitFor("runs", fmt.Sprintf("IDLE with %d rows", want), 2*time.Minute, func(p *spec.PipelineResponse) bool {
			return p.Status.State == spec.StateIdle && p.Status.Tables[0].Rows == want
		})
		return p.Status.Tables[0]
	}
	idle(b, 3000)
	total := int64(3000)
	for i, through := range []*agent{b, a} {
		idle(through, total)
		python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "2000", "--partitions", "6")
		total += 2000
		// A rebalance (the second agent joining) restarts the loops of the
		// partitions it moves, which read to the ends they fix then: a run
		// asked for meanwhile is refused until every share is over.
		deadline := time.Now().Add(time.Minute)
		for {
			_, err := through.client().StartRun(ctx, "runs")
			if err == nil {
				break
			}
			var api *client.APIError
			if !errors.As(err, &api) || api.Status != http.StatusConflict || time.Now().After(deadline) {
				t.Fatalf("run %d: %v", i+1, err)
			}
			time.Sleep(time.Second)
		}
		st := idle(a, total)
		checkTable(t, st.Location, "--count", fmt.Sprint(total), "--metadata", "_kafka", "--exactly-once", "--orphans-by-agent")
	}
}

// TestClusterKafkaSink: an exactly-once Kafka sink applied to a cluster
// runs on one agent; killed with SIGKILL while its source grows, the sink
// moves to the other agent, which fences what the killed one left open
// and resumes from the sink's consumer group: a read_committed consumer
// reads every source record once.
func TestClusterKafkaSink(t *testing.T) {
	t.Parallel()
	const n = 10000
	c := newCluster(t)
	c.join()
	c.join()
	src, dst := uniqueName("sink_src"), uniqueName("sink_dst")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", src, "--count", "0", "--partitions", "3")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", dst, "--count", "0", "--partitions", "2")
	ctx := context.Background()
	api := c.agents[0].client()
	if _, err := api.PutConnection(ctx, &spec.Connection{Name: "k", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	name := uniqueName("cluster_sink")
	if _, err := api.PutKafkaSink(ctx, sinkOf(name, "k", src, dst)); err != nil {
		t.Fatal(err)
	}
	produced := startPython(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", src, "--count", fmt.Sprint(n),
		"--partitions", "3", "--rate", "1000")
	// The agent the sink runs on says so in its log.
	var owner, other *agent
	deadline := time.Now().Add(time.Minute)
	for owner == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no agent runs the sink; logs:\n%s\n%s", c.agents[0].log(), c.agents[1].log())
		}
		for i, a := range c.agents {
			if strings.Contains(a.log(), "kafka sink runs on this agent") {
				owner, other = a, c.agents[1-i]
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if strings.Contains(other.log(), "kafka sink runs on this agent") {
		t.Fatal("both agents run the sink")
	}
	time.Sleep(2 * time.Second)
	owner.kill()
	t.Log("the sink's agent killed")
	produced()
	// Only the surviving agent can bring the sink to the end of its source.
	st := other.waitSinkAt(name, src, 3*time.Minute)
	t.Logf("sink at %v", st.Positions)
	checkSinkTopic(t, dst, n)
}

// linesWith returns the lines of text that contain one of words.
func linesWith(text string, words ...string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for _, w := range words {
			if strings.Contains(line, w) {
				out = append(out, line)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
