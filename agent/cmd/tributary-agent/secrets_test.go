package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
)

const testPassword = "agent-test-pa55word"

// writeKeyFile writes a random key in base64 to a new file of the mode.
func writeKeyFile(t *testing.T, mode os.FileMode) string {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "secrets.key")
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// putConnection stores a connection with a SASL password through the API.
func putConnection(t *testing.T, url string) {
	t.Helper()
	body := `{"name":"secure","bootstrap_servers":["127.0.0.1:1"],"security_protocol":"SASL_PLAINTEXT",` +
		`"sasl":{"mechanism":"PLAIN","username":"ingest","password":"` + testPassword + `"}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, url+"/v1/connections/secure", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT connection: %d", resp.StatusCode)
	}
}

// runServe runs serve on dir with args until it exits, which it must do
// with code 1, and returns its output.
func runServe(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, agentBin, append([]string{"serve", "--listen", "127.0.0.1:0", "--insecure-no-auth", "--data-dir", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit code %d (%v), want 1; output:\n%s", code, err, out)
	}
	return string(out)
}

// TestSecretsKeyFile: with --secrets-key-file, a connection's password is
// stored encrypted and never logged; another key, or a key file others may
// read, stops the agent with a message naming the file.
func TestSecretsKeyFile(t *testing.T) {
	dir := t.TempDir()
	key := writeKeyFile(t, 0o600)
	p := start(t, []string{"serve", "--listen", "127.0.0.1:0", "--insecure-no-auth", "--data-dir", dir, "--secrets-key-file", key,
		"--log-level", "debug"})
	putConnection(t, p.waitFor(t, listeningRE))
	p.stop(t, syscall.SIGTERM)
	stored, err := os.ReadFile(filepath.Join(dir, "connections", "secure.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored), testPassword) || !strings.Contains(string(stored), `"password": "enc:v1:`) {
		t.Errorf("the stored connection does not hold the password encrypted:\n%s", stored)
	}
	if strings.Contains(p.stderr.String(), testPassword) {
		t.Errorf("the log holds the password:\n%s", p.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, store.DefaultKeyFile)); err == nil {
		t.Errorf("a key was generated in the data folder although --secrets-key-file was given")
	}

	wrong := writeKeyFile(t, 0o600)
	out := runServe(t, dir, "--secrets-key-file", wrong)
	for _, want := range []string{wrong, filepath.Join(dir, "connections", "secure.json"), "sasl.password cannot be decrypted"} {
		if !strings.Contains(out, want) {
			t.Errorf("output with the wrong key lacks %q:\n%s", want, out)
		}
	}
	loose := writeKeyFile(t, 0o644)
	if out := runServe(t, dir, "--secrets-key-file", loose); !strings.Contains(out, "chmod 600 "+loose) {
		t.Errorf("output with a key file others may read does not say to restrict it:\n%s", out)
	}
}

// TestSecretsKeyGenerated: without --secrets-key-file, serve generates a
// key in the data folder, mode 0600, and says so.
func TestSecretsKeyGenerated(t *testing.T) {
	dir := t.TempDir()
	p := start(t, []string{"serve", "--listen", "127.0.0.1:0", "--insecure-no-auth", "--data-dir", dir})
	putConnection(t, p.waitFor(t, listeningRE))
	p.stop(t, syscall.SIGTERM)
	key := filepath.Join(dir, store.DefaultKeyFile)
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("generated key file: %v, %v; want mode 0600", fi, err)
	}
	if !strings.Contains(p.stderr.String(), "generated the key that encrypts the connections' secrets") {
		t.Errorf("the log does not say a key was generated:\n%s", p.stderr)
	}
}

// TestOpenStateScrubsLog: the logger openState leaves in the options
// scrubs what the returned redactor knows.
func TestOpenStateScrubsLog(t *testing.T) {
	var buf bytes.Buffer
	o := agentOptions{dataDir: t.TempDir(), log: slog.New(slog.NewTextHandler(&buf, nil))}
	_, secrets, err := openState(&o)
	if err != nil {
		t.Fatal(err)
	}
	secrets.Add(testPassword)
	o.log.Error("kafka said "+testPassword, "err", "bad password "+testPassword)
	if strings.Contains(buf.String(), testPassword) || !strings.Contains(buf.String(), `err="bad password [redacted]"`) {
		t.Errorf("log line not scrubbed: %s", buf.String())
	}
}
