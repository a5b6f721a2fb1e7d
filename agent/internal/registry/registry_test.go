package registry_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registry"
)

const (
	testKey    = "KEY123"
	testSecret = "s3cr3t-do-not-print"
	avroText   = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}`
)

// basic is the Authorization header of key:secret.
func basic(key, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(key+":"+secret))
}

// countRequests makes reg count the requests whose path starts with
// prefix, each after waiting delay, then lets the fake answer them.
func countRequests(reg *srfake.Registry, prefix string, delay time.Duration) *atomic.Int64 {
	var n atomic.Int64
	reg.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, prefix) {
			n.Add(1)
			time.Sleep(delay)
		}
		return false
	})
	return &n
}

// answer makes reg answer every request with status and a registry error.
func answer(reg *srfake.Registry, status int) {
	reg.Intercept(func(w http.ResponseWriter, _ *http.Request) bool {
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error_code":50001,"message":"store is down"}`))
		return true
	})
}

// newClient returns a Client of reg with the test's key and secret.
func newClient(t *testing.T, reg *srfake.Registry, opts ...registry.Option) *registry.Client {
	t.Helper()
	c, err := registry.New(registry.Config{URL: reg.URL(), APIKey: testKey, APISecret: testSecret}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newFake returns a fake registry expecting the test's key and secret,
// with avroText registered as id 7, version 1 of subject orders-value.
func newFake(t *testing.T) *srfake.Registry {
	reg := srfake.New(srfake.WithAuth(basic(testKey, testSecret)))
	t.Cleanup(reg.Close)
	reg.SeedSchema("orders-value", 1, 7, sr.Schema{Schema: avroText})
	return reg
}

// noSecret fails t if err tells the secret, in clear or in the header.
func noSecret(t *testing.T, err error) {
	t.Helper()
	for _, s := range []string{testSecret, base64.StdEncoding.EncodeToString([]byte(testKey + ":" + testSecret))} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error tells the secret %q: %v", s, err)
		}
	}
}

func TestSchemaByIDCaches(t *testing.T) {
	reg := newFake(t)
	requests := countRequests(reg, "/schemas/ids/", 0)
	c := newClient(t, reg)
	want := registry.Schema{ID: 7, Type: "AVRO", Text: avroText}
	for range 3 {
		s, err := c.SchemaByID(t.Context(), 7)
		if err != nil {
			t.Fatal(err)
		}
		if s.ID != want.ID || s.Type != want.Type || s.Text != want.Text || s.Subject != "" || len(s.References) != 0 {
			t.Fatalf("= %+v, want %+v", s, want)
		}
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests for one id, want 1", n)
	}
}

func TestSchemaByIDSharesOneRequest(t *testing.T) {
	reg := newFake(t)
	requests := countRequests(reg, "/schemas/ids/", 50*time.Millisecond)
	c := newClient(t, reg)
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Go(func() {
			<-start
			s, err := c.SchemaByID(t.Context(), 7)
			if err == nil && s.Text != avroText {
				err = errors.New("wrong text " + s.Text)
			}
			errs <- err
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests from 50 callers of one id, want 1", n)
	}
}

func TestSchemaByIDCallerGivesUp(t *testing.T) {
	reg := newFake(t)
	requests := countRequests(reg, "/schemas/ids/", 200*time.Millisecond)
	c := newClient(t, reg)
	type result struct {
		s   registry.Schema
		err error
	}
	patient := make(chan result)
	go func() {
		s, err := c.SchemaByID(t.Context(), 7)
		patient <- result{s, err}
	}()
	// Each caller starts the fetch or joins it; the impatient one gives
	// up, and the fetch goes on for the other.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.SchemaByID(ctx, 7); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "schema id 7 from ") {
		t.Errorf("impatient caller err = %v, want the deadline", err)
	}
	if r := <-patient; r.err != nil || r.s.Text != avroText {
		t.Fatalf("patient caller = %+v, %v", r.s, r.err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestLatest(t *testing.T) {
	reg := newFake(t)
	requests := countRequests(reg, "/subjects/", 0)
	c := newClient(t, reg)
	ttl := newClient(t, reg, registry.WithLatestTTL(time.Hour))
	for _, c := range []*registry.Client{c, ttl} {
		s, err := c.Latest(t.Context(), "orders-value")
		if err != nil || s.ID != 7 || s.Subject != "orders-value" || s.Version != 1 || s.Type != "AVRO" || s.Text != avroText {
			t.Fatalf("= %+v, %v", s, err)
		}
	}
	v2 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"note","type":["null","string"],"default":null}]}`
	reg.SeedSchema("orders-value", 2, 8, sr.Schema{Schema: v2})
	if s, err := c.Latest(t.Context(), "orders-value"); err != nil || s.ID != 8 || s.Version != 2 || s.Text != v2 {
		t.Errorf("without a ttl = %+v, %v; want version 2", s, err)
	}
	if s, err := ttl.Latest(t.Context(), "orders-value"); err != nil || s.ID != 7 {
		t.Errorf("within the ttl = %+v, %v; want the cached version 1", s, err)
	}
	if n := requests.Load(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestReferences(t *testing.T) {
	reg := newFake(t)
	proto := func(text string, refs ...sr.SchemaReference) sr.Schema {
		return sr.Schema{Type: sr.TypeProtobuf, Schema: text, References: refs}
	}
	money := `syntax = "proto3"; package shop; message Money { int64 cents = 1; }`
	line := `syntax = "proto3"; package shop; import "shop/money.proto"; message Line { Money price = 1; }`
	order := `syntax = "proto3"; package shop; import "shop/line.proto"; import "shop/money.proto"; message Order { repeated Line lines = 1; Money total = 2; }`
	reg.SeedSchema("shop/money.proto", 1, 1, proto(money))
	reg.SeedSchema("shop/line.proto", 1, 2, proto(line, sr.SchemaReference{Name: "shop/money.proto", Subject: "shop/money.proto", Version: 1}))
	reg.SeedSchema("shop-orders-value", 1, 3, proto(order,
		sr.SchemaReference{Name: "shop/line.proto", Subject: "shop/line.proto", Version: 1},
		sr.SchemaReference{Name: "shop/money.proto", Subject: "shop/money.proto", Version: 1},
	))
	requests := countRequests(reg, "/subjects/", 0)
	c := newClient(t, reg)
	s, err := c.SchemaByID(t.Context(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if s.Type != "PROTOBUF" || len(s.References) != 2 || s.References[0] != (registry.Reference{Name: "shop/line.proto", Subject: "shop/line.proto", Version: 1}) {
		t.Fatalf("= %+v", s)
	}
	texts, err := c.References(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 2 || texts["shop/line.proto"] != line || texts["shop/money.proto"] != money {
		t.Errorf("= %q", texts)
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("%d requests for two referenced schemas, want 2", n)
	}
	if texts, err := c.References(t.Context(), registry.Schema{}); err != nil || len(texts) != 0 {
		t.Errorf("no references = %q, %v", texts, err)
	}
}

func TestNotFound(t *testing.T) {
	reg := newFake(t)
	c := newClient(t, reg)
	ctx := t.Context()
	for name, call := range map[string]func() error{
		`schema id 99 from ` + reg.URL() + `: not found`: func() error { _, err := c.SchemaByID(ctx, 99); return err },
		`latest schema of subject "nope" from `:          func() error { _, err := c.Latest(ctx, "nope"); return err },
		`schema version 5 of subject "orders-value"`:     func() error { _, err := c.Version(ctx, "orders-value", 5); return err },
		`reference "x.proto": schema version 1 of subject "nope"`: func() error {
			_, err := c.References(ctx, registry.Schema{References: []registry.Reference{{Name: "x.proto", Subject: "nope", Version: 1}}})
			return err
		},
	} {
		err := call()
		if !errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrUnavailable) || !strings.Contains(err.Error(), name) {
			t.Errorf("err = %v, want ErrNotFound and %q", err, name)
		}
	}
}

// TestNotFoundIsRemembered checks that an id the registry does not know is
// not asked for again at once, so that records with made-up ids cost no
// requests, and that a 404 that is not the registry's (no error code: a
// proxy's) is no "not found" but an outage.
func TestNotFoundIsRemembered(t *testing.T) {
	reg := newFake(t)
	n := countRequests(reg, "/schemas/ids/", 0)
	c := newClient(t, reg)
	for range 3 {
		if _, err := c.SchemaByID(t.Context(), 99); !errors.Is(err, registry.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	}
	if got := n.Load(); got != 1 {
		t.Errorf("%d requests for an unknown id asked three times, want 1", got)
	}

	proxy := newFake(t)
	proxy.Intercept(func(w http.ResponseWriter, _ *http.Request) bool {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<html>404 Not Found</html>"))
		return true
	})
	_, err := newClient(t, proxy).SchemaByID(t.Context(), 7)
	if !errors.Is(err, registry.ErrUnavailable) || errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("a 404 without a registry error code: err = %v, want ErrUnavailable", err)
	}
}

func TestRefused(t *testing.T) {
	reg := newFake(t)
	for _, tc := range []struct {
		name string
		cfg  registry.Config
		want string
	}{
		{"wrong secret (403)", registry.Config{URL: reg.URL(), APIKey: testKey, APISecret: testSecret + "x"}, "(HTTP 403): check the API key and secret"},
		{"no key (401)", registry.Config{URL: reg.URL()}, "(HTTP 401): no API key is configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := registry.New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.SchemaByID(t.Context(), 7)
			if !errors.Is(err, registry.ErrRefused) || !strings.Contains(err.Error(), reg.URL()) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrRefused naming %s and %q", err, reg.URL(), tc.want)
			}
			noSecret(t, err)
		})
	}
	t.Run("401 echoing the header", func(t *testing.T) {
		reg := newFake(t)
		reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error_code":401,"message":"bad credentials ` + r.Header.Get("Authorization") + `"}`))
			return true
		})
		_, err := newClient(t, reg).Latest(t.Context(), "orders-value")
		if !errors.Is(err, registry.ErrRefused) || !strings.Contains(err.Error(), "the registry refused the API key (HTTP 401)") {
			t.Fatalf("err = %v, want ErrRefused", err)
		}
		noSecret(t, err)
	})
}

func TestUnavailable(t *testing.T) {
	t.Run("dial fails", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + l.Addr().String()
		l.Close()
		c, err := registry.New(registry.Config{URL: url, APIKey: testKey, APISecret: testSecret})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.SchemaByID(t.Context(), 7)
		if !errors.Is(err, registry.ErrUnavailable) || !strings.Contains(err.Error(), "schema id 7 from "+url) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
		noSecret(t, err)
	})
	t.Run("server error", func(t *testing.T) {
		reg := newFake(t)
		answer(reg, http.StatusServiceUnavailable)
		_, err := newClient(t, reg).Version(t.Context(), "orders-value", 1)
		if !errors.Is(err, registry.ErrUnavailable) || errors.Is(err, registry.ErrNotFound) || !strings.Contains(err.Error(), "HTTP 503: store is down") {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		reg := newFake(t)
		countRequests(reg, "/", 200*time.Millisecond)
		_, err := newClient(t, reg, registry.WithTimeout(20*time.Millisecond)).SchemaByID(t.Context(), 7)
		if !errors.Is(err, registry.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
	})
	t.Run("caller cancels", func(t *testing.T) {
		reg := newFake(t)
		countRequests(reg, "/", 200*time.Millisecond)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(20*time.Millisecond, cancel)
		_, err := newClient(t, reg).Latest(ctx, "orders-value")
		if !errors.Is(err, context.Canceled) || errors.Is(err, registry.ErrUnavailable) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

func TestNewRefusesURL(t *testing.T) {
	for url, want := range map[string]string{
		"https://" + testKey + ":" + testSecret + "@registry:8081": "credentials go in the API key and secret",
		"registry:8081":  "want http:// or https://",
		"ftp://registry": "want http:// or https://",
		"http://":        "and a host",
		"http://%zz/":    "does not parse",
		"https://" + testKey + ":" + testSecret + "@registry/%zz": "does not parse",
		"https://registry/x": "",
	} {
		_, err := registry.New(registry.Config{URL: url})
		if want == "" {
			if err != nil {
				t.Errorf("New(%q) = %v", url, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%q) err = %v, want %q", url, err, want)
			continue
		}
		noSecret(t, err)
	}
}
