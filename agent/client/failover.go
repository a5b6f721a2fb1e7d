package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// EndpointError is a problem of the endpoints given to [NewCluster] or
// [ParseEndpoints]: Index is the position of the endpoint in the list, or
// -1 when the problem is the list's (it is empty).
type EndpointError struct {
	Index    int
	Endpoint string
	Reason   string
}

// Error names the endpoint and what is wrong with it.
func (e *EndpointError) Error() string {
	if e.Index < 0 {
		return e.Reason
	}
	return fmt.Sprintf("agent endpoint %q %s", e.Endpoint, e.Reason)
}

// ParseEndpoints parses the URLs of the agents a [Client] talks to: each an
// http:// or https:// URL with a host, and optionally a path under which
// the API is served (behind a proxy), but no query or fragment, since the
// API's paths are appended to it; a trailing slash is dropped. The list must
// hold at least one endpoint, each once. Every problem is reported, in the
// order of the list.
func ParseEndpoints(endpoints []string) ([]*url.URL, []*EndpointError) {
	if len(endpoints) == 0 {
		return nil, []*EndpointError{{Index: -1, Reason: "no agent endpoint given: name at least one agent URL"}}
	}
	var problems []*EndpointError
	urls := make([]*url.URL, len(endpoints))
	first := make(map[string]int, len(endpoints))
	for i, e := range endpoints {
		u, err := url.Parse(strings.TrimRight(e, "/"))
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			problems = append(problems, &EndpointError{Index: i, Endpoint: e, Reason: "is not an http:// or https:// URL"})
			continue
		case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
			problems = append(problems, &EndpointError{Index: i, Endpoint: e,
				Reason: "has a query or a fragment; give the agent's base URL, to which the API's paths are appended"})
			continue
		}
		if j, seen := first[u.String()]; seen {
			problems = append(problems, &EndpointError{Index: i, Endpoint: e,
				Reason: "is listed twice (also at index " + strconv.Itoa(j) + "); list each agent once"})
			continue
		}
		first[u.String()] = i
		urls[i] = u
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return urls, nil
}

// failover is the transport under a Client's retries. Each attempt of a
// request goes first to the endpoint that last answered, and on to the
// next ones in the order given (round the list) while the one tried cannot
// be reached or answers 502, 503 or 504, as a load balancer does when the
// agent behind it is down. A request the agent must not get twice (a
// create, the start of a run) goes on only when it never reached the
// endpoint: a 502 to 504 or a timeout may come after an agent acted on it.
// Every endpoint tried gets the timeout of its own, from sending the
// request to reading the whole answer.
type failover struct {
	endpoints []*url.URL
	next      http.RoundTripper
	timeout   time.Duration
	// current is the index of the endpoint that answered last.
	current atomic.Int64
}

// RoundTrip implements http.RoundTripper.
func (f *failover) RoundTrip(req *http.Request) (*http.Response, error) {
	// A request that cannot be sent again (its body cannot be read again,
	// or a redirect led away from the first endpoint) goes once, as it is.
	resend := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	if _, ok := f.target(req.URL, 0); !ok || !resend || len(f.endpoints) == 1 {
		return f.send(req, req.URL, req.Body)
	}
	once := req.Context().Value(createAttempt{}) != nil
	start := int(f.current.Load())
	var before []string // what the endpoints tried before answered
	for i := 0; ; i++ {
		at := (start + i) % len(f.endpoints)
		u, ok := f.target(req.URL, at)
		if !ok {
			return nil, fmt.Errorf("the request's URL %s has no place under endpoint %s", req.URL, f.endpoints[at])
		}
		body := req.Body
		if i > 0 && req.GetBody != nil {
			var err error
			if body, err = req.GetBody(); err != nil {
				return nil, fmt.Errorf("reading the request body again for %s: %w", f.endpoints[at], err)
			}
		}
		resp, err := f.send(req, u, body)
		if err == nil && !unavailable(resp.StatusCode) {
			f.current.Store(int64(at))
			return resp, nil
		}
		last := i == len(f.endpoints)-1
		if last || req.Context().Err() != nil || (once && (err == nil || !neverSent(err))) {
			if err != nil && len(before) > 0 {
				err = fmt.Errorf("%s: %w (tried before: %s)", f.endpoints[at], err, strings.Join(before, "; "))
			}
			return resp, err
		}
		if err != nil {
			before = append(before, f.endpoints[at].String()+": "+err.Error())
			continue
		}
		before = append(before, f.endpoints[at].String()+" answered "+resp.Status)
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
	}
}

// CloseIdleConnections closes the idle connections of the transport
// underneath, as http.Client.CloseIdleConnections expects.
func (f *failover) CloseIdleConnections() {
	if c, ok := f.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// target returns u, a URL under the first endpoint, under endpoint at
// instead; ok is false when u is not under the first endpoint.
func (f *failover) target(u *url.URL, at int) (*url.URL, bool) {
	first := f.endpoints[0]
	rest, ok := strings.CutPrefix(u.EscapedPath(), first.EscapedPath())
	if !ok || u.Scheme != first.Scheme || u.Host != first.Host || (rest != "" && rest[0] != '/') {
		return nil, false
	}
	if at == 0 {
		return u, true
	}
	t, err := url.Parse(f.endpoints[at].String() + rest)
	if err != nil {
		return nil, false
	}
	t.RawQuery = u.RawQuery
	return t, true
}

// send sends req to u with body, bounded by the timeout, which lasts until
// the answer's body is closed.
func (f *failover) send(req *http.Request, u *url.URL, body io.ReadCloser) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), f.timeout)
	r := req.Clone(ctx)
	r.Body = body
	if u != req.URL {
		r.URL, r.Host = u, ""
	}
	resp, err := f.next.RoundTrip(r)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// unavailable reports whether status is what a proxy or load balancer
// answers when the agent behind it cannot take the request (502, 503,
// 504), or what an agent answers when it cannot read a cluster's state.
func unavailable(status int) bool {
	return status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// cancelOnClose is the body of an answer whose request's context ends when
// the body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

// Close closes the body and ends the request's context.
func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
