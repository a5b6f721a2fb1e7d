package server_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/server"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

const testToken = "s3cret-token-of-32-bytes-or-more"

// fakeEngine records what the server asks of it and reports every applied
// pipeline and fanout schema as RUNNING.
type fakeEngine struct {
	mu       sync.Mutex
	running  map[string]*spec.Pipeline
	conns    map[string]spec.Connection // last connection each pipeline was applied with
	applies  map[string]int
	removes  map[string]int
	checks   map[string]int
	applyErr error // returned by every Apply while set, and by Check if it is a refusal
	runs     map[string]int
	runErr   error // returned by every StartRun while set

	fanouts       map[string]*spec.FanoutSchema
	fanoutApplies map[string]int
	fanoutRemoves map[string]int
	fanoutChecks  map[string]int
	fanoutErr     error // returned by every ApplyFanout while set, and by CheckFanout if it is a refusal

	sinks       map[string]*spec.KafkaSink
	sinkConns   map[string]spec.Connection // last connection each sink was applied with
	sinkApplies map[string]int
	sinkRemoves map[string]int
	sinkErr     error // returned by every ApplySink while set, and by CheckSink if it is a refusal

	// state, when set, is the state Status reports; else RUNNING.
	state string
	// partitions, when set, are the partitions Status reports of every
	// table; else partition 0 of "events".
	partitions []spec.PartitionStatus

	// checking, when set, is called with the object's name at the start
	// of every Check and CheckFanout, without the engine's lock held.
	checking func(name string)
}

var _ server.Engine = (*fakeEngine)(nil)

func newFakeEngine() *fakeEngine {
	return &fakeEngine{
		running: map[string]*spec.Pipeline{},
		conns:   map[string]spec.Connection{},
		applies: map[string]int{},
		removes: map[string]int{},
		checks:  map[string]int{},
		runs:    map[string]int{},

		fanouts:       map[string]*spec.FanoutSchema{},
		fanoutApplies: map[string]int{},
		fanoutRemoves: map[string]int{},
		fanoutChecks:  map[string]int{},

		sinks:       map[string]*spec.KafkaSink{},
		sinkConns:   map[string]spec.Connection{},
		sinkApplies: map[string]int{},
		sinkRemoves: map[string]int{},
	}
}

// ApplySink runs k, unless sinkErr is set.
func (e *fakeEngine) ApplySink(_ context.Context, k *spec.KafkaSink, conn *spec.Connection, _ map[string]spec.SchemaRegistry) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sinkApplies[k.Name]++
	if e.sinkErr != nil {
		return e.sinkErr
	}
	cp := *k
	e.sinks[k.Name] = &cp
	e.sinkConns[k.Name] = *conn
	return nil
}

func (e *fakeEngine) CheckSink(*spec.KafkaSink, *spec.Connection, map[string]spec.SchemaRegistry) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var refused spec.Errors
	if errors.As(e.sinkErr, &refused) {
		return refused
	}
	return nil
}

func (e *fakeEngine) RemoveSink(_ context.Context, name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sinkRemoves[name]++
	delete(e.sinks, name)
	return nil
}

func (e *fakeEngine) SinkStatus(name string) (spec.KafkaSinkStatus, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sinks[name] == nil {
		return spec.KafkaSinkStatus{}, false
	}
	return spec.KafkaSinkStatus{State: spec.StateRunning, Records: 3, Positions: map[string]int64{"in/0": 3}}, true
}

func (e *fakeEngine) setSinkErr(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sinkErr = err
}

// ApplyFanout runs f, refusing it as the Manager does when its pipeline
// does not run.
func (e *fakeEngine) ApplyFanout(_ context.Context, f *spec.FanoutSchema) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fanoutApplies[f.Name]++
	if e.fanoutErr != nil {
		return e.fanoutErr
	}
	if e.running[f.Pipeline] == nil {
		return spec.Errors{{Path: "pipeline_name", Detail: "pipeline " + f.Pipeline + " does not run"}}
	}
	cp := *f
	e.fanouts[f.Name] = &cp
	return nil
}

func (e *fakeEngine) CheckFanout(f *spec.FanoutSchema) error {
	if e.checking != nil {
		e.checking(f.Name)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fanoutChecks[f.Name]++
	var refused spec.Errors
	if errors.As(e.fanoutErr, &refused) {
		return refused
	}
	return nil
}

func (e *fakeEngine) RemoveFanout(_ context.Context, name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fanoutRemoves[name]++
	delete(e.fanouts, name)
	return nil
}

func (e *fakeEngine) FanoutStatus(name string) (spec.FanoutStatus, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fanouts[name] == nil {
		return spec.FanoutStatus{}, false
	}
	return spec.FanoutStatus{
		State:      spec.StateRunning,
		Tables:     []spec.TableStatus{{DestinationTable: "orders", State: spec.StateRunning, Version: 1, Rows: 10}},
		Partitions: []spec.PartitionStatus{{Topic: "events", Partition: 0, NextOffset: 10, Lag: 3, LagBytes: 300}},
	}, true
}

func (e *fakeEngine) setFanoutErr(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fanoutErr = err
}

func (e *fakeEngine) Apply(_ context.Context, p *spec.Pipeline, conn *spec.Connection, _ map[string]spec.SchemaRegistry) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.applies[p.Name]++
	if e.applyErr != nil {
		return e.applyErr
	}
	cp := *p
	e.running[p.Name] = &cp
	e.conns[p.Name] = *conn
	return nil
}

func (e *fakeEngine) Check(p *spec.Pipeline, _ *spec.Connection, _ map[string]spec.SchemaRegistry) error {
	if e.checking != nil {
		e.checking(p.Name)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.checks[p.Name]++
	var refused spec.Errors
	if errors.As(e.applyErr, &refused) {
		return refused
	}
	return nil
}

func (e *fakeEngine) Remove(_ context.Context, name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.removes[name]++
	delete(e.running, name)
	return nil
}

func (e *fakeEngine) Status(name string) (spec.PipelineStatus, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.running[name]
	if !ok {
		return spec.PipelineStatus{}, false
	}
	state := cmp.Or(e.state, spec.StateRunning)
	st := spec.PipelineStatus{State: state}
	parts := e.partitions
	if parts == nil {
		parts = []spec.PartitionStatus{{Topic: "events", Partition: 0, NextOffset: 50, Lag: 7, LagBytes: 700}}
	}
	for i, t := range p.Tables {
		st.Tables = append(st.Tables, spec.TableStatus{
			DestinationTable: t.DestinationTable,
			Location:         "/warehouse/" + p.DestinationCatalog + "/" + p.DestinationSchema + "/" + t.DestinationTable,
			State:            state,
			Version:          int64(i + 3),
			Rows:             100,
			Files:            2,
			CorruptRecords:   1,
			Partitions:       slices.Clone(parts),
			Lag:              7,
			LagBytes:         700,
			DataLossOffsets:  40,
			ErrorRecords:     3,
			FilteredRecords:  5,
		})
	}
	return st, true
}

// StartRun counts the runs of a pipeline the engine runs, or returns
// runErr while set.
func (e *fakeEngine) StartRun(_ context.Context, name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.runErr != nil {
		return e.runErr
	}
	e.runs[name]++
	return nil
}

func (e *fakeEngine) Close(context.Context) error { return nil }

func (e *fakeEngine) count(m map[string]int, name string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return m[name]
}

// forget drops a pipeline as if its start had failed or the engine
// restarted, and with it its fanout schemas.
func (e *fakeEngine) forget(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.running, name)
	for n, f := range e.fanouts {
		if f.Pipeline == name {
			delete(e.fanouts, n)
		}
	}
}

func (e *fakeEngine) setApplyErr(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.applyErr = err
}

// agent is a server under test with a client that holds the right token.
type agent struct {
	srv    *server.Server
	url    string
	client *client.Client
	engine *fakeEngine
	memory *memory.Budget
	dir    string
}

// newAgent starts a server on a store in dir (a new temp dir when "").
func newAgent(t *testing.T, dir string, configure ...func(*server.Config)) *agent {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := newAgentOn(t, st, configure...)
	a.dir = dir
	return a
}

// newAgentOn starts a server on store st.
func newAgentOn(t *testing.T, st *store.Store, configure ...func(*server.Config)) *agent {
	t.Helper()
	eng := newFakeEngine()
	budget := memory.New(64 << 20)
	cfg := server.Config{
		Store: st, Engine: eng, Tokens: []string{testToken}, Memory: budget,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, f := range configure {
		f(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &agent{srv: srv, url: hs.URL, client: newClient(t, hs.URL, testToken), engine: eng, memory: budget}
}

func newClient(t *testing.T, url, token string) *client.Client {
	t.Helper()
	c, err := client.New(url, token, client.RetryMax(0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func connection(name string) *spec.Connection {
	return &spec.Connection{Name: name, BootstrapServers: []string{"127.0.0.1:19092"}}
}

func pipeline(name, conn, table string) *spec.Pipeline {
	return &spec.Pipeline{
		Name: name, Connection: conn, DestinationCatalog: "main", DestinationSchema: "raw",
		Tables: []spec.Table{{
			DestinationTable: table,
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{"events"}}},
		}},
	}
}

// mustPut creates connection "local" and the pipelines through the client.
func (a *agent) mustPut(t *testing.T, pipes ...*spec.Pipeline) {
	t.Helper()
	ctx := t.Context()
	if _, err := a.client.PutConnection(ctx, connection("local")); err != nil {
		t.Fatalf("PutConnection: %v", err)
	}
	for _, p := range pipes {
		if _, err := a.client.PutPipeline(ctx, p); err != nil {
			t.Fatalf("PutPipeline %s: %v", p.Name, err)
		}
	}
}

// apiError asserts err is an *client.APIError with status and returns it.
func apiError(t *testing.T, err error, status int) *client.APIError {
	t.Helper()
	var ae *client.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want an *client.APIError with status %d", err, status)
	}
	if ae.Status != status {
		t.Fatalf("status = %d, want %d; error: %v", ae.Status, status, ae)
	}
	return ae
}

// raw sends a request with an optional bearer token, and a JSON
// Content-Type when it has a body, and returns the status, headers and
// body of the answer.
func raw(t *testing.T, method, url, token, body string) (int, http.Header, string) {
	t.Helper()
	header := http.Header{}
	if body != "" {
		header.Set("Content-Type", "application/json")
	}
	return rawWith(t, method, url, token, body, header)
}

// rawWith is raw with the request headers header.
func rawWith(t *testing.T, method, url, token, body string, header http.Header) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(data)
}

// problem decodes a problem+json body, failing when it is not one.
func problem(t *testing.T, header http.Header, body string) spec.Problem {
	t.Helper()
	if ct := header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json; body %s", ct, body)
	}
	var p spec.Problem
	if err := json.Unmarshal([]byte(body), &p); err != nil || p.Title == "" || p.Status == 0 {
		t.Fatalf("body is not a problem (%v): %s", err, body)
	}
	return p
}
