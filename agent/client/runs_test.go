package client_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// StartRun POSTs to the pipeline's runs, without a body or a condition,
// and decodes the pipeline it answers; it is not retried after an answer,
// even a 5xx, since the agent may have started the run.
func TestStartRun(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	status := atomic.Int32{}
	status.Store(http.StatusAccepted)
	c := fakeAgent(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method != http.MethodPost || r.URL.EscapedPath() != "/v1/pipelines/a%2Fb/runs" ||
			r.ContentLength > 0 || r.Header.Get("If-None-Match") != "" {
			t.Errorf("got %s %s (length %d, If-None-Match %q), want a bare POST to the pipeline's runs", r.Method, r.URL, r.ContentLength,
				r.Header.Get("If-None-Match"))
		}
		if st := int(status.Load()); st != http.StatusAccepted {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(st)
			_, _ = w.Write([]byte(`{"title":"x","status":503}`))
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"spec":{"name":"a/b"},"status":{"state":"STARTING"}}`))
	}, client.RetryMax(2))
	got, err := c.StartRun(t.Context(), "a/b")
	if err != nil || got.Spec.Name != "a/b" || got.Status.State != spec.StateStarting {
		t.Fatalf("StartRun = %+v, %v; want the pipeline, STARTING", got, err)
	}
	status.Store(http.StatusServiceUnavailable)
	calls.Store(0)
	if _, err := c.StartRun(t.Context(), "a/b"); err == nil || calls.Load() != 1 {
		t.Fatalf("StartRun answered 503: %v after %d requests, want the error after one", err, calls.Load())
	}
}
