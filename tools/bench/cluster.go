package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The cluster rows: agents started with one --cluster name on one machine,
// sharing the partitions of a continuous pipeline through Kafka's group
// protocol and its table on the object store.
const (
	// clusterFlush is the pipeline's flush_interval: a continuous pipeline
	// commits what it read once per interval, so the last records wait
	// for at most that long after they are read.
	clusterFlush = "500ms"
	// clusterSyncEvery is the agents' --cluster-sync-interval: how soon
	// the agents other than the one the pipeline is applied through start
	// it, and how often they exchange their status.
	clusterSyncEvery = 500 * time.Millisecond
	// clusterPoll is how often the harness asks every agent for the
	// pipeline's status (each request reads the shared state first).
	clusterPoll = 100 * time.Millisecond
	// clusterStall is how long the table may go without a new version
	// before the run is given up.
	clusterStall = 2 * time.Minute
)

// clusterRowName names the line of a cluster of n agents.
func clusterRowName(n int) string {
	if n == 1 {
		return "cluster of 1 agent: JSON with schema, S3"
	}
	return fmt.Sprintf("cluster of %d agents: JSON with schema, S3", n)
}

// clusterIngest starts a cluster of r.cluster fresh agents writing under
// r.warehouse, creates the connection and a continuous pipeline with one
// table per topic of w through the first, and measures until the table's
// log holds every record of w, as the status of any agent reports it (GET
// through any agent answers for the whole cluster; the harness asks each
// and takes the newest table version, so no agent's round of status
// exchange delays the end). The peak RSS is the sum of the agents'.
func clusterIngest(ctx context.Context, agentBin, bootstrap string, w load, r agentRun) (result, error) {
	dir, err := os.MkdirTemp("", "tributary-bench-cluster")
	if err != nil {
		return result{}, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	// Every agent of a cluster needs the same secrets key.
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	keyFile := filepath.Join(dir, "secrets.key")
	if err := os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(key)), 0o600); err != nil {
		return result{}, err
	}
	name := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	var agents []*benchAgent
	defer func() {
		for _, a := range agents {
			a.stop()
		}
	}()
	for i := range r.cluster {
		a, err := spawnAgent(agentBin, r.warehouse, "--cluster", name, "--agent-name", fmt.Sprintf("agent%d", i),
			"--secrets-key-file", keyFile, "--cluster-sync-interval", clusterSyncEvery.String())
		if err != nil {
			return result{}, fmt.Errorf("agent%d: %w", i, err)
		}
		agents = append(agents, a)
	}
	if err := agents[0].putConnection(ctx, bootstrap, nil); err != nil {
		return result{}, err
	}
	start := time.Now()
	if _, err := agents[0].c.PutPipeline(ctx, benchPipeline(true, clusterFlush, tablesOf(w, r.value))); err != nil {
		return result{}, err
	}
	var tables []spec.TableStatus
	for seen, progress := int64(-1), time.Now(); ; time.Sleep(clusterPoll) {
		if tables, err = clusterTables(ctx, agents); err != nil {
			return result{}, err
		}
		var rows, version int64
		for _, t := range tables {
			if t.State == spec.StateFailed {
				return result{}, fmt.Errorf("table %s failed: %s", t.DestinationTable, t.LastError)
			}
			rows += t.Rows
			version += t.Version
		}
		if rows >= w.records {
			break
		}
		if version > seen {
			seen, progress = version, time.Now()
		} else if time.Since(progress) > clusterStall {
			return result{}, fmt.Errorf("no commit for %v with %d of %d rows: tables %+v", clusterStall, rows, w.records, tables)
		}
	}
	res := measured(r.name, w, time.Since(start).Seconds())
	if err := tally(&res, w, tables); err != nil {
		return result{}, err
	}
	pids := make([]int, len(agents))
	for i, a := range agents {
		pids[i] = a.cmd.Process.Pid
	}
	res.addUsage(pids...)
	// Which agent reads which partition is in the status the agents
	// exchange, a round or two after a partition moved, and the new owner
	// lists it once it resumed it from the log.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(clusterPoll) {
		if tables, err = clusterTables(ctx, agents); err != nil {
			return result{}, err
		}
		res.Readers = map[string]int{}
		listed := 0
		for _, t := range tables {
			for _, p := range t.Partitions {
				res.Readers[p.Agent]++
			}
			listed += len(t.Partitions)
		}
		if listed == len(w.topics)*w.partitions || time.Now().After(deadline) {
			break
		}
	}
	log.Printf("%s: partitions read at the end, by agent: %v", r.name, res.Readers)
	return res, nil
}

// clusterTables asks every agent for the pipeline's status and returns,
// for each table, the status of the newest version any of them reports,
// each partition named by its agent: the agent that answered for a
// partition it does not name (an agent marks its own partitions only when
// it has peers to merge with).
func clusterTables(ctx context.Context, agents []*benchAgent) ([]spec.TableStatus, error) {
	var newest []spec.TableStatus
	for i, a := range agents {
		resp, err := a.c.GetPipeline(ctx, "bench")
		if err != nil {
			return nil, fmt.Errorf("agent%d: %w", i, err)
		}
		for _, t := range resp.Status.Tables {
			for k := range t.Partitions {
				t.Partitions[k].Agent = cmp.Or(t.Partitions[k].Agent, fmt.Sprintf("agent%d", i))
			}
			j := slices.IndexFunc(newest, func(n spec.TableStatus) bool { return n.DestinationTable == t.DestinationTable })
			switch {
			case j < 0:
				newest = append(newest, t)
			case t.Version > newest[j].Version:
				newest[j] = t
			}
		}
	}
	slices.SortFunc(newest, func(a, b spec.TableStatus) int { return strings.Compare(a.DestinationTable, b.DestinationTable) })
	return newest, nil
}
