package server_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/server"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/testcerts"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/testlog"
)

// serving is a server answering on a real listener through
// [server.Server.Serve], as the agent runs it.
type serving struct {
	srv  *server.Server
	addr string
	log  *testlog.Buffer
}

// serve starts a server with cfg (its Store, Engine and Logger set here)
// on a loopback port.
func serve(t *testing.T, cfg server.Config) *serving {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	logs := &testlog.Buffer{}
	cfg.Store, cfg.Engine = st, newFakeEngine()
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return &serving{srv: srv, addr: ln.Addr().String(), log: logs}
}

// getStatus sends GET path to addr over a new connection with token (none
// when "") and returns the status, failing after a second.
func getStatus(t *testing.T, hc *http.Client, url, token string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// freshClient makes every request on a new connection, giving up after a
// second.
func freshClient(tr *http.Transport) *http.Client {
	if tr == nil {
		tr = &http.Transport{}
	}
	tr.DisableKeepAlives = true
	return &http.Client{Transport: tr, Timeout: time.Second}
}

// slowClient connects to addr, sends head, then one byte of trickle every
// 50 ms, and reports on closed when the server closed the connection.
func slowClient(t *testing.T, addr, head string, trickle byte, closed chan<- time.Time, stop <-chan struct{}) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		closed <- time.Time{}
		return
	}
	if _, err := io.WriteString(c, head); err != nil {
		t.Error(err)
	}
	go func() {
		_, _ = io.Copy(io.Discard, c) // until the server closes it (or stop)
		closed <- time.Now()
	}()
	go func() {
		defer c.Close()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte{trickle}); err != nil {
					<-stop
					return
				}
			}
		}
	}()
}

// slowClients starts n slowClient(t, addr, head, trickle), stopped at the
// end of t, and returns when they started and the channel of their reports.
func slowClients(t *testing.T, n int, addr, head string, trickle byte) (time.Time, <-chan time.Time) {
	t.Helper()
	closed, stop := make(chan time.Time, n), make(chan struct{})
	t.Cleanup(func() { close(stop) })
	start := time.Now()
	for range n {
		slowClient(t, addr, head, trickle, closed, stop)
	}
	return start, closed
}

// awaitClosed waits for n reports on closed and returns the latest, failing
// when they do not all come within limit.
func awaitClosed(t *testing.T, closed <-chan time.Time, n int, limit time.Duration) time.Time {
	t.Helper()
	deadline := time.After(limit)
	var last time.Time
	for i := range n {
		select {
		case at := <-closed:
			if at.After(last) {
				last = at
			}
		case <-deadline:
			t.Fatalf("after %v, the server closed %d of %d slow connections", limit, i, n)
		}
	}
	return last
}

// Slow clients cannot take the agent down: an unauthenticated request is
// answered 401 before its body is read, and its connection closed at once
// however slowly the body comes; 100 clients sending their headers a byte
// at a time hold no more than the connection cap, are closed by the header
// timeout, and meanwhile /healthz and an authenticated request answer.
func TestSlowClients(t *testing.T) {
	const (
		slow    = 100
		maxConn = 16
	)
	timeouts := server.Timeouts{ReadHeader: 3 * time.Second, Read: 3 * time.Second, Write: 3 * time.Second, Idle: 3 * time.Second}
	s := serve(t, server.Config{Tokens: []string{testToken}, MaxConnections: maxConn, Timeouts: timeouts})
	base := "http://" + s.addr

	t.Run("unauthenticated body is not read", func(t *testing.T) {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// The headers promise 100 kB that never come.
		if _, err := io.WriteString(c, "PUT /v1/connections/x HTTP/1.1\r\nHost: agent\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("no answer before the body: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
			t.Fatalf("status %d, close %v; want 401 and the connection closed", resp.StatusCode, resp.Close)
		}
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Fatalf("read after the 401: %v, want EOF (the server closed the connection)", err)
		}
	})

	t.Run("slow unauthenticated bodies", func(t *testing.T) {
		start, closed := slowClients(t, slow, s.addr, "PUT /v1/pipelines/p HTTP/1.1\r\nHost: agent\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n", ' ')
		// Much sooner than the read timeout: right after the 401.
		last := awaitClosed(t, closed, slow, timeouts.ReadHeader)
		t.Logf("%d slow bodies closed within %v", slow, last.Sub(start))
	})

	t.Run("slow headers", func(t *testing.T) {
		start, closed := slowClients(t, slow, s.addr, "GET /v1/pipelines HTTP/1.1\r\nHost: agent\r\nX-Slow: ", 'a')
		// The cap closed all but maxConn of them already.
		evicted := awaitClosed(t, closed, slow-maxConn, 2*time.Second)
		t.Logf("%d slow header senders evicted within %v", slow-maxConn, evicted.Sub(start))
		hc := freshClient(nil)
		if got := getStatus(t, hc, base+"/healthz", ""); got != http.StatusOK {
			t.Fatalf("/healthz with %d slow clients: %d", slow, got)
		}
		if got := getStatus(t, hc, base+"/v1/pipelines", testToken); got != http.StatusOK {
			t.Fatalf("authenticated GET with %d slow clients: %d", slow, got)
		}
		// The header timeout closes the rest (the two requests above
		// evicted two more).
		last := awaitClosed(t, closed, maxConn, timeouts.ReadHeader+2*time.Second)
		if d := last.Sub(start); d < timeouts.ReadHeader/2 {
			t.Errorf("the last slow header sender was closed after %v, before the header timeout could close it", d)
		}
	})

	if got := getStatus(t, freshClient(nil), base+"/healthz", ""); got != http.StatusOK {
		t.Fatalf("/healthz after the slow clients: %d", got)
	}
}

// The request log names the token a request used by its fingerprint and
// never contains a token; every token of the set is accepted, and
// SetTokens rotates them.
func TestTokens(t *testing.T) {
	old, next := testToken, strings.Repeat("n", server.MinTokenLength)
	s := serve(t, server.Config{Tokens: []string{old, next}})
	url := "http://" + s.addr + "/v1/pipelines"
	hc := freshClient(nil)
	for _, tok := range []string{old, next} {
		if got := getStatus(t, hc, url, tok); got != http.StatusOK {
			t.Fatalf("token %s: %d", server.TokenFingerprint(tok), got)
		}
	}
	logs := s.log.String()
	for _, tok := range []string{old, next} {
		if fp := "token_sha256=" + server.TokenFingerprint(tok); !strings.Contains(logs, fp) {
			t.Errorf("the request log lacks %s:\n%s", fp, logs)
		}
		if strings.Contains(logs, tok) {
			t.Errorf("the log contains a token:\n%s", logs)
		}
	}

	if err := s.srv.SetTokens([]string{next}); err != nil {
		t.Fatal(err)
	}
	if got := getStatus(t, hc, url, old); got != http.StatusUnauthorized {
		t.Errorf("the removed token: %d, want 401", got)
	}
	if got := getStatus(t, hc, url, next); got != http.StatusOK {
		t.Errorf("the kept token: %d", got)
	}
	const short = "tiny-secret"
	for _, bad := range [][]string{nil, {next, short}} {
		if err := s.srv.SetTokens(bad); err == nil {
			t.Errorf("SetTokens(%d tokens, one short or none) succeeded", len(bad))
		} else if strings.Contains(err.Error(), short) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
	if got := getStatus(t, hc, url, next); got != http.StatusOK {
		t.Errorf("after refused changes, the kept token: %d", got)
	}

	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.New(server.Config{Store: st, Engine: newFakeEngine(), Tokens: []string{"0123456789"}}); err == nil ||
		!strings.Contains(err.Error(), "shorter than the minimum of 32") {
		t.Errorf("New with a 10-byte token: %v, want it refused", err)
	}
}

// Serve speaks HTTPS with Config.TLS, and requires a client certificate
// signed by the configured CA when the configuration asks for one.
func TestServeTLS(t *testing.T) {
	ca, err := testcerts.NewCA("agent CA")
	if err != nil {
		t.Fatal(err)
	}
	serverPair, err := ca.Issue(testcerts.Loopback("agent"))
	if err != nil {
		t.Fatal(err)
	}
	clientPair, err := ca.Issue(testcerts.Leaf{CommonName: "terraform", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	other, err := testcerts.NewCA("other CA")
	if err != nil {
		t.Fatal(err)
	}
	strangerPair, err := other.Issue(testcerts.Leaf{CommonName: "stranger", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	keyPair := func(p *testcerts.Pair) tls.Certificate {
		c, err := tls.X509KeyPair(p.CertPEM, p.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	clientCAs := x509.NewCertPool()
	clientCAs.AddCert(ca.Cert)
	s := serve(t, server.Config{Tokens: []string{testToken}, TLS: &tls.Config{
		Certificates: []tls.Certificate{keyPair(serverPair)},
		ClientCAs:    clientCAs, ClientAuth: tls.RequireAndVerifyClientCert,
	}})
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	client := func(certs ...tls.Certificate) *http.Client {
		return freshClient(&http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}})
	}
	base := "https://" + s.addr

	if got := getStatus(t, client(keyPair(clientPair)), base+"/v1/pipelines", testToken); got != http.StatusOK {
		t.Fatalf("HTTPS with a client certificate: %d", got)
	}
	for name, hc := range map[string]*http.Client{
		"no client certificate":         client(),
		"a certificate of another CA":   client(keyPair(strangerPair)),
		"plain HTTP to the HTTPS port":  freshClient(nil),
		"a client that trusts no agent": freshClient(&http.Transport{TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{keyPair(clientPair)}}}),
	} {
		u := base + "/healthz"
		if hc.Transport.(*http.Transport).TLSClientConfig == nil {
			u = "http://" + s.addr + "/healthz"
		}
		resp, err := hc.Get(u)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Errorf("%s: /healthz answered 200, want the connection refused", name)
			}
		}
	}
}

// A connection whose request is being handled (here: an authenticated
// request whose body comes slowly) is not evicted at the cap; a new
// connection waits for a place, and the read timeout bounds that wait.
func TestBusyConnectionsAreNotEvicted(t *testing.T) {
	const busy = 2
	timeouts := server.Timeouts{ReadHeader: time.Second, Read: 1500 * time.Millisecond, Write: 3 * time.Second, Idle: 3 * time.Second}
	s := serve(t, server.Config{Tokens: []string{testToken}, MaxConnections: busy, Timeouts: timeouts})
	closed, stop := make(chan time.Time, busy), make(chan struct{})
	defer close(stop)
	start := time.Now()
	for range busy {
		slowClient(t, s.addr, "PUT /v1/connections/c HTTP/1.1\r\nHost: agent\r\nAuthorization: Bearer "+testToken+
			"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", ' ', closed, stop)
	}
	time.Sleep(200 * time.Millisecond) // both handlers run
	hc := freshClient(nil)
	hc.Timeout = 5 * time.Second
	if got := getStatus(t, hc, "http://"+s.addr+"/healthz", ""); got != http.StatusOK {
		t.Fatalf("/healthz: %d", got)
	}
	waited := time.Since(start)
	last := awaitClosed(t, closed, busy, 2*time.Second)
	if d := last.Sub(start); d < timeouts.Read*2/3 {
		t.Errorf("a busy connection was closed after %v, before its read timeout (%v): evicted", d, timeouts.Read)
	}
	if waited < timeouts.Read*2/3 {
		t.Errorf("/healthz answered after %v, while every place was busy until the read timeout (%v)", waited, timeouts.Read)
	}
}

// TestAnswersAreWholeWhenFlushed: every answer carries its Content-Length
// and is flushed before its connection stops counting as busy, so the
// connection limit can evict the connection right after without cutting
// the answer short (a chunked answer would still owe its last chunk).
func TestAnswersAreWholeWhenFlushed(t *testing.T) {
	s := serve(t, server.Config{Tokens: []string{testToken}})
	for _, c := range []struct{ path, token string }{
		{"/openapi.json", ""}, // larger than net/http buffers before it chunks
		{"/healthz", ""},
		{"/metrics", testToken},
		{"/v1/pipelines", testToken},
		{"/v1/pipelines/missing", testToken}, // a problem
		{"/v1/pipelines", ""},                // 401
	} {
		status, header, body := raw(t, http.MethodGet, "http://"+s.addr+c.path, c.token, "")
		if got := header.Get("Content-Length"); got != strconv.Itoa(len(body)) {
			t.Errorf("GET %s: %d with Content-Length %q and a body of %d bytes", c.path, status, got, len(body))
		}
	}
}
