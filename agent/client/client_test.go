package client_test

import (
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// A dry run is sent once, as POST /v1/pipelines/{name}/dry-run, even to an
// agent that answers 503; the other requests are retried.
func TestDryRunIsNotRetried(t *testing.T) {
	t.Parallel()
	var calls, dryRuns atomic.Int32
	c := fakeAgent(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method == http.MethodPost && r.URL.Path == "/v1/pipelines/p/dry-run" && r.URL.RawQuery == "" {
			dryRuns.Add(1)
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"title":"Service Unavailable","status":503,"detail":"busy"}`))
	}, client.RetryMax(1))
	p := &spec.Pipeline{Name: "p"}

	_, err := c.DryRunPipeline(t.Context(), p)
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable || ae.Detail != "busy" {
		t.Fatalf("DryRunPipeline error = %v, want the agent's 503", err)
	}
	if calls.Load() != 1 || dryRuns.Load() != 1 {
		t.Fatalf("%d requests (%d dry runs), want one dry run", calls.Load(), dryRuns.Load())
	}

	if _, err := c.PutPipeline(t.Context(), p); !errors.As(err, &ae) {
		t.Fatalf("PutPipeline error = %v, want an *APIError", err)
	}
	if n := calls.Load() - 1; n != 2 {
		t.Fatalf("PutPipeline sent %d requests, want 2 (one retry)", n)
	}
}

// The fanout schema methods use /v1/fanout-schemas/{name}, escape the
// name, send a dry run once and treat a 404 on DELETE as done.
func TestFanoutSchemaRequests(t *testing.T) {
	t.Parallel()
	var got []string
	var mu sync.Mutex
	c := fakeAgent(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.EscapedPath())
		mu.Unlock()
		switch r.Method {
		case http.MethodDelete:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"title":"Not Found","status":404}`))
		case http.MethodPost:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"title":"Service Unavailable","status":503}`))
		default:
			_, _ = w.Write([]byte(`{"spec":{"name":"a b","pipeline_name":"p"},"status":{"state":"RUNNING","tables":[{"destination_table":"orders"}]}}`))
		}
	}, client.RetryMax(1))
	ctx := t.Context()
	f := &spec.FanoutSchema{Name: "a b", Pipeline: "p"}
	resp, err := c.PutFanoutSchema(ctx, f)
	if err != nil || resp.Spec.Pipeline != "p" || resp.Status.State != spec.StateRunning || resp.Status.Tables[0].DestinationTable != "orders" {
		t.Fatalf("PutFanoutSchema = %+v, %v", resp, err)
	}
	if resp, err := c.GetFanoutSchema(ctx, "a b"); err != nil || resp.Spec.Name != "a b" {
		t.Fatalf("GetFanoutSchema = %+v, %v", resp, err)
	}
	if _, err := c.DryRunFanoutSchema(ctx, f); err == nil {
		t.Fatal("DryRunFanoutSchema of a 503 succeeded")
	}
	if err := c.DeleteFanoutSchema(ctx, "a b"); err != nil {
		t.Fatalf("DeleteFanoutSchema of a missing fanout schema: %v", err)
	}
	want := []string{
		"PUT /v1/fanout-schemas/a%20b",
		"GET /v1/fanout-schemas/a%20b",
		"POST /v1/fanout-schemas/a%20b/dry-run",
		"DELETE /v1/fanout-schemas/a%20b",
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) {
		t.Fatalf("requests %q, want %q", got, want)
	}
}
