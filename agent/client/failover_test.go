package client_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// member is one agent of a fake cluster: it counts the requests it gets,
// keeps the last one's path and body, and answers status (200 with a
// pipeline by default).
type member struct {
	URL    string
	calls  atomic.Int32
	status atomic.Int32
	mu     sync.Mutex
	path   string
	body   string
}

// newMember starts a member for the length of t.
func newMember(t *testing.T) *member {
	t.Helper()
	m := &member{}
	m.status.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.calls.Add(1)
		b, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.path, m.body = r.URL.EscapedPath(), string(b)
		m.mu.Unlock()
		if st := int(m.status.Load()); st != http.StatusOK {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(st)
			_, _ = w.Write([]byte(`{"title":"x","status":1,"detail":"from ` + r.Host + `"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"spec":{"name":"p"},"status":{"state":"RUNNING"}}`))
	}))
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

// down returns the URL of a port nothing listens on: connections to it are
// refused.
func down(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

// calls returns the members' request counts since the last call, and
// resets them.
func calls(ms ...*member) []int32 {
	out := make([]int32, len(ms))
	for i, m := range ms {
		out[i] = m.calls.Swap(0)
	}
	return out
}

func cluster(t *testing.T, endpoints []string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.NewCluster(endpoints, "", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// An endpoint that refuses connections, or that has no address, is passed
// over for the next, for any request (one that never reached an agent may
// go to another, even a create); the one that answered is tried first
// from then on.
func TestFailoverUnreachable(t *testing.T) {
	t.Parallel()
	b := newMember(t)
	c := cluster(t, []string{down(t), "http://tributary-no-such-agent.invalid:8470", b.URL}, client.RetryMax(0))
	ctx := t.Context()
	if _, err := c.GetPipeline(ctx, "p"); err != nil {
		t.Fatalf("GET with the first two endpoints unreachable: %v", err)
	}
	if _, err := c.PutPipeline(client.CreateOnly(ctx), &spec.Pipeline{Name: "p"}); err != nil {
		t.Fatalf("create with the first two endpoints unreachable: %v", err)
	}
	if _, err := c.StartRun(ctx, "p"); err != nil {
		t.Fatalf("start of a run with the first two endpoints unreachable: %v", err)
	}
	if got := b.calls.Load(); got != 3 {
		t.Fatalf("the reachable agent got %d requests, want 3", got)
	}
}

// A 502, 503 or 504 sends a request that may reach the agents twice (GET,
// PUT, DELETE, a dry run) on to the next endpoint, in the list's order,
// with its body; the endpoint that answered is tried first next time
// (sticky), until it fails in turn, and the next in order after it is
// tried then, round the list.
func TestFailoverOrderAndSticky(t *testing.T) {
	t.Parallel()
	a, b, c3 := newMember(t), newMember(t), newMember(t)
	all := []*member{a, b, c3}
	c := cluster(t, []string{a.URL, b.URL, c3.URL}, client.RetryMax(0))
	ctx := t.Context()

	if _, err := c.GetPipeline(ctx, "p"); err != nil || !slices.Equal(calls(all...), []int32{1, 0, 0}) {
		t.Fatalf("all up: %v; the first endpoint answers", err)
	}
	a.status.Store(http.StatusBadGateway)
	b.status.Store(http.StatusServiceUnavailable)
	p := &spec.Pipeline{Name: "p", Connection: "c1"}
	if _, err := c.PutPipeline(ctx, p); err != nil {
		t.Fatalf("PUT with the first two endpoints at 502 and 503: %v", err)
	}
	if got := calls(all...); !slices.Equal(got, []int32{1, 1, 1}) {
		t.Fatalf("requests per endpoint %v, want one each, in order", got)
	}
	c3.mu.Lock()
	body := c3.body
	c3.mu.Unlock()
	if !strings.Contains(body, `"connection_name":"c1"`) {
		t.Fatalf("the third endpoint got the body %q, want the pipeline", body)
	}
	// Sticky: the third answered, so it is tried first.
	for _, call := range []func() error{
		func() error { _, err := c.GetPipeline(ctx, "p"); return err },
		func() error { return c.DeletePipeline(ctx, "p") },
		func() error { _, err := c.DryRunPipeline(ctx, p); return err },
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	if got := calls(all...); !slices.Equal(got, []int32{0, 0, 3}) {
		t.Fatalf("after the third endpoint answered, requests per endpoint %v, want every one on the third", got)
	}
	// The third fails now: the list goes on round from it, to the first.
	c3.status.Store(http.StatusGatewayTimeout)
	a.status.Store(http.StatusOK)
	if _, err := c.DryRunPipeline(ctx, p); err != nil {
		t.Fatalf("dry run with the third endpoint at 504: %v", err)
	}
	if got := calls(all...); !slices.Equal(got, []int32{1, 0, 1}) {
		t.Fatalf("requests per endpoint %v, want the third then the first", got)
	}
	if _, err := c.GetPipeline(ctx, "p"); err != nil || !slices.Equal(calls(all...), []int32{1, 0, 0}) {
		t.Fatalf("after the first endpoint answered again: %v; it is tried first", err)
	}
}

// A request the agents must not get twice (a create, the start of a run)
// that an endpoint answered, even with a 503, or that timed out after it
// was sent, is not sent to another endpoint: the answer (or the timeout)
// is the caller's.
func TestFailoverNotAfterSent(t *testing.T) {
	t.Parallel()
	a, b := newMember(t), newMember(t)
	a.status.Store(http.StatusServiceUnavailable)
	c := cluster(t, []string{a.URL, b.URL}, client.RetryMax(2))
	ctx := t.Context()
	_, err := c.PutConnection(client.CreateOnly(ctx), &spec.Connection{Name: "c1"})
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable || !strings.HasPrefix(ae.URL, a.URL) {
		t.Fatalf("create answered 503: %v, want the first endpoint's 503", err)
	}
	if _, err := c.StartRun(ctx, "p"); !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable {
		t.Fatalf("start of a run answered 503: %v, want the 503", err)
	}
	if got := calls(a, b); !slices.Equal(got, []int32{2, 0}) {
		t.Fatalf("requests per endpoint %v, want one create and one start, on the first endpoint only", got)
	}

	release := make(chan struct{})
	var slowCalls atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		slowCalls.Add(1)
		// The server notices the client gone only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	c = cluster(t, []string{slow.URL, b.URL}, client.RetryMax(0), client.Timeout(200*time.Millisecond))
	if _, err := c.PutPipeline(client.CreateOnly(ctx), &spec.Pipeline{Name: "p"}); err == nil || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Fatalf("create that timed out: %v, want the timeout", err)
	}
	if slowCalls.Load() != 1 || b.calls.Load() != 0 {
		t.Fatalf("create that timed out went to %d slow and %d other endpoints, want the slow one only", slowCalls.Load(), b.calls.Load())
	}
	// A GET may be sent twice: after the timeout it goes on.
	if _, err := c.GetPipeline(ctx, "p"); err != nil || b.calls.Load() != 1 {
		t.Fatalf("GET after a timeout: %v, %d requests on the next endpoint; want its answer", err, b.calls.Load())
	}
}

// When every endpoint fails, the error names each one, and the attempt is
// retried as a whole (here once); a dry run is tried once on each.
func TestFailoverAllDown(t *testing.T) {
	t.Parallel()
	a, b := newMember(t), newMember(t)
	a.status.Store(http.StatusServiceUnavailable)
	b.status.Store(http.StatusBadGateway)
	gone := down(t)
	c := cluster(t, []string{a.URL, b.URL, gone}, client.RetryMax(1))
	ctx := t.Context()
	_, err := c.GetPipeline(ctx, "p")
	if err == nil || !strings.Contains(err.Error(), "connection refused") ||
		!strings.Contains(err.Error(), a.URL+" answered 503") || !strings.Contains(err.Error(), b.URL+" answered 502") {
		t.Fatalf("GET with every endpoint down: %v, want each endpoint's failure", err)
	}
	if got := calls(a, b); !slices.Equal(got, []int32{2, 2}) {
		t.Fatalf("requests per endpoint %v, want two rounds", got)
	}
	if _, err := c.DryRunPipeline(ctx, &spec.Pipeline{Name: "p"}); err == nil {
		t.Fatal("dry run with every endpoint down succeeded")
	}
	if got := calls(a, b); !slices.Equal(got, []int32{1, 1}) {
		t.Fatalf("dry run: requests per endpoint %v, want one each", got)
	}
	// The last endpoint to answer is the one an APIError names.
	c = cluster(t, []string{gone, a.URL}, client.RetryMax(0))
	var ae *client.APIError
	if _, err := c.GetPipeline(ctx, "p"); !errors.As(err, &ae) || !strings.HasPrefix(ae.URL, a.URL+"/v1/") {
		t.Fatalf("GET answered 503 by the second endpoint: %v, want its URL in the error", err)
	}
}

// An endpoint with a path (an agent behind a proxy) gets the API's paths
// under it, escaped as for one agent.
func TestFailoverPathPrefix(t *testing.T) {
	t.Parallel()
	a, b := newMember(t), newMember(t)
	a.status.Store(http.StatusServiceUnavailable)
	c := cluster(t, []string{a.URL + "/one/", b.URL + "/two"}, client.RetryMax(0))
	if _, err := c.GetPipeline(t.Context(), "a/b"); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	b.mu.Lock()
	defer a.mu.Unlock()
	defer b.mu.Unlock()
	if a.path != "/one/v1/pipelines/a%2Fb" || b.path != "/two/v1/pipelines/a%2Fb" {
		t.Fatalf("paths %q and %q, want each under its endpoint's", a.path, b.path)
	}
}

// NewCluster and ParseEndpoints refuse an empty list, URLs that are not
// http:// or https://, or have a query, and an endpoint listed twice;
// every problem is reported with its index.
func TestParseEndpoints(t *testing.T) {
	t.Parallel()
	if _, err := client.NewCluster(nil, ""); err == nil || !strings.Contains(err.Error(), "no agent endpoint") {
		t.Errorf("NewCluster of no endpoint: %v", err)
	}
	_, problems := client.ParseEndpoints([]string{"http://a:1", "ftp://b", "http://c?x=1", "http://a:1/", "", "https://d/api"})
	var got []string
	for _, p := range problems {
		got = append(got, p.Error())
		if p.Index < 0 {
			t.Errorf("problem %v has no index", p)
		}
	}
	want := []string{
		`agent endpoint "ftp://b" is not an http:// or https:// URL`,
		`agent endpoint "http://c?x=1" has a query or a fragment`,
		`agent endpoint "http://a:1/" is listed twice (also at index 0)`,
		`agent endpoint "" is not an http:// or https:// URL`,
	}
	if len(got) != len(want) {
		t.Fatalf("problems %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q, want %q...", i, got[i], want[i])
		}
	}
	if problems[0].Index != 1 || problems[2].Index != 3 {
		t.Errorf("indexes %d and %d, want 1 and 3", problems[0].Index, problems[2].Index)
	}
	if urls, problems := client.ParseEndpoints([]string{"http://a:1/", "https://d/api"}); len(problems) > 0 || urls[0].String() != "http://a:1" {
		t.Errorf("ParseEndpoints of good endpoints: %v, %v", urls, problems)
	}
}
