package server_test

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/redact"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/server"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/testlog"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

const saslPassword = "kafka-pa55word"

// lastErrorEngine is a fakeEngine whose running tables report lastErr.
type lastErrorEngine struct {
	*fakeEngine
	mu      sync.Mutex
	lastErr string
}

func (e *lastErrorEngine) Status(name string) (spec.PipelineStatus, bool) {
	st, ok := e.fakeEngine.Status(name)
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range st.Tables {
		st.Tables[i].LastError = e.lastErr
	}
	return st, ok
}

// TestSecretsRedacted: an engine error that echoes a connection's password
// comes back scrubbed in the problem answer, in GET's status last_error
// and in the server's log lines.
func TestSecretsRedacted(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	eng := &lastErrorEngine{fakeEngine: newFakeEngine()}
	var logs testlog.Buffer
	red := redact.New()
	srv, err := server.New(server.Config{
		Store: st, Engine: eng, Tokens: []string{testToken}, Redactor: red,
		Logger: slog.New(redact.NewHandler(slog.NewTextHandler(&logs, nil), red)),
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	a := &agent{srv: srv, url: hs.URL, client: newClient(t, hs.URL, testToken), engine: eng.fakeEngine}
	ctx := t.Context()

	conn := connection("local")
	conn.SecurityProtocol = "SASL_PLAINTEXT"
	conn.SASL = &spec.SASL{Mechanism: spec.SASLPlain, Username: "ingest", Password: saslPassword}
	if _, err := a.client.PutConnection(ctx, conn); err != nil {
		t.Fatal(err)
	}
	noSecret := func(what, text string) {
		t.Helper()
		if strings.Contains(text, saslPassword) {
			t.Errorf("%s holds the password: %s", what, text)
		}
		if !strings.Contains(text, redact.Placeholder) {
			t.Errorf("%s does not show where the password was: %s", what, text)
		}
	}

	// A failed start: the 500 problem and the made-up FAILED status.
	a.engine.setApplyErr(errors.New(`SASL authentication failed: user "ingest" password "` + saslPassword + `"`))
	body := `{"name":"p","connection_name":"local","destination_catalog":"main","destination_schema":"raw",
		"table":[{"destination_table":"events","connector_options":{"kafka_options":{"topics":["events"]}},"table_configuration":{}}]}`
	status, header, resp := raw(t, http.MethodPut, a.url+"/v1/pipelines/p", testToken, body)
	if status != http.StatusInternalServerError {
		t.Fatalf("PUT with a failing engine: %d %s; want 500", status, resp)
	}
	noSecret("the problem's detail", problem(t, header, resp).Detail)
	_, _, resp = raw(t, http.MethodGet, a.url+"/v1/pipelines/p", testToken, "")
	noSecret("GET of a failed pipeline", resp)
	noSecret("the log", logs.String())

	// A refusal: the problem's list.
	a.engine.setApplyErr(spec.Errors{{Path: "table[0]", Detail: "the broker said " + saslPassword}})
	status, header, resp = raw(t, http.MethodPut, a.url+"/v1/pipelines/p", testToken, strings.Replace(body, `"raw"`, `"raw2"`, 1))
	if status != http.StatusUnprocessableEntity {
		t.Fatalf("PUT refused by the engine: %d %s; want 422", status, resp)
	}
	if p := problem(t, header, resp); len(p.Errors) != 1 {
		t.Fatalf("problem = %+v, want the engine's one problem", p)
	} else {
		noSecret("the problem's list", p.Errors[0].Detail)
	}

	// A running pipeline whose table reports an error.
	a.engine.setApplyErr(nil)
	eng.mu.Lock()
	eng.lastErr = "fetch: SASL handshake with password " + saslPassword + " failed"
	eng.mu.Unlock()
	got, err := a.client.PutPipeline(ctx, pipeline("p", "local", "events"))
	if err != nil {
		t.Fatal(err)
	}
	noSecret("PUT's status", got.Status.Tables[0].LastError)
	got, err = a.client.GetPipeline(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	noSecret("GET's status", got.Status.Tables[0].LastError)

	// A connection's new password is scrubbed as soon as it is stored,
	// and the old one still is.
	conn.SASL.Password = "n3w-kafka-password"
	if _, err := a.client.PutConnection(ctx, conn); err != nil {
		t.Fatal(err)
	}
	eng.mu.Lock()
	eng.lastErr = "old " + saslPassword + " new n3w-kafka-password"
	eng.mu.Unlock()
	got, err = a.client.GetPipeline(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if want := "old [redacted] new [redacted]"; got.Status.Tables[0].LastError != want {
		t.Errorf("last_error = %q, want %q", got.Status.Tables[0].LastError, want)
	}
}

// TestSecretsOfStoredConnectionsRedacted: a server on a store that holds
// connections already scrubs their secrets, with a Redactor of its own.
func TestSecretsOfStoredConnectionsRedacted(t *testing.T) {
	dir := t.TempDir()
	first := newAgent(t, dir)
	if _, err := first.client.PutConnection(t.Context(), withRegistry("regs")); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, dir)
	a.engine.setApplyErr(errors.New("registry answered 401 for key:registry-s3cret"))
	status, header, resp := raw(t, http.MethodPut, a.url+"/v1/pipelines/p", testToken,
		`{"name":"p","connection_name":"regs","destination_catalog":"main","destination_schema":"raw",
		"table":[{"destination_table":"events","connector_options":{"kafka_options":{"topics":["events"]}},"table_configuration":{}}]}`)
	if status != http.StatusInternalServerError {
		t.Fatalf("PUT: %d %s; want 500", status, resp)
	}
	if d := problem(t, header, resp).Detail; strings.Contains(d, "registry-s3cret") || !strings.Contains(d, "key:[redacted]") {
		t.Errorf("detail = %q, want the secret scrubbed", d)
	}
}

// TestSecretsOfRefusedConnectionRedacted: the problems of a connection
// that is not stored (it is not valid) do not quote its secrets either.
func TestSecretsOfRefusedConnectionRedacted(t *testing.T) {
	a := newAgent(t, "")
	// A password that is also a bootstrap server the validation quotes.
	const secret = "broker-a:99999"
	c := connection("bad")
	c.BootstrapServers = []string{secret}
	c.SecurityProtocol = "SASL_PLAINTEXT"
	c.SASL = &spec.SASL{Mechanism: spec.SASLPlain, Username: "ingest", Password: secret}
	_, err := a.client.PutConnection(t.Context(), c)
	ae := apiError(t, err, http.StatusUnprocessableEntity)
	if strings.Contains(ae.Error(), secret) || !strings.Contains(ae.Error(), redact.Placeholder) {
		t.Errorf("the problem quotes the secret: %v", ae)
	}
}
