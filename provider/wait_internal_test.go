package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// agentReporting serves GET /v1/pipelines/p answering the given states in
// turn, then the last one forever.
func agentReporting(t *testing.T, states ...spec.PipelineStatus) *client.Client {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i := min(int(calls.Add(1))-1, len(states)-1)
		_ = json.NewEncoder(w).Encode(spec.PipelineResponse{Spec: spec.Pipeline{Name: "p"}, Status: states[i]})
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestWaitForPipeline(t *testing.T) {
	t.Parallel()
	starting := spec.PipelineStatus{State: spec.StateStarting}
	failed := spec.PipelineStatus{State: spec.StateFailed, Tables: []spec.TableStatus{
		{DestinationTable: "a", State: spec.StateRunning},
		{DestinationTable: "b", State: spec.StateFailed, LastError: "topic x: not authorized"},
	}}
	stuck := spec.PipelineStatus{State: spec.StateStarting, Tables: []spec.TableStatus{
		{DestinationTable: "a", State: spec.StateStarting, LastError: `topic "x" does not exist`},
	}}
	tests := []struct {
		name    string
		states  []spec.PipelineStatus
		timeout time.Duration
		want    string // "" for success, else a part of the error
	}{
		{"running", []spec.PipelineStatus{starting, {State: spec.StateRunning}}, 10 * time.Second, ""},
		{"idle", []spec.PipelineStatus{{State: spec.StateIdle}}, 10 * time.Second, ""},
		{"failed", []spec.PipelineStatus{starting, failed}, 10 * time.Second,
			"FAILED:\n  table b (FAILED): topic x: not authorized"},
		{"timeout", []spec.PipelineStatus{starting}, 1200 * time.Millisecond, `pipeline "p" is still STARTING after the timeout`},
		{"stuck on an error", []spec.PipelineStatus{stuck}, 10 * time.Second,
			"cannot start; the agent keeps retrying, but fix the cause and apply again:\n  table a (STARTING): topic \"x\" does not exist"},
		{"error that clears", []spec.PipelineStatus{stuck, starting, starting, {State: spec.StateRunning}}, 10 * time.Second, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := agentReporting(t, tc.states...)
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			err := waitForPipeline(ctx, api, "p", &spec.PipelineResponse{Status: starting}, 1200*time.Millisecond, startedStates)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestRunPipeline checks the run a trigger change starts: a run in
// progress ends first, then the run starts (POST .../runs), and the
// update waits until the pipeline is IDLE again; a run that fails is an
// error with the table's error.
func TestRunPipeline(t *testing.T) {
	t.Parallel()
	running := spec.PipelineStatus{State: spec.StateRunning}
	idle := spec.PipelineStatus{State: spec.StateIdle}
	failed := spec.PipelineStatus{State: spec.StateFailed, Tables: []spec.TableStatus{
		{DestinationTable: "a", State: spec.StateFailed, LastError: "topic x: not authorized"},
	}}
	tests := []struct {
		name string
		// before are the states GET answers before the run starts, after
		// those after it.
		before, after []spec.PipelineStatus
		want          string
	}{
		{"idle", []spec.PipelineStatus{idle}, []spec.PipelineStatus{running, running, idle}, ""},
		{"a run in progress ends first", []spec.PipelineStatus{running, running, idle}, []spec.PipelineStatus{running, idle}, ""},
		{"the run fails", []spec.PipelineStatus{idle}, []spec.PipelineStatus{running, failed}, "FAILED:\n  table a (FAILED): topic x: not authorized"},
		{"failed before", []spec.PipelineStatus{failed}, nil, "FAILED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			states, runs := tc.before, 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				st := states[0]
				switch {
				case r.Method == http.MethodPost && r.URL.Path == "/v1/pipelines/p/runs":
					if st.State != spec.StateIdle {
						t.Errorf("POST runs while the pipeline is %s", st.State)
					}
					runs++
					states = tc.after
					w.WriteHeader(http.StatusAccepted)
					st = spec.PipelineStatus{State: spec.StateStarting}
				case len(states) > 1:
					states = states[1:]
				}
				_ = json.NewEncoder(w).Encode(spec.PipelineResponse{Spec: spec.Pipeline{Name: "p"}, Status: st})
			}))
			t.Cleanup(srv.Close)
			api, err := client.New(srv.URL, "")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err = runPipeline(ctx, api, "p", &spec.PipelineResponse{Status: tc.before[0]}, time.Minute)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if want := len(tc.after) > 0; (runs == 1) != want {
				t.Fatalf("%d runs started, want %v", runs, want)
			}
		})
	}
}
