package client_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

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
	c := fakeAgent(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method == http.MethodPut && r.Header.Get("If-None-Match") == "*" {
			conditional.Add(1)
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(int(status.Load()))
		_, _ = w.Write([]byte(`{"title":"x","status":1,"detail":"pipeline \"p\" already exists"}`))
	}, client.RetryMax(1))
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

// A create whose answer does not come in time is not retried: the agent
// may be storing the object, and a retry would meet it and report
// ErrExists for the caller's own object.
func TestCreateNotRetriedAfterTimeout(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) > 1 {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusPreconditionFailed)
			_, _ = w.Write([]byte(`{"title":"x","status":412,"detail":"pipeline \"p\" already exists"}`))
			return
		}
		<-release // the agent is still applying the pipeline
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	c, err := client.New(srv.URL, "", client.RetryMax(1), client.Timeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.PutPipeline(client.CreateOnly(t.Context()), &spec.Pipeline{Name: "p"})
	if err == nil || errors.Is(err, client.ErrExists) || calls.Load() != 1 {
		t.Fatalf("create after a timeout: %v after %d requests, want the timeout after one", err, calls.Load())
	}
}

// A create that could not connect (the agent is starting) is retried.
func TestCreateRetriedAfterRefusedConnection(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // refused until the agent listens
	var calls atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"name":"c","bootstrap_servers":["a:1"]}`))
	})}
	go func() {
		time.Sleep(300 * time.Millisecond)
		if ln, err := net.Listen("tcp", addr); err == nil {
			_ = srv.Serve(ln)
		}
	}()
	t.Cleanup(func() { _ = srv.Close() })
	c, err := client.New("http://"+addr, "", client.RetryMax(4))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutConnection(client.CreateOnly(t.Context()), &spec.Connection{Name: "c"}); err != nil || calls.Load() != 1 {
		t.Fatalf("create while the agent starts: %v after %d requests, want success after one", err, calls.Load())
	}
}
