package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
)

// A request that gets no answer fails after the client's timeout, saying
// so, and a sooner deadline of the context wins.
func TestTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	c, err := client.New(srv.URL, "", client.RetryMax(0), client.Timeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.GetPipeline(t.Context(), "p")
	if err == nil || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Fatalf("GetPipeline of a silent agent: %v, want the timeout named", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the timeout took %v", d)
	}

	slow, err := client.New(srv.URL, "", client.RetryMax(0), client.Timeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := slow.GetPipeline(ctx, "p"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GetPipeline past the context's deadline: %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the context's deadline took %v", d)
	}

	if _, err := client.New(srv.URL, "", client.Timeout(0)); err == nil {
		t.Error("New with a zero timeout succeeded")
	}
}

// An answer that is not the agent's, such as a proxy's HTML error page,
// is quoted (its start only) in the error.
func TestNonJSONAnswer(t *testing.T) {
	t.Parallel()
	page := "<html><body><h1>502 Bad Gateway</h1>" + strings.Repeat("<p>nginx</p>", 200) + "</body></html>"
	c := fakeAgent(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte("<html>login page</html>")) // a 200 that is not JSON
			return
		}
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte(page))
	}, client.RetryMax(0))

	err := c.DeletePipeline(t.Context(), "p")
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadGateway {
		t.Fatalf("DeletePipeline behind a failing proxy: %v, want an *APIError with status 502", err)
	}
	msg := err.Error()
	for _, want := range []string{"502 Bad Gateway", "text/html", "<h1>502 Bad Gateway</h1>", "(" + strconv.Itoa(len(page)) + " bytes)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if len(msg) > 1000 {
		t.Errorf("error is %d bytes long; the page should be cut", len(msg))
	}

	_, err = c.GetPipeline(t.Context(), "p")
	if err == nil || !strings.Contains(err.Error(), "login page") {
		t.Fatalf("GetPipeline of an HTML 200: %v, want the page quoted", err)
	}
}
