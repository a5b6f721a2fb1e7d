package server

import (
	"cmp"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// In a cluster, each agent runs a share of every pipeline's partitions, so
// its engine knows a share of the status. Every agent publishes what its
// engine reports in a status object of the shared state, at every round of
// Follow, and reads the others'; GET answers with its own status merged
// with theirs (at most one round old). Status objects need no path from
// one agent to another, so they work behind a load balancer and across
// networks where only the object store is reachable from every agent.

// agentReport is the status object an agent publishes: what its engine
// reports of each object it runs.
type agentReport struct {
	Agent         string                          `json:"agent"`
	Time          time.Time                       `json:"time"`
	Pipelines     map[string]spec.PipelineStatus  `json:"pipelines"`
	FanoutSchemas map[string]spec.FanoutStatus    `json:"fanout_schemas"`
	KafkaSinks    map[string]spec.KafkaSinkStatus `json:"kafka_sinks"`
}

// peerReports holds the other agents' latest reports. It is safe for
// concurrent use.
type peerReports struct {
	mu      sync.Mutex
	reports []agentReport
}

func (p *peerReports) set(reports []agentReport) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reports = reports
}

func (p *peerReports) get() []agentReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reports
}

// staleAfter is how old another agent's report may be and still count: an
// agent that stopped publishing (killed, cut off) has given up its
// partitions by then, or will have when Kafka's session timeout expires.
func staleAfter(every time.Duration) time.Duration { return max(30*time.Second, 5*every) }

// exchangeReports publishes this agent's report and reads the others',
// keeping those fresher than staleAfter(every). A failure is logged: the
// status is then a round older, nothing else.
func (s *Server) exchangeReports(every time.Duration) {
	own := s.ownReport()
	if data, err := json.Marshal(own); err != nil {
		s.log.Warn("encoding this agent's status failed", "err", err)
	} else if err := s.store.PublishStatus(data); err != nil {
		s.log.Warn("publishing this agent's status failed", "err", err)
	}
	all, err := s.store.Statuses(time.Now().Add(-staleAfter(every)))
	if err != nil {
		s.log.Warn("reading the other agents' status failed", "err", err)
		return
	}
	var fresh []agentReport
	for _, st := range all {
		var r agentReport
		if json.Unmarshal(st.Data, &r) != nil {
			continue
		}
		fresh = append(fresh, r)
	}
	s.peers.set(fresh)
}

// ownReport is what this agent's engine reports of every stored object,
// its partitions marked with the agent's name.
func (s *Server) ownReport() agentReport {
	r := agentReport{Agent: s.agentName, Time: time.Now().UTC(),
		Pipelines: map[string]spec.PipelineStatus{}, FanoutSchemas: map[string]spec.FanoutStatus{}, KafkaSinks: map[string]spec.KafkaSinkStatus{}}
	pipes, _ := s.store.Pipelines.List()
	// Errors are scrubbed of secrets before they leave the agent.
	for _, p := range pipes {
		if st, ok := s.engine.Status(p.Name); ok {
			st.Tables = s.redactTables(st.Tables)
			r.Pipelines[p.Name] = s.markAgent(st)
		}
	}
	fanouts, _ := s.store.FanoutSchemas.List()
	for _, f := range fanouts {
		if st, ok := s.engine.FanoutStatus(f.Name); ok {
			st = s.markFanout(st)
			st.LastError = s.secrets.String(st.LastError)
			st.Tables = s.redactTables(st.Tables)
			r.FanoutSchemas[f.Name] = st
		}
	}
	sinks, _ := s.store.KafkaSinks.List()
	for _, k := range sinks {
		if st, ok := s.engine.SinkStatus(k.Name); ok {
			st.LastError = s.secrets.String(st.LastError)
			r.KafkaSinks[k.Name] = st
		}
	}
	return r
}

// markAgent returns st with its partitions marked as this agent's.
func (s *Server) markAgent(st spec.PipelineStatus) spec.PipelineStatus {
	st.Tables = slices.Clone(st.Tables)
	for i := range st.Tables {
		st.Tables[i].Partitions = s.markPartitions(st.Tables[i].Partitions)
	}
	return st
}

// markFanout returns st with its partitions marked as this agent's.
func (s *Server) markFanout(st spec.FanoutStatus) spec.FanoutStatus {
	st.Tables = slices.Clone(st.Tables)
	for i := range st.Tables {
		st.Tables[i].Partitions = s.markPartitions(st.Tables[i].Partitions)
	}
	st.Partitions = s.markPartitions(st.Partitions)
	return st
}

// markPartitions marks ps as read by this agent, in a cluster.
func (s *Server) markPartitions(ps []spec.PartitionStatus) []spec.PartitionStatus {
	if s.agentName == "" {
		return ps
	}
	out := slices.Clone(ps)
	for i := range out {
		out[i].Agent = s.agentName
	}
	return out
}

// clusterPipelineStatus merges own, this agent's status of the named
// pipeline, with the other agents' reports.
func (s *Server) clusterPipelineStatus(name string, own spec.PipelineStatus) spec.PipelineStatus {
	own = s.markAgent(own)
	for _, r := range s.peers.get() {
		if st, ok := r.Pipelines[name]; ok {
			own.Tables = mergeTables(own.Tables, st.Tables)
			own.State = mergeState(own.State, st.State)
		}
	}
	return own
}

// clusterFanoutStatus is clusterPipelineStatus for a fanout schema.
func (s *Server) clusterFanoutStatus(name string, own spec.FanoutStatus) spec.FanoutStatus {
	own = s.markFanout(own)
	for _, r := range s.peers.get() {
		st, ok := r.FanoutSchemas[name]
		if !ok {
			continue
		}
		own.Tables = mergeTables(own.Tables, st.Tables)
		own.Partitions = mergePartitions(own.Partitions, st.Partitions)
		if mergeState(own.State, st.State) != own.State {
			own.State, own.LastError = st.State, st.LastError
		}
	}
	return own
}

// peerSinkStatus returns the status of the named sink that another agent
// of the cluster reports; ok is false when none does.
func (s *Server) peerSinkStatus(name string) (spec.KafkaSinkStatus, bool) {
	for _, r := range s.peers.get() {
		if st, ok := r.KafkaSinks[name]; ok {
			return st, true
		}
	}
	return spec.KafkaSinkStatus{}, false
}

// stateRank orders states for a merge: a failure anywhere is the
// object's, then running (or starting) anywhere; IDLE only when every
// agent's share of a triggered run is over.
func stateRank(state string) int {
	switch state {
	case spec.StateFailed:
		return 2
	case spec.StateRunning, spec.StateStarting:
		return 1
	}
	return 0
}

// mergeState returns the state of an object two agents report a and b of.
func mergeState(a, b string) string {
	if stateRank(b) > stateRank(a) {
		return b
	}
	return a
}

// mergeTables merges b, another agent's status of tables, into a: the
// partitions of both; the table's totals (version, rows, files, counters,
// columns) from the one that saw the newer version; the worse state, with
// its error.
func mergeTables(a, b []spec.TableStatus) []spec.TableStatus {
	out := slices.Clone(a)
	for _, tb := range b {
		i := slices.IndexFunc(out, func(t spec.TableStatus) bool { return t.DestinationTable == tb.DestinationTable })
		if i < 0 {
			out = append(out, tb)
			continue
		}
		ta := out[i]
		merged := ta
		if tb.Version > ta.Version {
			merged = tb
		}
		merged.Partitions = mergePartitions(ta.Partitions, tb.Partitions)
		merged.DataLoss = slices.Clone(ta.DataLoss)
		for _, g := range tb.DataLoss {
			if !slices.Contains(merged.DataLoss, g) {
				merged.DataLoss = append(merged.DataLoss, g)
			}
		}
		merged.State, merged.LastError = ta.State, ta.LastError
		if mergeState(ta.State, tb.State) != ta.State {
			merged.State, merged.LastError = tb.State, tb.LastError
		}
		// One agent maintains a table and keeps it registered: the
		// report of the first agent that has one (after a rebalance, the
		// previous owner's may remain until it restarts the table).
		if merged.Maintenance == nil {
			merged.Maintenance = cmp.Or(ta.Maintenance, tb.Maintenance)
		}
		if merged.Catalog == nil {
			merged.Catalog = cmp.Or(ta.Catalog, tb.Catalog)
		}
		merged.Lag, merged.LagBytes = 0, 0
		for _, p := range merged.Partitions {
			merged.Lag += p.Lag
			merged.LagBytes += p.LagBytes
		}
		out[i] = merged
	}
	return out
}

// mergePartitions returns the partitions of a and b, sorted; of a
// partition both report (it moved from one agent to the other since one
// of them reported), the one further on.
func mergePartitions(a, b []spec.PartitionStatus) []spec.PartitionStatus {
	out := slices.Clone(a)
	for _, pb := range b {
		i := slices.IndexFunc(out, func(p spec.PartitionStatus) bool { return p.Topic == pb.Topic && p.Partition == pb.Partition })
		switch {
		case i < 0:
			out = append(out, pb)
		case pb.NextOffset > out[i].NextOffset:
			out[i] = pb
		}
	}
	slices.SortFunc(out, func(x, y spec.PartitionStatus) int {
		return cmp.Or(cmp.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition))
	})
	return out
}
