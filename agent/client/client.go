// Package client is the agent API client, and the only way the Terraform
// provider talks to an agent, or to the agents of a cluster (any of which
// answers every request). Requests are retried with backoff on connection
// errors and 5xx responses (go-retryablehttp), except dry runs; 4xx
// responses are returned at once as an [*APIError]. Given several agents,
// each attempt fails over from one that cannot be reached, or answers 502,
// 503 or 504, to the next (see [NewCluster]).
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// ErrNotFound is returned (wrapped in an [*APIError]) when the named object
// does not exist on the agent. Test with errors.Is.
var ErrNotFound = errors.New("not found")

// APIError is a non-2xx answer of the agent. Problems holds the validation
// problems with their attribute paths, when the agent reported any.
type APIError struct {
	Method, URL string
	Status      int
	Title       string
	Detail      string
	Problems    []spec.FieldError
}

// Error summarises the answer, one problem per line.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d %s", e.Method, e.URL, e.Status, e.Title)
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	for _, p := range e.Problems {
		b.WriteString("\n  " + p.Error())
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrNotFound) true for a 404.
func (e *APIError) Unwrap() error {
	if e.Status == http.StatusNotFound {
		return ErrNotFound
	}
	return nil
}

// createAttempt is the context key that marks, for the retry policy and
// the failover to another agent, a request the agents must not get twice:
// a create (one with If-None-Match: *) or the start of a run.
type createAttempt struct{}

// neverSent reports whether err, the error of an attempt without an
// answer, shows that the request never reached the agent: the connection
// could not be made. A timeout or a connection reset may come after the
// agent got the request.
func neverSent(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// DefaultTimeout bounds each attempt of a request, from sending it to
// reading the whole answer, unless [Timeout] sets another.
const DefaultTimeout = 60 * time.Second

// maxErrorBody is how much of an answer that is not a problem (a proxy's
// HTML error page, say) an [*APIError] quotes.
const maxErrorBody = 512

// Client talks to one agent, or to the agents of a cluster. It is safe for
// concurrent use.
type Client struct {
	endpoints []*url.URL
	token     string
	http      *retryablehttp.Client
	timeout   time.Duration
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the underlying *http.Client, e.g. for a custom CA,
// overriding a cleanhttp pooled client.
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) { c.http.HTTPClient = h }
}

// Timeout bounds each attempt of a request on each endpoint, from sending
// it to reading the whole answer, overriding DefaultTimeout; the context's
// deadline, when sooner, still applies. An attempt that times out is
// retried like a connection error.
func Timeout(d time.Duration) Option {
	return func(c *Client) { c.timeout = d }
}

// RetryMax sets how often a request is retried after a connection error or
// a 5xx answer, overriding the default of 4 (about 15 seconds in all).
func RetryMax(n int) Option {
	return func(c *Client) { c.http.RetryMax = n }
}

// New returns a client for the agent at endpoint ("http://127.0.0.1:8470"),
// or a load balancer in front of agents, that sends token as a bearer
// token; an empty token sends none.
func New(endpoint, token string, opts ...Option) (*Client, error) {
	return NewCluster([]string{endpoint}, token, opts...)
}

// NewCluster returns a client for the agents at endpoints, the agents of a
// cluster (see [ParseEndpoints] for what an endpoint may be), with the
// options, token and TLS settings of [New] for every one of them.
//
// Each attempt of a request goes to the endpoint that answered last (the
// first one at first), and on to the next in the list's order, round the
// list, while an endpoint cannot be reached (connection refused, DNS
// failure, no connection within the timeout) or answers 502, 503 or 504.
// A request that may reach the agents twice (GET, PUT, DELETE, a dry run)
// also goes on after a timeout or a connection lost mid-request, since
// sending it again changes nothing; a create ([CreateOnly]) or the start
// of a run ([Client.StartRun]) goes on only when it never reached the
// endpoint, as the agent may have acted on it. When every endpoint failed,
// the attempt is retried as for a single agent.
func NewCluster(endpoints []string, token string, opts ...Option) (*Client, error) {
	urls, problems := ParseEndpoints(endpoints)
	if len(problems) > 0 {
		errs := make([]error, len(problems))
		for i, p := range problems {
			errs[i] = p
		}
		return nil, errors.Join(errs...)
	}
	rc := retryablehttp.NewClient()
	rc.Logger = nil
	// Hand the last answer back after the retries, so a 5xx's problem body
	// reaches the user instead of a bare "giving up after N attempts".
	rc.ErrorHandler = retryablehttp.PassthroughErrorHandler
	rc.RetryMax = 4
	rc.RetryWaitMin = 500 * time.Millisecond
	rc.RetryWaitMax = 4 * time.Second
	rc.CheckRetry = func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if ctx.Value(tryOnce{}) != nil {
			return false, nil
		}
		if ctx.Value(createAttempt{}) != nil && (resp != nil || !neverSent(err)) {
			// The agent may have acted on the create (see CreateOnly).
			return false, nil
		}
		return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
	}
	c := &Client{endpoints: urls, token: token, http: rc, timeout: DefaultTimeout}
	for _, o := range opts {
		o(c)
	}
	if c.timeout <= 0 {
		return nil, fmt.Errorf("client timeout %v must be positive", c.timeout)
	}
	// A copy, so that a caller's *http.Client keeps its own transport and
	// timeout; the failover bounds each endpoint's attempt instead.
	var hc http.Client
	if c.http.HTTPClient != nil {
		hc = *c.http.HTTPClient
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	hc.Transport = &failover{endpoints: urls, next: next, timeout: c.timeout}
	hc.Timeout = 0
	c.http.HTTPClient = &hc
	return c, nil
}

// PutConnection creates or replaces a connection and returns it as stored.
func (c *Client) PutConnection(ctx context.Context, conn *spec.Connection) (*spec.Connection, error) {
	var out spec.Connection
	return &out, c.do(ctx, http.MethodPut, "/v1/connections/"+url.PathEscape(conn.Name), conn, &out)
}

// GetConnection returns the named connection; errors.Is(err, ErrNotFound)
// when it does not exist.
func (c *Client) GetConnection(ctx context.Context, name string) (*spec.Connection, error) {
	var out spec.Connection
	return &out, c.do(ctx, http.MethodGet, "/v1/connections/"+url.PathEscape(name), nil, &out)
}

// DeleteConnection deletes the named connection. Deleting one that does not
// exist is not an error.
func (c *Client) DeleteConnection(ctx context.Context, name string) error {
	return ignoreNotFound(c.do(ctx, http.MethodDelete, "/v1/connections/"+url.PathEscape(name), nil, nil))
}

// PutPipeline creates or replaces a pipeline. An unchanged spec restarts
// nothing; a changed table restarts only that table.
func (c *Client) PutPipeline(ctx context.Context, p *spec.Pipeline) (*spec.PipelineResponse, error) {
	var out spec.PipelineResponse
	return &out, c.do(ctx, http.MethodPut, "/v1/pipelines/"+url.PathEscape(p.Name), p, &out)
}

// DryRunPipeline asks the agent whether PutPipeline would accept p, without
// changing anything (POST /v1/pipelines/{name}/dry-run): the agent runs
// every check of a PUT (validation, the connection, table claims, changes
// the existing tables cannot take) and answers the pipeline as it would
// store it, normalized, or the same [*APIError] a PUT would get. An agent
// that predates dry runs answers 404 or 405. It is tried once, without
// retries, so that a caller learns at once that the agent cannot be reached.
func (c *Client) DryRunPipeline(ctx context.Context, p *spec.Pipeline) (*spec.Pipeline, error) {
	return dryRun(ctx, c, "/v1/pipelines/"+url.PathEscape(p.Name), p)
}

// dryRun posts obj to the dry run of the object at path, tried once, and
// returns the agent's answer: obj as the agent would store it.
func dryRun[T any](ctx context.Context, c *Client, path string, obj *T) (*T, error) {
	var out T
	ctx = context.WithValue(ctx, tryOnce{}, true)
	return &out, c.do(ctx, http.MethodPost, path+"/dry-run", obj, &out)
}

// StartRun starts the next run of the named triggered pipeline (POST
// /v1/pipelines/{name}/runs) and returns the pipeline with its status
// just after. The agent answers 409 (an [*APIError]) while a run is in
// progress, after a table failed, or for a continuous pipeline, and
// [ErrNotFound] for a pipeline it does not have. Like a create, it is
// retried only when the connection to the agent could not be made, since a
// second start after the first one's answer was lost would find the run in
// progress.
func (c *Client) StartRun(ctx context.Context, name string) (*spec.PipelineResponse, error) {
	var out spec.PipelineResponse
	ctx = context.WithValue(ctx, createAttempt{}, true)
	return &out, c.do(ctx, http.MethodPost, "/v1/pipelines/"+url.PathEscape(name)+"/runs", nil, &out)
}

// tryOnce is the context key that turns the retries of one request off.
type tryOnce struct{}

// GetPipeline returns the named pipeline's spec and status;
// errors.Is(err, ErrNotFound) when it does not exist.
func (c *Client) GetPipeline(ctx context.Context, name string) (*spec.PipelineResponse, error) {
	var out spec.PipelineResponse
	return &out, c.do(ctx, http.MethodGet, "/v1/pipelines/"+url.PathEscape(name), nil, &out)
}

// DeletePipeline stops the named pipeline and forgets it; its tables, logs
// and offsets stay. Deleting one that does not exist is not an error.
func (c *Client) DeletePipeline(ctx context.Context, name string) error {
	return ignoreNotFound(c.do(ctx, http.MethodDelete, "/v1/pipelines/"+url.PathEscape(name), nil, nil))
}

// PutFanoutSchema creates or replaces a fanout schema, whose pipeline must
// exist, and returns it as stored with its status.
func (c *Client) PutFanoutSchema(ctx context.Context, f *spec.FanoutSchema) (*spec.FanoutSchemaResponse, error) {
	var out spec.FanoutSchemaResponse
	return &out, c.do(ctx, http.MethodPut, fanoutPath(f.Name), f, &out)
}

// DryRunFanoutSchema asks the agent whether PutFanoutSchema would accept f,
// without changing anything (POST /v1/fanout-schemas/{name}/dry-run), as
// [Client.DryRunPipeline] does for a pipeline: the answer is f as the agent
// would store it, or the [*APIError] a PUT would get. It is tried once.
func (c *Client) DryRunFanoutSchema(ctx context.Context, f *spec.FanoutSchema) (*spec.FanoutSchema, error) {
	return dryRun(ctx, c, fanoutPath(f.Name), f)
}

// GetFanoutSchema returns the named fanout schema's spec and status (the
// tables it created so far); errors.Is(err, ErrNotFound) when it does not
// exist.
func (c *Client) GetFanoutSchema(ctx context.Context, name string) (*spec.FanoutSchemaResponse, error) {
	var out spec.FanoutSchemaResponse
	return &out, c.do(ctx, http.MethodGet, fanoutPath(name), nil, &out)
}

// DeleteFanoutSchema stops the named fanout schema and forgets it; its
// tables stay. Deleting one that does not exist is not an error.
func (c *Client) DeleteFanoutSchema(ctx context.Context, name string) error {
	return ignoreNotFound(c.do(ctx, http.MethodDelete, fanoutPath(name), nil, nil))
}

func fanoutPath(name string) string { return "/v1/fanout-schemas/" + url.PathEscape(name) }

func ignoreNotFound(err error) error {
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode request for %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	u := c.endpoints[0].String() + path
	create := isCreate(ctx, method)
	if create {
		ctx = context.WithValue(ctx, createAttempt{}, true)
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return fmt.Errorf("build request %s %s: %w", method, u, err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if create {
		req.Header.Set("If-None-Match", "*")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	var netErr net.Error
	if err != nil && ctx.Err() == nil && errors.As(err, &netErr) && netErr.Timeout() {
		return fmt.Errorf("%s %s: no answer within %v (the client's timeout); is the agent overloaded or the network slow? %w", method, c.where(path), c.timeout, err)
	}
	if err != nil {
		if len(c.endpoints) > 1 {
			return fmt.Errorf("%s %s: are the agents running and the endpoints right? %w", method, c.where(path), err)
		}
		return fmt.Errorf("%s %s: is the agent running and the endpoint right? %w", method, c.where(path), err)
	}
	defer resp.Body.Close()
	if resp.Request != nil && resp.Request.URL != nil {
		u = resp.Request.URL.String() // the endpoint that answered
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("read answer of %s %s: %w", method, u, err)
	}
	if resp.StatusCode >= 300 {
		apiErr := &APIError{Method: method, URL: u, Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode)}
		var p spec.Problem
		if json.Unmarshal(data, &p) == nil && p.Title != "" {
			apiErr.Title, apiErr.Detail, apiErr.Problems = p.Title, p.Detail, p.Errors
		} else if len(data) > 0 {
			apiErr.Detail = "the answer is not the agent's (a proxy in the way?): " + bodyStart(resp.Header, data)
		}
		return apiErr
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode answer of %s %s (%s): %w", method, u, bodyStart(resp.Header, data), err)
	}
	return nil
}

// where names the request of path for an error: its URL, or the URLs of
// every endpoint.
func (c *Client) where(path string) string {
	if len(c.endpoints) == 1 {
		return c.endpoints[0].String() + path
	}
	urls := make([]string, len(c.endpoints))
	for i, e := range c.endpoints {
		urls[i] = e.String()
	}
	return path + " on " + strings.Join(urls, ", ")
}

// bodyStart describes an answer that is not what the agent sends: its
// content type and up to maxErrorBody bytes of it, as a quoted string.
func bodyStart(h http.Header, data []byte) string {
	var b strings.Builder
	if ct := h.Get("Content-Type"); ct != "" {
		b.WriteString(ct + " ")
	}
	if len(data) > maxErrorBody {
		fmt.Fprintf(&b, "%q... (%d bytes)", data[:maxErrorBody], len(data))
	} else {
		fmt.Fprintf(&b, "%q", data)
	}
	return b.String()
}
