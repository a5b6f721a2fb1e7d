package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

const (
	testClientID     = "agent id"
	testClientSecret = "s3cret:&=+"
)

// tokenEndpoint is an OAuth token endpoint for the tests: it checks the
// client-credentials request and answers with numbered tokens valid for
// lifetime seconds, or with status when it is set.
type tokenEndpoint struct {
	t        *testing.T
	lifetime int
	status   atomic.Int32
	requests atomic.Int32
}

func (e *tokenEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := e.requests.Add(1)
	id, secret, ok := r.BasicAuth()
	if r.Method != http.MethodPost || !ok {
		e.t.Errorf("request %s without Basic credentials", r.Method)
	}
	// RFC 6749 section 2.3.1: form-encoded, then Basic.
	if id != url.QueryEscape(testClientID) || secret != url.QueryEscape(testClientSecret) {
		e.t.Errorf("Basic credentials %q, %q", id, secret)
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != "kafka" {
		e.t.Errorf("form = %v (%v)", r.PostForm, err)
	}
	w.Header().Set("Content-Type", "application/json")
	if s := e.status.Load(); s != 0 {
		w.WriteHeader(int(s))
		fmt.Fprintf(w, `{"error":"invalid_client","error_description":"bad secret %s"}`, testClientSecret)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("token-%d", n), "token_type": "Bearer",
		"expires_in": e.lifetime})
}

// fakeClock is a settable time for clientCredentials.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func newTestGrant(t *testing.T, lifetime int) (*clientCredentials, *tokenEndpoint, *fakeClock) {
	t.Helper()
	e := &tokenEndpoint{t: t, lifetime: lifetime}
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	src, err := newTokenSource(&spec.OAuth{TokenEndpointURL: srv.URL + "/token", ClientID: testClientID,
		ClientSecret: testClientSecret, Scope: "kafka"})
	if err != nil {
		t.Fatal(err)
	}
	cc := src.(*clientCredentials)
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	cc.now = clock.Now
	return cc, e, clock
}

func mustToken(t *testing.T, src tokenSource, want string) {
	t.Helper()
	got, err := src.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("token = %q, want %q", got, want)
	}
}

func TestClientCredentialsRefresh(t *testing.T) {
	cc, e, clock := newTestGrant(t, 100)
	mustToken(t, cc, "token-1")
	clock.now = clock.now.Add(79 * time.Second)
	mustToken(t, cc, "token-1") // kept until 80% of its lifetime
	clock.now = clock.now.Add(2 * time.Second)
	mustToken(t, cc, "token-2") // refreshed after
	if n := e.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	// A failed refresh keeps the token while it is valid.
	e.status.Store(http.StatusServiceUnavailable)
	clock.now = clock.now.Add(90 * time.Second)
	mustToken(t, cc, "token-2")
	clock.now = clock.now.Add(20 * time.Second)
	_, err := cc.Token(context.Background())
	if err == nil {
		t.Fatal("an expired token and a failing endpoint give no error")
	}
	for _, want := range []string{cc.endpoint, "503 Service Unavailable", "invalid_client", "check sasl.oauth.client_id"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), testClientSecret) {
		t.Errorf("error %q quotes the client secret", err)
	}
	e.status.Store(0)
	mustToken(t, cc, fmt.Sprintf("token-%d", e.requests.Load()+1))
}

func TestClientCredentialsWithoutLifetime(t *testing.T) {
	cc, e, _ := newTestGrant(t, 0)
	mustToken(t, cc, "token-1")
	mustToken(t, cc, "token-2") // not kept
	if n := e.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestClientCredentialsBadAnswers(t *testing.T) {
	for name, body := range map[string]string{"not JSON": "<html>", "no token": `{"token_type":"Bearer"}`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) }))
		cc := &clientCredentials{endpoint: srv.URL, clientID: "id", clientSecret: testClientSecret, http: srv.Client(), now: time.Now}
		_, err := cc.Token(context.Background())
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), srv.URL) {
			t.Errorf("%s: error = %v, want one naming the endpoint", name, err)
		}
	}
}

func TestTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	src, err := newTokenSource(&spec.OAuth{TokenFile: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "sasl.oauth.token_file") {
		t.Errorf("missing file: error = %v", err)
	}
	for _, tok := range []string{"first", "second"} { // read again each time
		if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		mustToken(t, src, tok)
	}
	if err := os.WriteFile(path, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty file: error = %v", err)
	}
	static, err := newTokenSource(&spec.OAuth{Token: "static"})
	if err != nil {
		t.Fatal(err)
	}
	mustToken(t, static, "static")
}

func TestOAuthBearerMechanism(t *testing.T) {
	m, err := newMechanism(context.Background(), &spec.Connection{SASL: &spec.SASL{Mechanism: spec.SASLOAuthBearer, OAuth: &spec.OAuth{Token: "eyJ.a.b"}}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "OAUTHBEARER" {
		t.Errorf("name = %q", m.Name())
	}
	sess, first, err := m.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := "n,,\x01auth=Bearer eyJ.a.b\x01\x01"; string(first) != want {
		t.Errorf("first message = %q, want %q", first, want)
	}
	if done, resp, err := sess.Next(context.Background(), nil); !done || resp != nil || err != nil {
		t.Errorf("accepted: Next = %v, %q, %v", done, resp, err)
	}
	// A refusal: acknowledge the error challenge, then fail.
	sess, _, _ = m.Start(context.Background())
	challenge := []byte(`{"status":"invalid_token"}`)
	if done, resp, err := sess.Next(context.Background(), challenge); done || string(resp) != "\x01" || err != nil {
		t.Errorf("error challenge: Next = %v, %q, %v", done, resp, err)
	}
	if _, _, err := sess.Next(context.Background(), challenge); !errors.Is(err, kafkago.SASLAuthenticationFailed) {
		t.Errorf("second challenge: error = %v", err)
	}
	bad := &oauthBearer{src: staticToken("two words")}
	if _, _, err := bad.Start(context.Background()); err == nil {
		t.Error("a token with a space is sent")
	}
}

func TestAWSMSKIAMSigns(t *testing.T) {
	// The default credential chain, fed by the environment only.
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
	t.Setenv("AWS_SESSION_TOKEN", "session-token")
	t.Setenv("AWS_REGION", "us-east-1")
	m, err := newMechanism(context.Background(), &spec.Connection{SASL: &spec.SASL{Mechanism: spec.SASLAWSMSKIAM, AWSRegion: "eu-west-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "AWS_MSK_IAM" {
		t.Errorf("name = %q", m.Name())
	}
	ctx := sasl.WithMetadata(context.Background(), &sasl.Metadata{Host: "b-1.msk.example.com", Port: 9098})
	_, payload, err := m.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var signed map[string]string
	if err := json.Unmarshal(payload, &signed); err != nil {
		t.Fatalf("payload %q: %v", payload, err)
	}
	for key, want := range map[string]string{
		"version": "2020_10_22", "host": "b-1.msk.example.com", "action": "kafka-cluster:Connect",
		"x-amz-algorithm": "AWS4-HMAC-SHA256", "x-amz-security-token": "session-token",
	} {
		if signed[key] != want {
			t.Errorf("%s = %q, want %q", key, signed[key], want)
		}
	}
	if c := signed["x-amz-credential"]; !strings.HasPrefix(c, "AKIDEXAMPLE/") || !strings.HasSuffix(c, "/eu-west-1/kafka-cluster/aws4_request") {
		t.Errorf("x-amz-credential = %q, want the key id and aws_region", c)
	}
	if len(signed["x-amz-signature"]) != 64 {
		t.Errorf("x-amz-signature = %q", signed["x-amz-signature"])
	}
	if strings.Contains(string(payload), "wJalrXUtnFEMI") {
		t.Error("the payload holds the secret key")
	}

	t.Setenv("AWS_REGION", "")
	if _, err := newMechanism(context.Background(), &spec.Connection{SASL: &spec.SASL{Mechanism: spec.SASLAWSMSKIAM}}); err == nil ||
		!strings.Contains(err.Error(), "sasl.aws_region") {
		t.Errorf("no region: error = %v", err)
	}
}
