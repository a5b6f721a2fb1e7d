package redact_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/redact"
)

func TestString(t *testing.T) {
	r := redact.New()
	r.Add("hunter2-password", "abc", "", "hunter2-password-longer", "p@ss w\"rd")
	for _, tc := range []struct{ in, want string }{
		{"SASL authentication failed for hunter2-password", "SASL authentication failed for [redacted]"},
		// The longer secret is scrubbed whole, not as its prefix plus a tail.
		{"got hunter2-password-longer!", "got [redacted]!"},
		// Too short to scrub: the text stays readable.
		{"abc def", "abc def"},
		// Quoted by %q, by JSON, and URL-encoded.
		{fmt.Sprintf("bad value %q", "p@ss w\"rd"), "bad value \"[redacted]\""},
		{`{"password":"p@ss w\"rd"}`, `{"password":"[redacted]"}`},
		{"https://user:p%40ss+w%22rd@host", "https://user:[redacted]@host"},
		{"no secret here", "no secret here"},
	} {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var none *redact.Redactor
	if got := none.String("hunter2-password"); got != "hunter2-password" {
		t.Errorf("nil Redactor changed the text: %q", got)
	}
	if got := redact.New().String("hunter2-password"); got != "hunter2-password" {
		t.Errorf("empty Redactor changed the text: %q", got)
	}
}

// A secret learned once stays scrubbed after later calls to Add.
func TestAddKeepsOldSecrets(t *testing.T) {
	r := redact.New()
	r.Add("old-secret")
	r.Add("new-secret")
	if got := r.String("old-secret new-secret"); got != "[redacted] [redacted]" {
		t.Errorf("String = %q", got)
	}
}

type loginConfig struct{ User, Password string }

func TestHandler(t *testing.T) {
	r := redact.New()
	var buf bytes.Buffer
	log := slog.New(redact.NewHandler(slog.NewTextHandler(&buf, nil), r))
	r.Add("s3cr3t-value")
	log = log.With("conn", "token s3cr3t-value")
	log.WithGroup("g").Error("dial failed with s3cr3t-value",
		"err", errors.New("sasl: password s3cr3t-value rejected"),
		"cfg", loginConfig{User: "u", Password: "s3cr3t-value"},
		slog.Group("inner", "v", "s3cr3t-value"),
		"n", 42,
		"plain", loginConfig{User: "u", Password: "other"},
	)
	out := buf.String()
	if strings.Contains(out, "s3cr3t-value") {
		t.Fatalf("the secret is in the log line: %s", out)
	}
	for _, want := range []string{`msg="dial failed with [redacted]"`, `conn="token [redacted]"`, `g.err="sasl: password [redacted] rejected"`,
		`g.cfg="{User:u Password:[redacted]}"`, `g.inner.v=[redacted]`, `g.n=42`, `g.plain="{User:u Password:other}"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log line lacks %s: %s", want, out)
		}
	}
}

// Secrets are added while other goroutines scrub.
func TestConcurrentAddAndString(t *testing.T) {
	r := redact.New()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			r.Add(fmt.Sprintf("secret-%03d", i))
		}
	}()
	for range 1000 {
		_ = r.String("text with secret-050 in it")
	}
	<-done
	if got := r.String("secret-099"); got != redact.Placeholder {
		t.Errorf("String = %q after every Add", got)
	}
}
