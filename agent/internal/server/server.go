// Package server is the agent's HTTP API: JSON over HTTP with a bearer
// token, the wire format of [spec] and [spec.Problem] errors. It keeps the
// desired state in a [store.Store] and hands pipelines and their fanout
// schemas to an [Engine] to run.
//
// Routes (every one but /healthz and /openapi.json needs the token):
//
//	PUT/GET/DELETE /v1/connections/{name}       one connection
//	GET            /v1/connections              every connection, by name
//	PUT/GET/DELETE /v1/pipelines/{name}         one pipeline, with its status
//	POST           /v1/pipelines/{name}/dry-run every check of a PUT; changes nothing
//	POST           /v1/pipelines/{name}/runs    start the next run of an IDLE triggered pipeline
//	GET            /v1/pipelines                every pipeline, by name
//	PUT/GET/DELETE /v1/fanout-schemas/{name}    one fanout schema, with its status
//	POST           /v1/fanout-schemas/{name}/dry-run every check of a PUT; changes nothing
//	GET            /v1/fanout-schemas           every fanout schema, by name
//	PUT/GET/DELETE /v1/kafka-sinks/{name}       one Kafka sink, with its status
//	POST           /v1/kafka-sinks/{name}/dry-run every check of a PUT; changes nothing
//	GET            /v1/kafka-sinks              every Kafka sink, by name
//	GET            /healthz                     liveness, no token
//	GET            /openapi.json                this API as an OpenAPI 3 document, no token
//	GET            /metrics                     Prometheus text format
//
// The OpenAPI document needs no token: it describes the routes and the
// attributes of the specs, as the agent's source and the provider's
// documentation do, and holds nothing of the agent's state.
//
// Request bodies are JSON, sent with "Content-Type: application/json"
// (415 otherwise), whose keys are exactly the attributes' names, once
// each. A PUT with "If-None-Match: *" creates only: 412 when the object
// exists.
//
// No route takes query parameters; a request with any is refused (400), so
// that no option a later agent may add is silently ignored. Every error,
// unknown routes and wrong methods included, is an application/problem+json
// [spec.Problem].
package server

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/redact"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Engine runs pipelines; *pipeline.Manager is the real one. Implementations
// must be safe for concurrent use: the server calls Apply and Remove one at a
// time, but Status concurrently with them and with itself.
type Engine interface {
	// Apply starts pipeline p reading through conn, or updates it in place
	// when it runs already; regs holds, by connection name, the schema
	// registries of the other connections p's transformers name. An error wrapping [spec.Errors] means the engine
	// refuses this spec as it stands (an incompatible schema change, say)
	// and keeps running what it had: the server answers 422 with those
	// problems and keeps the previously stored spec. Any other error means
	// the pipeline could not start now; it stays stored and is retried on the
	// next PUT or restart.
	Apply(ctx context.Context, p *spec.Pipeline, conn *spec.Connection, regs map[string]spec.SchemaRegistry) error
	// Check returns the [spec.Errors] Apply would refuse p with, or nil,
	// and changes nothing: the engine's part of a dry run.
	Check(p *spec.Pipeline, conn *spec.Connection, regs map[string]spec.SchemaRegistry) error
	// Remove stops the named pipeline after a final flush and commit, and
	// forgets it. Removing a pipeline the engine does not run is not an
	// error.
	Remove(ctx context.Context, name string) error
	// Status reports the named pipeline; ok is false when the engine does
	// not run it (never applied, or its Apply failed).
	Status(name string) (status spec.PipelineStatus, ok bool)
	// StartRun starts the next run of the named triggered pipeline, which
	// the engine runs, once its last run is over. A
	// [*spec.RunRefusedError] means the pipeline's state does not allow
	// it (a run in progress, a failure, a continuous pipeline): the server
	// answers 409 with its reason.
	StartRun(ctx context.Context, name string) error
	// Close stops every pipeline, flushing and committing what they
	// buffered. The server never calls it; whoever built the engine does,
	// after the HTTP server stopped.
	Close(ctx context.Context) error

	// ApplyFanout starts fanout schema f inside its pipeline, which the
	// engine must run, or updates it in place. Its errors mean what
	// Apply's do; a pipeline the engine does not run is a refusal on
	// pipeline_name.
	ApplyFanout(ctx context.Context, f *spec.FanoutSchema) error
	// CheckFanout returns the [spec.Errors] ApplyFanout would refuse f
	// with, or nil, and changes nothing.
	CheckFanout(f *spec.FanoutSchema) error
	// RemoveFanout stops the named fanout schema after a final flush and
	// commit, and forgets it; its tables stay. Removing one the engine does
	// not run is not an error.
	RemoveFanout(ctx context.Context, name string) error
	// FanoutStatus reports the named fanout schema; ok is false when the
	// engine does not run it.
	FanoutStatus(name string) (status spec.FanoutStatus, ok bool)

	// ApplySink starts Kafka sink k writing through conn, or restarts it
	// with its new spec; regs holds, by connection name, the schema
	// registries of the other connections its source's transformers name.
	// Its errors mean what Apply's do.
	ApplySink(ctx context.Context, k *spec.KafkaSink, conn *spec.Connection, regs map[string]spec.SchemaRegistry) error
	// CheckSink returns the [spec.Errors] ApplySink would refuse k with,
	// or nil, and changes nothing.
	CheckSink(k *spec.KafkaSink, conn *spec.Connection, regs map[string]spec.SchemaRegistry) error
	// RemoveSink stops the named sink and forgets it. Removing one the
	// engine does not run is not an error.
	RemoveSink(ctx context.Context, name string) error
	// SinkStatus reports the named sink; ok is false when the engine does
	// not run it.
	SinkStatus(name string) (status spec.KafkaSinkStatus, ok bool)
}

// Config configures a Server.
type Config struct {
	// Store holds the desired state; required.
	Store *store.Store
	// Engine runs the pipelines; required.
	Engine Engine
	// Tokens are the bearer tokens the server accepts: every request but
	// /healthz must carry one of them. Several allow a rotation without
	// downtime; each is at least MinTokenLength bytes. [Server.SetTokens]
	// replaces them.
	Tokens []string
	// InsecureNoAuth accepts requests without a token; required when Tokens
	// is empty, so that no caller turns authentication off by mistake.
	InsecureNoAuth bool
	// Logger receives one line per request and the server's errors; nil
	// means slog.Default().
	Logger *slog.Logger
	// Redactor scrubs secrets from error messages in answers (problems and
	// status last_error); New feeds it every secret of every stored
	// connection, now and as they change. Share it with the agent's log
	// handler ([redact.NewHandler]); nil means the server makes its own.
	Redactor *redact.Redactor
	// Memory, if set, is the agent's memory budget, whose use /metrics
	// reports.
	Memory *memory.Budget

	// TLS, if set, makes [Server.Serve] answer HTTPS only, with this
	// configuration (its certificate, and client certificate checks).
	TLS *tls.Config
	// TokenFileDirs are the folders under which a connection's
	// sasl.oauth.token_file may lie (symbolic links resolved); none means
	// the agent refuses connections with a token_file.
	TokenFileDirs []string
	// MaxConnections caps the connections [Server.Serve] keeps open; 0
	// means DefaultMaxConnections. See [connLimiter] for what happens at
	// the cap.
	MaxConnections int
	// Timeouts bound every phase of a request [Server.Serve] answers.
	Timeouts Timeouts
	// AgentName names this agent among the agents of a cluster, in the
	// status it publishes for the others; empty for a single agent.
	AgentName string
}

// Server is the agent API, an http.Handler. It is safe for concurrent use.
// Changes (PUT, DELETE, a run's start, Resume) run one at a time, so
// checks that span objects (a table claimed twice, a connection still in
// use) cannot race; reads run concurrently with them.
type Server struct {
	store  *store.Store
	engine Engine
	// tokens are the accepted tokens; nil in insecure mode.
	tokens  atomic.Pointer[tokenSet]
	log     *slog.Logger
	memory  *memory.Budget
	handler http.Handler
	// tokenFileDirs are Config.TokenFileDirs, resolved (see checkTokenFile).
	tokenFileDirs []string

	// http serves the API for Serve, over tls when set, with at most
	// maxConns connections.
	http     *http.Server
	tls      *tls.Config
	maxConns int

	// changeMu serialises every change to the store and the engine.
	changeMu changeLock

	// failed, fanoutFailed and sinkFailed hold, per pipeline, fanout
	// schema and Kafka sink, the error of its last Apply when that failed,
	// so GET can say why the engine does not run it.
	failed, fanoutFailed, sinkFailed failures
	// applied holds what the engine was last given of each object, for
	// Follow.
	applied appliedSet
	// agentName names this agent in a cluster, peers the other agents'
	// reports of their share of the status.
	agentName string
	peers     peerReports
	// runsStarted holds, in a cluster, the last run of each triggered
	// pipeline this agent started its share of (see store.Run); guarded
	// by changeMu.
	runsStarted map[string]int64

	// secrets scrubs the stored connections' secrets from errors.
	secrets *redact.Redactor
}

// changeLock serialises an agent's changes. Taking it also begins a change
// of the store (see [store.Store.Begin]): in a cluster, a change is
// written only if no other agent's came in since the lock was taken, so
// that the checks the change made on the state still hold.
type changeLock struct {
	mu    sync.Mutex
	store *store.Store
}

// Lock takes the lock and begins a change of the store.
func (l *changeLock) Lock() {
	l.mu.Lock()
	l.store.Begin()
}

// Unlock releases the lock.
func (l *changeLock) Unlock() { l.mu.Unlock() }

// failures holds the last Apply error of each object that failed to
// start. It is safe for concurrent use.
type failures struct {
	mu   sync.Mutex
	errs map[string]string
}

// set records err as the last Apply error of the named object, or clears
// it when err is nil.
func (f *failures) set(name string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.errs, name)
		return
	}
	if f.errs == nil {
		f.errs = map[string]string{}
	}
	f.errs[name] = err.Error()
}

// get returns the last Apply error of the named object; ok is false when
// its last Apply did not fail.
func (f *failures) get(name string) (msg string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	msg, ok = f.errs[name]
	return msg, ok
}

// New returns a Server on cfg. It does not start any pipeline; call
// [Server.Resume] for that.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Engine == nil {
		return nil, errors.New("server: Store and Engine are required")
	}
	if cfg.MaxConnections < 0 {
		return nil, fmt.Errorf("server: MaxConnections %d is negative", cfg.MaxConnections)
	}
	s := &Server{
		changeMu:  changeLock{store: cfg.Store},
		store:     cfg.Store,
		engine:    cfg.Engine,
		log:       cfg.Logger,
		memory:    cfg.Memory,
		tls:       cfg.TLS,
		maxConns:  cmp.Or(cfg.MaxConnections, DefaultMaxConnections),
		agentName: cfg.AgentName, runsStarted: map[string]int64{},
	}
	var err error
	if s.tokenFileDirs, err = resolveDirs(cfg.TokenFileDirs); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.secrets = cfg.Redactor; s.secrets == nil {
		s.secrets = redact.New()
	}
	s.store.Connections.Watch(func(all []spec.Connection) {
		for i := range all {
			s.learnSecrets(&all[i])
		}
	})
	s.store.Catalogs.Watch(func(all []spec.Catalog) {
		for i := range all {
			s.learnSecrets(&all[i])
		}
	})
	switch {
	case len(cfg.Tokens) > 0:
		set, err := newTokenSet(cfg.Tokens)
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		s.tokens.Store(&set)
	case !cfg.InsecureNoAuth:
		return nil, errors.New("server: a token is required unless InsecureNoAuth is set")
	}
	s.handler = markBusy(s.logRequests(s.routes()))
	s.http = s.newHTTPServer(cfg)
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Resume applies every stored pipeline to the engine, then every stored
// fanout schema, then every stored Kafka sink, so a restarted agent runs what it ran before. An object
// that fails to start does not stop the others: its error is logged, shown
// by GET as state FAILED, and returned joined with the others'.
func (s *Server) Resume(ctx context.Context) error {
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	pipes, err := s.store.Pipelines.List()
	if err != nil {
		return fmt.Errorf("resuming pipelines: %w", err)
	}
	var errs []error
	for i := range pipes {
		p := &pipes[i]
		if err := s.applyStored(ctx, p); err != nil {
			errs = append(errs, fmt.Errorf("resuming pipeline %q: %w", p.Name, err))
		}
	}
	if err := s.applyFanouts(ctx, ""); err != nil {
		errs = append(errs, fmt.Errorf("resuming fanout schemas: %w", err))
	}
	if err := s.applySinks(ctx, "", false); err != nil {
		errs = append(errs, fmt.Errorf("resuming kafka sinks: %w", err))
	}
	return errors.Join(errs...)
}

// applyStored applies stored pipeline p with its stored connection and
// records the outcome for GET.
func (s *Server) applyStored(ctx context.Context, p *spec.Pipeline) error {
	s.applied.set(pipelineKind, p.Name, s.pipelineFingerprint(p))
	conn, regs, err := s.connectionsOf(p)
	if err == nil {
		err = s.engine.Apply(ctx, p, &conn, regs)
	}
	s.failed.set(p.Name, err)
	if err != nil {
		s.log.Error("pipeline did not start", "pipeline", p.Name, "err", err)
	}
	return err
}

// status returns what GET reports for stored pipeline p: the engine's status,
// or one made up from the last Apply error (FAILED) or none (STARTING) when
// the engine does not run it. Errors are scrubbed of secrets.
func (s *Server) status(p *spec.Pipeline) spec.PipelineStatus {
	st := s.clusterPipelineStatus(p.Name, s.ownStatus(p))
	st.Tables = s.redactTables(st.Tables)
	return st
}

// ownStatus is what this agent knows of the status of stored pipeline p:
// its engine's, or one made up as status says.
func (s *Server) ownStatus(p *spec.Pipeline) spec.PipelineStatus {
	if st, ok := s.engine.Status(p.Name); ok {
		return st
	}
	lastErr, failed := s.failed.get(p.Name)
	st := spec.PipelineStatus{State: spec.StateStarting, Tables: make([]spec.TableStatus, len(p.Tables))}
	if failed {
		st.State = spec.StateFailed
	}
	for i := range p.Tables {
		st.Tables[i] = spec.TableStatus{
			DestinationTable: p.Tables[i].DestinationTable,
			State:            st.State,
			Version:          -1,
			LastError:        lastErr,
		}
	}
	return st
}

// handlerFunc is an API handler; a returned error becomes a problem answer.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// route is one path and the handler of each method it accepts.
type route struct {
	path    string
	methods map[string]handlerFunc
	// open routes need no token.
	open bool
}

// routeTable returns every route of the API; openapi.json documents each.
func (s *Server) routeTable() []route {
	return []route{
		{path: "/healthz", methods: map[string]handlerFunc{http.MethodGet: s.healthz}, open: true},
		{path: "/openapi.json", methods: map[string]handlerFunc{http.MethodGet: serveOpenAPI}, open: true},
		{path: "/metrics", methods: map[string]handlerFunc{http.MethodGet: s.metrics}},
		{path: "/v1/connections", methods: map[string]handlerFunc{http.MethodGet: s.listConnections}},
		{path: "/v1/connections/{name}", methods: map[string]handlerFunc{
			http.MethodGet: s.getConnection, http.MethodPut: s.putConnection, http.MethodDelete: s.deleteConnection,
		}},
		{path: "/v1/catalogs", methods: map[string]handlerFunc{http.MethodGet: s.listCatalogs}},
		{path: "/v1/catalogs/{name}", methods: map[string]handlerFunc{
			http.MethodGet: s.getCatalog, http.MethodPut: s.putCatalog, http.MethodDelete: s.deleteCatalog,
		}},
		{path: "/v1/pipelines", methods: map[string]handlerFunc{http.MethodGet: s.listPipelines}},
		{path: "/v1/pipelines/{name}", methods: map[string]handlerFunc{
			http.MethodGet: s.getPipeline, http.MethodPut: s.putPipeline, http.MethodDelete: s.deletePipeline,
		}},
		{path: "/v1/pipelines/{name}/dry-run", methods: map[string]handlerFunc{http.MethodPost: s.dryRunPipeline}},
		{path: "/v1/pipelines/{name}/runs", methods: map[string]handlerFunc{http.MethodPost: s.startRun}},
		{path: "/v1/fanout-schemas", methods: map[string]handlerFunc{http.MethodGet: s.listFanoutSchemas}},
		{path: "/v1/fanout-schemas/{name}", methods: map[string]handlerFunc{
			http.MethodGet: s.getFanoutSchema, http.MethodPut: s.putFanoutSchema, http.MethodDelete: s.deleteFanoutSchema,
		}},
		{path: "/v1/fanout-schemas/{name}/dry-run", methods: map[string]handlerFunc{http.MethodPost: s.dryRunFanoutSchema}},
		{path: "/v1/kafka-sinks", methods: map[string]handlerFunc{http.MethodGet: s.listKafkaSinks}},
		{path: "/v1/kafka-sinks/{name}", methods: map[string]handlerFunc{
			http.MethodGet: s.getKafkaSink, http.MethodPut: s.putKafkaSink, http.MethodDelete: s.deleteKafkaSink,
		}},
		{path: "/v1/kafka-sinks/{name}/dry-run", methods: map[string]handlerFunc{http.MethodPost: s.dryRunKafkaSink}},
	}
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routeTable() {
		allowed := make([]string, 0, len(rt.methods)+1)
		for method, h := range rt.methods {
			mux.Handle(method+" "+rt.path, s.wrap(noQuery(h), rt.open))
			allowed = append(allowed, method)
			if method == http.MethodGet {
				allowed = append(allowed, http.MethodHead)
			}
		}
		slices.Sort(allowed)
		// The same path without a method matches every method the
		// patterns above leave out; ServeMux's own 405 is plain text.
		mux.Handle(rt.path, s.wrap(methodNotAllowed(allowed), rt.open))
	}
	mux.Handle("/", s.wrap(notFound, false))
	return mux
}

// wrap turns h into an http.Handler that checks the token unless open and
// writes h's error as a problem.
func (s *Server) wrap(h handlerFunc, open bool) http.Handler {
	if !open {
		h = s.synced(h)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !open && !s.authenticate(w, r) {
			return
		}
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// noQuery refuses, with a 400, a request to h that carries query
// parameters: no route takes any.
func noQuery(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if r.URL.RawQuery != "" {
			return problemf(http.StatusBadRequest, "%s %s takes no query parameters, got %q", r.Method, r.URL.Path, r.URL.RawQuery)
		}
		return h(w, r)
	}
}

func notFound(_ http.ResponseWriter, r *http.Request) error {
	return problemf(http.StatusNotFound, "no route for %s %s; the API lives under /v1/connections, /v1/pipelines, /v1/fanout-schemas and /v1/kafka-sinks", r.Method, r.URL.Path)
}

func methodNotAllowed(allowed []string) handlerFunc {
	list := strings.Join(allowed, ", ")
	return func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Allow", list)
		return problemf(http.StatusMethodNotAllowed, "%s does not accept %s; use one of %s", r.URL.Path, r.Method, list)
	}
}
