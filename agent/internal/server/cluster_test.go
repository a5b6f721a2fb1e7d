package server_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/server"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// clusterAgents starts n agents ("a0", ...) of one cluster whose shared
// state is in one in-memory bucket, each following the others' changes.
func clusterAgents(t *testing.T, n int) []*agent {
	t.Helper()
	return clusterAgentsOn(t, n, func(s storage.Store) storage.Store { return s })
}

// clusterAgentsOn is clusterAgents with each agent's view of the bucket
// wrapped by wrap.
func clusterAgentsOn(t *testing.T, n int, wrap func(storage.Store) storage.Store) []*agent {
	t.Helper()
	key := filepath.Join(t.TempDir(), "secrets.key")
	if err := os.WriteFile(key, []byte(base64.StdEncoding.EncodeToString(make([]byte, 32))), 0o600); err != nil {
		t.Fatal(err)
	}
	bucket := memblob.OpenBucket(nil)
	out := make([]*agent, n)
	for i := range out {
		st, err := store.OpenShared(wrap(storage.FromBucket(bucket, "mem://cluster")), "c", fmt.Sprintf("a%d", i), key)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = newAgentOn(t, st, func(c *server.Config) { c.AgentName = fmt.Sprintf("a%d", i) })
		go out[i].srv.Follow(t.Context(), 10*time.Millisecond)
	}
	return out
}

// eventually fails t unless ok holds within ten seconds.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestClusterReadYourWrites: a PUT through one agent is what a GET through
// another returns at once, and the other agent's engine runs it soon
// after; a change of its connection and its deletion reach the other
// engine too.
func TestClusterReadYourWrites(t *testing.T) {
	agents := clusterAgents(t, 2)
	a, b := agents[0], agents[1]
	ctx := t.Context()
	a.mustPut(t, pipeline("orders", "local", "orders"))
	got, err := b.client.GetPipeline(ctx, "orders")
	if err != nil {
		t.Fatalf("GET through the other agent: %v", err)
	}
	if got.Spec.Tables[0].DestinationTable != "orders" {
		t.Errorf("GET through b: %+v", got.Spec)
	}
	eventually(t, "b's engine runs the pipeline a stored", func() bool { return b.engine.count(b.engine.applies, "orders") == 1 })
	if n := a.engine.count(a.engine.applies, "orders"); n != 1 {
		t.Errorf("a's engine was given the pipeline %d times, want once (its own PUT; following it applies nothing new)", n)
	}
	conn := connection("local")
	conn.BootstrapServers = []string{"127.0.0.1:19093"}
	if _, err := b.client.PutConnection(ctx, conn); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a's engine runs the pipeline with the connection b changed", func() bool {
		a.engine.mu.Lock()
		defer a.engine.mu.Unlock()
		return a.engine.conns["orders"].BootstrapServers[0] == "127.0.0.1:19093"
	})
	if err := b.client.DeletePipeline(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a's engine stops the pipeline b deleted", func() bool { return a.engine.count(a.engine.removes, "orders") == 1 })
	if _, err := a.client.GetPipeline(ctx, "orders"); err == nil {
		t.Error("GET through a after b deleted the pipeline succeeded")
	}
}

// TestClusterRacingChanges: changes made through two agents at once all
// land (a lost race is checked and made again on the winner's state), and
// a check that spans objects still holds across agents: of two pipelines
// claiming one table through two agents at once, exactly one is stored.
func TestClusterRacingChanges(t *testing.T) {
	agents := clusterAgents(t, 2)
	ctx := t.Context()
	agents[0].mustPut(t)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		for j, ag := range agents {
			wg.Go(func() {
				name := fmt.Sprintf("p%d_%d", j, i)
				_, err := ag.client.PutPipeline(ctx, pipeline(name, "local", name))
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a racing PUT failed: %v", err)
		}
	}
	for _, ag := range agents {
		status, _, body := raw(t, http.MethodGet, ag.url+"/v1/pipelines", testToken, "")
		var all []any
		if err := json.Unmarshal([]byte(body), &all); status != http.StatusOK || err != nil || len(all) != 40 {
			t.Errorf("an agent lists %d pipelines (status %d, %v), want 40", len(all), status, err)
		}
	}

	statuses := make(chan int, 2)
	for j, ag := range agents {
		wg.Go(func() {
			_, err := ag.client.PutPipeline(ctx, pipeline(fmt.Sprintf("claim%d", j), "local", "contested"))
			if err == nil {
				statuses <- http.StatusOK
				return
			}
			statuses <- apiError(t, err, http.StatusConflict).Status
		})
	}
	wg.Wait()
	close(statuses)
	var ok int
	for st := range statuses {
		if st == http.StatusOK {
			ok++
		}
	}
	if ok != 1 {
		t.Errorf("%d of two pipelines claiming one table through two agents were stored, want exactly one", ok)
	}
}

// TestClusterStatus: GET through any agent reports the partitions every
// agent reads, each with the agent's name, and the lag of them all.
func TestClusterStatus(t *testing.T) {
	agents := clusterAgents(t, 2)
	for i, ag := range agents {
		ag.engine.mu.Lock()
		ag.engine.partitions = []spec.PartitionStatus{{Topic: "events", Partition: i, NextOffset: int64(10 * (i + 1)), Lag: int64(i + 1)}}
		ag.engine.mu.Unlock()
	}
	agents[0].mustPut(t, pipeline("orders", "local", "orders"))
	for _, ag := range agents {
		eventually(t, "GET reports both agents' partitions", func() bool {
			got, err := ag.client.GetPipeline(t.Context(), "orders")
			if err != nil {
				t.Fatal(err)
			}
			tbl := got.Status.Tables[0]
			want := []spec.PartitionStatus{{Topic: "events", Partition: 0, NextOffset: 10, Lag: 1, Agent: "a0"},
				{Topic: "events", Partition: 1, NextOffset: 20, Lag: 2, Agent: "a1"}}
			return slices.Equal(tbl.Partitions, want) && tbl.Lag == 3
		})
	}
}

// unreachable is a store that fails every call while down is set, as an
// object store cut off by the network does.
type unreachable struct {
	storage.Store
	down *atomic.Bool
}

var errUnreachable = errors.New("dial tcp: connection refused")

func (u unreachable) List(dir string) ([]storage.Entry, error) {
	if u.down.Load() {
		return nil, errUnreachable
	}
	return u.Store.List(dir)
}

func (u unreachable) Read(name string) ([]byte, error) {
	if u.down.Load() {
		return nil, errUnreachable
	}
	return u.Store.Read(name)
}

func (u unreachable) Put(name string, data []byte) error {
	if u.down.Load() {
		return errUnreachable
	}
	return u.Store.Put(name, data)
}

// TestClusterStoreLost: an agent that cannot reach the shared state for
// several rounds stops what it runs, so that its groups' other members
// take its partitions, and runs it again once the store answers.
func TestClusterStoreLost(t *testing.T) {
	var down atomic.Bool
	a := clusterAgentsOn(t, 1, func(s storage.Store) storage.Store { return unreachable{s, &down} })[0]
	a.mustPut(t, pipeline("orders", "local", "orders"))
	down.Store(true)
	eventually(t, "the agent cut off from the store stops the pipeline", func() bool { return a.engine.count(a.engine.removes, "orders") == 1 })
	down.Store(false)
	eventually(t, "the agent runs the pipeline again once the store answers", func() bool { return a.engine.count(a.engine.applies, "orders") == 2 })
	got, err := a.client.GetPipeline(t.Context(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != spec.StateRunning {
		t.Errorf("after the store came back: state %s, want RUNNING", got.Status.State)
	}
}

// TestClusterSinkStatus: GET of a Kafka sink through an agent that does
// not run it reports the status of the agent that does.
func TestClusterSinkStatus(t *testing.T) {
	agents := clusterAgents(t, 2)
	agents[0].mustPut(t)
	if _, err := agents[0].client.PutKafkaSink(t.Context(), kafkaSink("s", "local")); err != nil {
		t.Fatal(err)
	}
	// Only the first agent's engine runs it, as the sink's members group
	// would have it.
	eventually(t, "the second agent applied the sink", func() bool { return agents[1].engine.count(agents[1].engine.sinkApplies, "s") == 1 })
	if err := agents[1].engine.RemoveSink(t.Context(), "s"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second agent reports the first agent's status of the sink", func() bool {
		got, err := agents[1].client.GetKafkaSink(t.Context(), "s")
		if err != nil {
			t.Fatal(err)
		}
		return got.Status.State == spec.StateRunning
	})
}

// triggeredCluster starts two agents whose engines report every table
// IDLE, and stores through the first the triggered pipeline "nightly",
// which it returns once the second runs it too.
func triggeredCluster(t *testing.T) ([]*agent, *spec.Pipeline) {
	t.Helper()
	agents := clusterAgents(t, 2)
	for _, ag := range agents {
		ag.engine.mu.Lock()
		ag.engine.state = spec.StateIdle
		ag.engine.mu.Unlock()
	}
	p := pipeline("nightly", "local", "nightly")
	off := false
	p.Continuous = &off
	p.Tables[0].ConnectorOptions.KafkaOptions.EndingOffset = spec.EndingOffsetLatest
	agents[0].mustPut(t, p)
	eventually(t, "the second agent runs the pipeline", func() bool { return agents[1].engine.count(agents[1].engine.applies, "nightly") == 1 })
	return agents, p
}

// TestClusterRuns: a run of a triggered pipeline started through one
// agent starts on every agent of the cluster; the next is refused while an
// agent's share of the last one still runs.
func TestClusterRuns(t *testing.T) {
	agents, _ := triggeredCluster(t)
	if status, _, body := raw(t, http.MethodPost, agents[0].url+"/v1/pipelines/nightly/runs", testToken, ""); status != http.StatusAccepted {
		t.Fatalf("POST runs: %d %s", status, body)
	}
	for _, ag := range agents {
		eventually(t, "every agent started its share of the run", func() bool { return ag.engine.count(ag.engine.runs, "nightly") == 1 })
	}
	agents[1].engine.mu.Lock()
	agents[1].engine.state = spec.StateRunning
	agents[1].engine.mu.Unlock()
	eventually(t, "the first agent reports the second agent's share running", func() bool {
		got, err := agents[0].client.GetPipeline(t.Context(), "nightly")
		return err == nil && got.Status.State == spec.StateRunning
	})
	status, _, body := raw(t, http.MethodPost, agents[0].url+"/v1/pipelines/nightly/runs", testToken, "")
	if status != http.StatusConflict || !strings.Contains(body, "on every agent") {
		t.Errorf("POST runs while another agent's share runs: %d %s, want 409", status, body)
	}
	time.Sleep(100 * time.Millisecond) // ten rounds of Follow
	if n := agents[1].engine.count(agents[1].engine.runs, "nightly"); n != 1 {
		t.Errorf("the busy agent was asked for %d runs, want 1", n)
	}
}

// TestClusterRunsRetriedAndRenumbered: an agent whose share of a run
// cannot start yet (busy) starts it once it can; a pipeline deleted and
// made again gets its runs on every agent, its numbering going on.
func TestClusterRunsRetriedAndRenumbered(t *testing.T) {
	agents, p := triggeredCluster(t)
	a, b := agents[0], agents[1]
	run := func() {
		t.Helper()
		if status, _, body := raw(t, http.MethodPost, a.url+"/v1/pipelines/nightly/runs", testToken, ""); status != http.StatusAccepted {
			t.Fatalf("POST runs: %d %s", status, body)
		}
	}
	b.engine.mu.Lock()
	b.engine.runErr = &spec.RunRefusedError{Reason: "a table is still RUNNING"}
	b.engine.mu.Unlock()
	run()
	time.Sleep(50 * time.Millisecond)
	b.engine.mu.Lock()
	b.engine.runErr = nil
	b.engine.mu.Unlock()
	eventually(t, "the busy agent starts its share once it can", func() bool { return b.engine.count(b.engine.runs, "nightly") == 1 })

	if err := a.client.DeletePipeline(t.Context(), "nightly"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.client.PutPipeline(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	// The second agent may have seen the deletion and the new pipeline in
	// one round (nothing changed for it) or one after the other.
	eventually(t, "the second agent runs the pipeline made again", func() bool {
		_, ok := b.engine.Status("nightly")
		return ok
	})
	run()
	eventually(t, "the second agent starts its share of the new pipeline's run", func() bool { return b.engine.count(b.engine.runs, "nightly") == 2 })
}
