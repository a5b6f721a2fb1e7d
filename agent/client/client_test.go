package client_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method == http.MethodPost && r.URL.Path == "/v1/pipelines/p/dry-run" && r.URL.RawQuery == "" {
			dryRuns.Add(1)
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"title":"Service Unavailable","status":503,"detail":"busy"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "", client.RetryMax(1))
	if err != nil {
		t.Fatal(err)
	}
	p := &spec.Pipeline{Name: "p"}

	_, err = c.DryRunPipeline(t.Context(), p)
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
