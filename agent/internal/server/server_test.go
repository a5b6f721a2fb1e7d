package server_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/server"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

func TestAuth(t *testing.T) {
	a := newAgent(t, "")
	tests := []struct {
		name       string
		path       string
		header     string
		wantStatus int
		wantDetail string
	}{
		{name: "no token", path: "/v1/pipelines", wantStatus: http.StatusUnauthorized, wantDetail: "send the agent's token"},
		{name: "wrong token", path: "/v1/pipelines", header: "Bearer nope", wantStatus: http.StatusUnauthorized, wantDetail: "the token was rejected"},
		{name: "token prefix", path: "/v1/pipelines", header: "Bearer " + testToken[:4], wantStatus: http.StatusUnauthorized},
		{name: "basic scheme", path: "/v1/pipelines", header: "Basic " + testToken, wantStatus: http.StatusUnauthorized},
		{name: "right token", path: "/v1/pipelines", header: "Bearer " + testToken, wantStatus: http.StatusOK},
		{name: "scheme is case-insensitive", path: "/v1/pipelines", header: "bearer " + testToken, wantStatus: http.StatusOK},
		{name: "metrics needs the token", path: "/metrics", wantStatus: http.StatusUnauthorized},
		{name: "unknown routes need the token", path: "/nope", wantStatus: http.StatusUnauthorized},
		{name: "healthz is open", path: "/healthz", wantStatus: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, a.url+tt.path, nil)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantStatus == http.StatusUnauthorized {
				problem(t, resp.Header, string(body))
				if !strings.Contains(string(body), tt.wantDetail) {
					t.Errorf("body %s does not say %q", body, tt.wantDetail)
				}
				if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", resp.Header.Get("WWW-Authenticate"))
				}
			}
		})
	}

	t.Run("client with a wrong token", func(t *testing.T) {
		_, err := newClient(t, a.url, "wrong").GetPipeline(t.Context(), "p")
		apiError(t, err, http.StatusUnauthorized)
	})
}

func TestInsecureMode(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.New(server.Config{Store: st, Engine: newFakeEngine()}); err == nil {
		t.Fatal("New without a token and without InsecureNoAuth succeeded; want an error")
	}
	srv, err := server.New(server.Config{Store: st, Engine: newFakeEngine(), InsecureNoAuth: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	if _, err := newClient(t, hs.URL, "").PutConnection(t.Context(), connection("local")); err != nil {
		t.Fatalf("PutConnection without a token in insecure mode: %v", err)
	}
}

func TestConnectionLifecycle(t *testing.T) {
	a := newAgent(t, "")
	ctx := t.Context()
	c := connection("local")
	got, err := a.client.PutConnection(ctx, c)
	if err != nil || got.Name != "local" || len(got.BootstrapServers) != 1 {
		t.Fatalf("PutConnection = %+v, %v", got, err)
	}
	c.BootstrapServers = []string{"a:1", "b:2"}
	if _, err := a.client.PutConnection(ctx, c); err != nil {
		t.Fatalf("update: %v", err)
	}
	got, err = a.client.GetConnection(ctx, "local")
	if err != nil || !slices.Equal(got.BootstrapServers, c.BootstrapServers) {
		t.Fatalf("GetConnection = %+v, %v; want %v", got, err, c.BootstrapServers)
	}
	status, _, body := raw(t, http.MethodGet, a.url+"/v1/connections", testToken, "")
	if status != http.StatusOK || !strings.Contains(body, `"a:1"`) {
		t.Fatalf("list: %d %s", status, body)
	}
	if err := a.client.DeleteConnection(ctx, "local"); err != nil {
		t.Fatalf("DeleteConnection: %v", err)
	}
	if _, err := a.client.GetConnection(ctx, "local"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("GetConnection after delete: err = %v, want ErrNotFound", err)
	}
	status, header, body := raw(t, http.MethodDelete, a.url+"/v1/connections/local", testToken, "")
	if status != http.StatusNotFound {
		t.Fatalf("DELETE of a missing connection: %d, want 404", status)
	}
	problem(t, header, body)
}

func TestPipelineLifecycle(t *testing.T) {
	a := newAgent(t, "")
	ctx := t.Context()
	a.mustPut(t)
	p := pipeline("orders", "local", "events")
	resp, err := a.client.PutPipeline(ctx, p)
	if err != nil {
		t.Fatalf("PutPipeline: %v", err)
	}
	// The answer carries the normalized spec and the engine's status.
	if resp.Spec.FlushInterval != spec.DefaultFlushInterval || resp.Spec.Tables[0].ConnectorOptions.KafkaOptions.StartingOffset != spec.StartingOffsetLatest {
		t.Errorf("spec not normalized: %+v", resp.Spec)
	}
	if resp.Status.State != spec.StateRunning || len(resp.Status.Tables) != 1 || resp.Status.Tables[0].Rows != 100 {
		t.Errorf("status = %+v, want the engine's RUNNING status", resp.Status)
	}
	if n := a.engine.count(a.engine.applies, "orders"); n != 1 {
		t.Fatalf("Apply called %d times, want 1", n)
	}

	p.Tables[0].ConnectorOptions.KafkaOptions.StartingOffset = spec.StartingOffsetEarliest
	if _, err := a.client.PutPipeline(ctx, p); err != nil {
		t.Fatalf("update: %v", err)
	}
	if n := a.engine.count(a.engine.applies, "orders"); n != 2 {
		t.Fatalf("Apply called %d times after a change, want 2", n)
	}
	got, err := a.client.GetPipeline(ctx, "orders")
	if err != nil || got.Spec.Tables[0].ConnectorOptions.KafkaOptions.StartingOffset != spec.StartingOffsetEarliest {
		t.Fatalf("GetPipeline = %+v, %v", got, err)
	}
	status, _, body := raw(t, http.MethodGet, a.url+"/v1/pipelines", testToken, "")
	if status != http.StatusOK || !strings.Contains(body, `"name":"orders"`) || !strings.Contains(body, `"state":"RUNNING"`) {
		t.Fatalf("list: %d %s", status, body)
	}

	if err := a.client.DeletePipeline(ctx, "orders"); err != nil {
		t.Fatalf("DeletePipeline: %v", err)
	}
	if n := a.engine.count(a.engine.removes, "orders"); n != 1 {
		t.Fatalf("Remove called %d times, want 1", n)
	}
	if _, err := a.client.GetPipeline(ctx, "orders"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("GetPipeline after delete: err = %v, want ErrNotFound", err)
	}
	if status, _, _ := raw(t, http.MethodDelete, a.url+"/v1/pipelines/orders", testToken, ""); status != http.StatusNotFound {
		t.Fatalf("DELETE of a missing pipeline: %d, want 404", status)
	}
	// Its connection is free again.
	if err := a.client.DeleteConnection(ctx, "local"); err != nil {
		t.Fatalf("DeleteConnection after the pipeline went: %v", err)
	}
}

func TestPipelineValidation(t *testing.T) {
	a := newAgent(t, "")
	a.mustPut(t)
	tests := []struct {
		name     string
		urlName  string // "" means the pipeline's name
		mutate   func(p *spec.Pipeline)
		wantPath string
	}{
		{
			name: "topics and topic_pattern",
			mutate: func(p *spec.Pipeline) {
				p.Tables[0].ConnectorOptions.KafkaOptions.TopicPattern = "ev.*"
			},
			wantPath: "table[0].connector_options.kafka_options.topics",
		},
		{
			name:     "missing connection",
			mutate:   func(p *spec.Pipeline) { p.Connection = "nope" },
			wantPath: "connection_name",
		},
		{
			name:     "bad catalog",
			mutate:   func(p *spec.Pipeline) { p.DestinationCatalog = "1bad" },
			wantPath: "destination_catalog",
		},
		{
			name:     "name differs from the URL",
			urlName:  "other",
			mutate:   func(*spec.Pipeline) {},
			wantPath: "name",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pipeline("p", "local", "events")
			tt.mutate(p)
			var err error
			if tt.urlName == "" {
				_, err = a.client.PutPipeline(t.Context(), p)
			} else {
				body := `{"name":"p","connection_name":"local","destination_catalog":"main","destination_schema":"raw","table":[]}`
				status, header, resp := raw(t, http.MethodPut, a.url+"/v1/pipelines/"+tt.urlName, testToken, body)
				if status != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422: %s", status, resp)
				}
				pr := problem(t, header, resp)
				err = &client.APIError{Status: status, Problems: pr.Errors}
			}
			ae := apiError(t, err, http.StatusUnprocessableEntity)
			if !slices.ContainsFunc(ae.Problems, func(e spec.FieldError) bool { return e.Path == tt.wantPath }) {
				t.Fatalf("problems %v do not name path %q", ae.Problems, tt.wantPath)
			}
			if n := a.engine.count(a.engine.applies, "p"); n != 0 {
				t.Fatalf("an invalid pipeline was applied %d times", n)
			}
		})
	}
}

func TestNameFromURL(t *testing.T) {
	a := newAgent(t, "")
	a.mustPut(t)
	body := `{"connection_name":"local","destination_catalog":"main","destination_schema":"raw",
		"table":[{"destination_table":"t","connector_options":{"kafka_options":{"topics":["events"]}},"table_configuration":{}}]}`
	status, _, resp := raw(t, http.MethodPut, a.url+"/v1/pipelines/from-url", testToken, body)
	if status != http.StatusOK || !strings.Contains(resp, `"name":"from-url"`) {
		t.Fatalf("PUT without a name: %d %s", status, resp)
	}
}

func TestClaimConflict(t *testing.T) {
	a := newAgent(t, "")
	a.mustPut(t, pipeline("first", "local", "events"))
	second := pipeline("second", "local", "EVENTS")
	second.DestinationCatalog, second.DestinationSchema = "MAIN", "Raw"
	_, err := a.client.PutPipeline(t.Context(), second)
	ae := apiError(t, err, http.StatusConflict)
	if len(ae.Problems) != 1 || ae.Problems[0].Path != "table[0].destination_table" || !strings.Contains(ae.Problems[0].Detail, `"first"`) {
		t.Fatalf("problems = %v, want one on table[0].destination_table naming pipeline \"first\"", ae.Problems)
	}
	// The owner itself may be applied again.
	if _, err := a.client.PutPipeline(t.Context(), pipeline("first", "local", "events")); err != nil {
		t.Fatalf("re-PUT of the owner: %v", err)
	}
}

func TestDeleteUsedConnection(t *testing.T) {
	a := newAgent(t, "")
	a.mustPut(t, pipeline("p1", "local", "a"), pipeline("p2", "local", "b"))
	err := a.client.DeleteConnection(t.Context(), "local")
	ae := apiError(t, err, http.StatusConflict)
	if !strings.Contains(ae.Detail, `"p1"`) || !strings.Contains(ae.Detail, `"p2"`) {
		t.Fatalf("detail %q does not name both pipelines", ae.Detail)
	}
	if _, err := a.client.GetConnection(t.Context(), "local"); err != nil {
		t.Fatalf("connection gone after a refused delete: %v", err)
	}
}

func TestIdempotentPut(t *testing.T) {
	a := newAgent(t, "")
	ctx := t.Context()
	a.mustPut(t, pipeline("p", "local", "events"))
	// The same spec again, and once with the defaults spelled out.
	normalized := pipeline("p", "local", "events")
	normalized.Normalize()
	for _, p := range []*spec.Pipeline{pipeline("p", "local", "events"), normalized} {
		if _, err := a.client.PutPipeline(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if n := a.engine.count(a.engine.applies, "p"); n != 1 {
		t.Fatalf("Apply called %d times for an unchanged spec, want 1", n)
	}
	// An engine that lost the pipeline gets it again, even unchanged.
	a.engine.forget("p")
	if _, err := a.client.PutPipeline(ctx, pipeline("p", "local", "events")); err != nil {
		t.Fatal(err)
	}
	if n := a.engine.count(a.engine.applies, "p"); n != 2 {
		t.Fatalf("Apply called %d times after the engine forgot the pipeline, want 2", n)
	}
}

func TestConnectionChangeReapplies(t *testing.T) {
	a := newAgent(t, "")
	ctx := t.Context()
	a.mustPut(t, pipeline("p", "local", "events"))
	if _, err := a.client.PutConnection(ctx, connection("local")); err != nil {
		t.Fatal(err)
	}
	if n := a.engine.count(a.engine.applies, "p"); n != 1 {
		t.Fatalf("an unchanged connection re-applied its pipeline (%d applies)", n)
	}
	changed := connection("local")
	changed.BootstrapServers = []string{"other:9092"}
	if _, err := a.client.PutConnection(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if n := a.engine.count(a.engine.applies, "p"); n != 2 {
		t.Fatalf("Apply called %d times after the connection changed, want 2", n)
	}
	a.engine.mu.Lock()
	got := a.engine.conns["p"].BootstrapServers
	a.engine.mu.Unlock()
	if !slices.Equal(got, changed.BootstrapServers) {
		t.Fatalf("pipeline re-applied with %v, want the new %v", got, changed.BootstrapServers)
	}
}

func TestResumeAfterRestart(t *testing.T) {
	dir := t.TempDir()
	first := newAgent(t, dir)
	first.mustPut(t, pipeline("p", "local", "events"))

	second := newAgent(t, dir)
	if err := second.srv.Resume(t.Context()); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if n := second.engine.count(second.engine.applies, "p"); n != 1 {
		t.Fatalf("Resume applied p %d times, want 1", n)
	}
	got, err := second.client.GetPipeline(t.Context(), "p")
	if err != nil || got.Status.State != spec.StateRunning {
		t.Fatalf("GetPipeline after restart = %+v, %v", got, err)
	}
}

func TestApplyFailure(t *testing.T) {
	a := newAgent(t, "")
	ctx := t.Context()
	a.mustPut(t)
	a.engine.setApplyErr(errors.New("broker unreachable"))
	// Raw, as the client retries a 5xx and then reports only that it gave up.
	body := `{"name":"p","connection_name":"local","destination_catalog":"main","destination_schema":"raw",
		"table":[{"destination_table":"events","connector_options":{"kafka_options":{"topics":["events"]}},"table_configuration":{}}]}`
	status, header, resp := raw(t, http.MethodPut, a.url+"/v1/pipelines/p", testToken, body)
	if status != http.StatusInternalServerError || !strings.Contains(problem(t, header, resp).Detail, "broker unreachable") {
		t.Fatalf("PUT with a failing engine: %d %s; want 500 naming the error", status, resp)
	}

	// The spec is kept, and GET says why it does not run.
	got, err := a.client.GetPipeline(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != spec.StateFailed || len(got.Status.Tables) != 1 || !strings.Contains(got.Status.Tables[0].LastError, "broker unreachable") {
		t.Fatalf("status = %+v, want FAILED with the error", got.Status)
	}

	// The same PUT once the engine works starts it.
	a.engine.setApplyErr(nil)
	retried, err := a.client.PutPipeline(ctx, pipeline("p", "local", "events"))
	if err != nil || retried.Status.State != spec.StateRunning {
		t.Fatalf("retry = %+v, %v; want RUNNING", retried, err)
	}
}

func TestApplyRefused(t *testing.T) {
	a := newAgent(t, "")
	ctx := t.Context()
	a.mustPut(t, pipeline("p", "local", "events"))
	a.engine.setApplyErr(spec.Errors{{Path: "table[0].connector_options.kafka_options.value_transformer", Detail: "column x changed type"}})
	changed := pipeline("p", "local", "events")
	changed.Tables[0].ConnectorOptions.KafkaOptions.StartingOffset = spec.StartingOffsetEarliest
	_, err := a.client.PutPipeline(ctx, changed)
	ae := apiError(t, err, http.StatusUnprocessableEntity)
	if len(ae.Problems) != 1 || !strings.HasSuffix(ae.Problems[0].Path, "value_transformer") {
		t.Fatalf("problems = %v, want the engine's", ae.Problems)
	}
	got, err := a.client.GetPipeline(ctx, "p")
	if err != nil || got.Spec.Tables[0].ConnectorOptions.KafkaOptions.StartingOffset != spec.StartingOffsetLatest {
		t.Fatalf("stored spec after a refusal = %+v, %v; want the previous one", got, err)
	}

	// A refused new pipeline is not kept.
	_, err = a.client.PutPipeline(ctx, pipeline("fresh", "local", "other"))
	apiError(t, err, http.StatusUnprocessableEntity)
	if _, err := a.client.GetPipeline(ctx, "fresh"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("refused new pipeline is stored: err = %v", err)
	}
}

// A dry run answers what a PUT would, and stores, applies and stops
// nothing.
func TestPipelineDryRun(t *testing.T) {
	a := newAgent(t, "")
	ctx := t.Context()
	a.mustPut(t, pipeline("first", "local", "events"))
	// storedAsIs fails unless the agent stores what mustPut put, applied once.
	storedAsIs := func(t *testing.T) {
		t.Helper()
		got, err := a.client.GetPipeline(ctx, "first")
		if err != nil || got.Spec.Tables[0].ConnectorOptions.KafkaOptions.StartingOffset != spec.StartingOffsetLatest {
			t.Fatalf("stored pipeline changed by a dry run: %+v, %v", got, err)
		}
		if _, err := a.client.GetPipeline(ctx, "second"); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("a dry run stored pipeline second: err = %v", err)
		}
		if n := a.engine.count(a.engine.applies, "first") + a.engine.count(a.engine.applies, "second"); n != 1 {
			t.Fatalf("Apply called %d times, want only mustPut's", n)
		}
		if n := a.engine.count(a.engine.removes, "first"); n != 0 {
			t.Fatalf("a dry run removed a pipeline %d times", n)
		}
	}

	// Accepted: the answer is the normalized pipeline.
	got, err := a.client.DryRunPipeline(ctx, pipeline("second", "local", "other"))
	if err != nil {
		t.Fatalf("DryRunPipeline of a good pipeline: %v", err)
	}
	if got.Name != "second" || got.FlushInterval != spec.DefaultFlushInterval {
		t.Fatalf("dry run answered %+v, want the normalized pipeline", got)
	}
	if n := a.engine.count(a.engine.checks, "second"); n != 1 {
		t.Fatalf("engine Check called %d times, want 1", n)
	}
	storedAsIs(t)

	changedOffset := func(p *spec.Pipeline) {
		p.Tables[0].ConnectorOptions.KafkaOptions.StartingOffset = spec.StartingOffsetEarliest
	}
	tests := []struct {
		name       string
		p          *spec.Pipeline
		mutate     func(p *spec.Pipeline)
		engineErr  error
		wantStatus int
		wantPath   string
	}{
		{"invalid", pipeline("second", "local", "other"), func(p *spec.Pipeline) { p.DestinationCatalog = "1bad" },
			nil, http.StatusUnprocessableEntity, "destination_catalog"},
		{"claimed table", pipeline("second", "local", "EVENTS"), func(*spec.Pipeline) {},
			nil, http.StatusConflict, "table[0].destination_table"},
		{"missing connection", pipeline("second", "nope", "other"), func(*spec.Pipeline) {},
			nil, http.StatusUnprocessableEntity, "connection_name"},
		{"refused by the engine", pipeline("first", "local", "events"), changedOffset,
			spec.Errors{{Path: "table[0]", Detail: "column id: BIGINT cannot become STRING"}},
			http.StatusUnprocessableEntity, "table[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a.engine.setApplyErr(tt.engineErr)
			defer a.engine.setApplyErr(nil)
			tt.mutate(tt.p)
			_, err := a.client.DryRunPipeline(ctx, tt.p)
			ae := apiError(t, err, tt.wantStatus)
			if len(ae.Problems) != 1 || ae.Problems[0].Path != tt.wantPath {
				t.Fatalf("problems %v, want one on %q", ae.Problems, tt.wantPath)
			}
			if tt.engineErr != nil && ae.Problems[0].Detail != "column id: BIGINT cannot become STRING" {
				t.Fatalf("problem %v is not the engine's", ae.Problems[0])
			}
			storedAsIs(t)
		})
	}

	// A PUT that asks for a dry run the way an earlier provider did is
	// refused, not applied.
	body, err := json.Marshal(pipeline("second", "local", "other"))
	if err != nil {
		t.Fatal(err)
	}
	status, header, answer := raw(t, http.MethodPut, a.url+"/v1/pipelines/second?dry_run=true", testToken, string(body))
	if status != http.StatusBadRequest || !strings.Contains(problem(t, header, answer).Detail, `takes no query parameters, got "dry_run=true"`) {
		t.Fatalf("PUT ?dry_run=true: %d %s", status, answer)
	}
	storedAsIs(t)

	status, header, answer = raw(t, http.MethodPut, a.url+"/v1/pipelines/second/dry-run", testToken, string(body))
	if status != http.StatusMethodNotAllowed || header.Get("Allow") != http.MethodPost {
		t.Fatalf("PUT on the dry-run route: %d (Allow %q) %s, want 405 allowing POST", status, header.Get("Allow"), answer)
	}
	storedAsIs(t)
}

func TestProblemAnswers(t *testing.T) {
	a := newAgent(t, "")
	a.mustPut(t)
	tests := []struct {
		name, method, path, body string
		wantStatus               int
		wantDetail               string
	}{
		{name: "unknown route", method: http.MethodGet, path: "/v2/things", wantStatus: http.StatusNotFound},
		{name: "missing pipeline", method: http.MethodGet, path: "/v1/pipelines/nope", wantStatus: http.StatusNotFound, wantDetail: `"nope"`},
		{name: "wrong method", method: http.MethodPost, path: "/v1/pipelines/p", wantStatus: http.StatusMethodNotAllowed, wantDetail: "DELETE, GET, HEAD, PUT"},
		{name: "wrong method on a list", method: http.MethodDelete, path: "/v1/connections", wantStatus: http.StatusMethodNotAllowed},
		{name: "query parameter", method: http.MethodGet, path: "/v1/pipelines/p?verbose=1", wantStatus: http.StatusBadRequest, wantDetail: "takes no query parameters"},
		{name: "dry run of nothing", method: http.MethodPost, path: "/v1/pipelines/p/dry-run", wantStatus: http.StatusBadRequest, wantDetail: "empty"},
		{name: "malformed json", method: http.MethodPut, path: "/v1/connections/c", body: `{"name":`, wantStatus: http.StatusBadRequest},
		{name: "unknown field", method: http.MethodPut, path: "/v1/connections/c", body: `{"name":"c","bootstrap_servers":["a:1"],"bogus":1}`, wantStatus: http.StatusBadRequest, wantDetail: "attribute names"},
		{name: "wrong type", method: http.MethodPut, path: "/v1/connections/c", body: `{"bootstrap_servers":"a:1"}`, wantStatus: http.StatusBadRequest},
		{name: "trailing data", method: http.MethodPut, path: "/v1/connections/c", body: `{"bootstrap_servers":["a:1"]} {}`, wantStatus: http.StatusBadRequest},
		{name: "empty body", method: http.MethodPut, path: "/v1/connections/c", wantStatus: http.StatusBadRequest, wantDetail: "empty"},
		{name: "body over 4 MiB", method: http.MethodPut, path: "/v1/connections/c",
			body: `{"bootstrap_servers":["` + strings.Repeat("a", 4<<20) + `"]}`, wantStatus: http.StatusRequestEntityTooLarge},
		{name: "invalid connection", method: http.MethodPut, path: "/v1/connections/c", body: `{"bootstrap_servers":["nohost"]}`, wantStatus: http.StatusUnprocessableEntity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, header, body := raw(t, tt.method, a.url+tt.path, testToken, tt.body)
			if status != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", status, tt.wantStatus, body)
			}
			p := problem(t, header, body)
			if p.Status != tt.wantStatus || !strings.Contains(p.Detail, tt.wantDetail) {
				t.Fatalf("problem = %+v, want status %d and a detail containing %q", p, tt.wantStatus, tt.wantDetail)
			}
		})
	}
	if status, header, _ := raw(t, http.MethodPost, a.url+"/v1/pipelines/p", testToken, ""); status != http.StatusMethodNotAllowed || header.Get("Allow") == "" {
		t.Fatalf("405 without an Allow header")
	}
}

func TestMetrics(t *testing.T) {
	a := newAgent(t, "")
	a.mustPut(t, pipeline("p", "local", "events"))
	if _, err := a.client.PutFanoutSchema(t.Context(), fanout("f", "p", "routed")); err != nil {
		t.Fatal(err)
	}
	a.engine.setApplyErr(errors.New("boom"))
	_, _ = a.client.PutPipeline(t.Context(), pipeline("broken", "local", "other"))
	if err := a.memory.Acquire(t.Context(), 5<<20); err != nil {
		t.Fatal(err)
	}

	status, header, body := raw(t, http.MethodGet, a.url+"/metrics", testToken, "")
	if status != http.StatusOK || !strings.HasPrefix(header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: %d %q", status, header.Get("Content-Type"))
	}
	for _, want := range []string{
		"# TYPE tributary_pipeline_up gauge",
		`tributary_pipeline_up{pipeline="p",state="RUNNING"} 1`,
		`tributary_pipeline_up{pipeline="p",state="FAILED"} 0`,
		`tributary_pipeline_up{pipeline="broken",state="FAILED"} 1`,
		"# TYPE tributary_table_rows_total counter",
		`tributary_table_rows_total{pipeline="p",table="main.raw.events"} 100`,
		`tributary_table_files_total{pipeline="p",table="main.raw.events"} 2`,
		`tributary_table_corrupt_records_total{pipeline="p",table="main.raw.events"} 1`,
		`tributary_table_version{pipeline="p",table="main.raw.events"} 3`,
		`tributary_table_version{pipeline="broken",table="main.raw.other"} -1`,
		`tributary_partition_lag{pipeline="p",table="main.raw.events",topic="events",partition="0"} 7`,
		`tributary_partition_lag_bytes{pipeline="p",table="main.raw.events",topic="events",partition="0"} 700`,
		`tributary_table_lag{pipeline="p",table="main.raw.events"} 7`,
		`tributary_table_lag_bytes{pipeline="p",table="main.raw.events"} 700`,
		"# TYPE tributary_table_data_loss_offsets_total counter",
		`tributary_table_data_loss_offsets_total{pipeline="p",table="main.raw.events"} 40`,
		"# TYPE tributary_table_error_records_total counter",
		`tributary_table_error_records_total{pipeline="p",table="main.raw.events"} 3`,
		"# TYPE tributary_table_filtered_records_total counter",
		`tributary_table_filtered_records_total{pipeline="p",table="main.raw.events"} 5`,
		`tributary_table_rows_total{pipeline="p",table="main.routed.orders"} 10`,
		`tributary_table_version{pipeline="p",table="main.routed.orders"} 1`,
		"# TYPE tributary_fanout_up gauge",
		`tributary_fanout_up{pipeline="p",fanout="f",state="RUNNING"} 1`,
		`tributary_fanout_up{pipeline="p",fanout="f",state="FAILED"} 0`,
		`tributary_fanout_lag{pipeline="p",fanout="f"} 3`,
		`tributary_fanout_lag_bytes{pipeline="p",fanout="f"} 300`,
		`tributary_fanout_partition_lag{pipeline="p",fanout="f",topic="events",partition="0"} 3`,
		`tributary_fanout_partition_lag_bytes{pipeline="p",fanout="f",topic="events",partition="0"} 300`,
		"# TYPE tributary_memory_limit_bytes gauge",
		"tributary_memory_limit_bytes 67108864",
		"tributary_memory_used_bytes 5242880",
		"tributary_memory_files_bytes 0",
		"tributary_memory_pauses_total 0",
		"tributary_memory_flushes_total 0",
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("metrics lack the line %q", want)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}
