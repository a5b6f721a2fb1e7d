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

// A PUT under CreateOnly carries If-None-Match: *; it is not retried after
// an answer, even a 5xx (the agent acted on it), and a 412 is ErrExists.
// Other requests under CreateOnly are plain.
func TestCreateIsConditional(t *testing.T) {
	t.Parallel()
	var calls, conditional atomic.Int32
	status := atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method == http.MethodPut && r.Header.Get("If-None-Match") == "*" {
			conditional.Add(1)
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(int(status.Load()))
		_, _ = w.Write([]byte(`{"title":"x","status":1,"detail":"pipeline \"p\" already exists"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "", client.RetryMax(1))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	create := client.CreateOnly(ctx)
	for _, st := range []int{http.StatusPreconditionFailed, http.StatusInternalServerError} {
		status.Store(int32(st))
		calls.Store(0)
		conditional.Store(0)
		for _, create := range []func() error{
			func() error { _, err := c.PutConnection(create, &spec.Connection{Name: "c"}); return err },
			func() error { _, err := c.PutPipeline(create, &spec.Pipeline{Name: "p"}); return err },
			func() error { _, err := c.PutFanoutSchema(create, &spec.FanoutSchema{Name: "f"}); return err },
		} {
			err := create()
			if got := errors.Is(err, client.ErrExists); got != (st == http.StatusPreconditionFailed) {
				t.Fatalf("status %d: errors.Is(%v, ErrExists) = %v", st, err, got)
			}
		}
		if calls.Load() != 3 || conditional.Load() != 3 {
			t.Fatalf("status %d: %d requests (%d with If-None-Match: *), want 3 conditional ones, none retried", st, calls.Load(), conditional.Load())
		}
	}
	// A plain PUT, or a GET under CreateOnly, carries no condition and is
	// retried; ErrExists is only a 412's.
	status.Store(http.StatusServiceUnavailable)
	calls.Store(0)
	if _, err := c.PutPipeline(ctx, &spec.Pipeline{Name: "p"}); errors.Is(err, client.ErrExists) || conditional.Load() != 3 {
		t.Fatalf("PutPipeline: %v, %d conditional requests; want a plain PUT", err, conditional.Load())
	}
	if _, err := c.GetPipeline(create, "p"); err == nil || conditional.Load() != 3 {
		t.Fatalf("GetPipeline under CreateOnly: %v, %d conditional requests; want a plain GET", err, conditional.Load())
	}
	if calls.Load() != 4 {
		t.Fatalf("%d requests, want 4: a PUT and a GET, each retried once", calls.Load())
	}
}
