package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/server"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestOAuthTokenFileFolders: a connection's sasl.oauth.token_file is
// accepted only inside a folder the agent was given (--oauth-token-dir),
// symbolic links resolved, so that an API client cannot make the agent
// send its own secrets key, or any other file, to a broker as a token.
func TestOAuthTokenFileFolders(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	write := func(dir, name string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("token\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good, secret := write(allowed, "token"), write(outside, "secrets.key")
	link := filepath.Join(allowed, "link")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	conn := func(file string) *spec.Connection {
		return &spec.Connection{Name: "c", BootstrapServers: []string{"127.0.0.1:9093"}, SecurityProtocol: spec.ProtocolSASLSSL,
			SASL: &spec.SASL{Mechanism: spec.SASLOAuthBearer, OAuth: &spec.OAuth{TokenFile: file}}}
	}
	refused := func(t *testing.T, a *agent, file, want string) {
		t.Helper()
		_, err := a.client.PutConnection(t.Context(), conn(file))
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != 422 || len(apiErr.Problems) != 1 ||
			apiErr.Problems[0].Path != "sasl.oauth.token_file" || !strings.Contains(apiErr.Problems[0].Detail, want) {
			t.Errorf("PUT with token_file %s: %v (%+v), want a 422 on sasl.oauth.token_file saying %q", file, err, apiErr, want)
		}
	}

	t.Run("no folder given", func(t *testing.T) {
		refused(t, newAgent(t, ""), good, "start it with --oauth-token-dir")
	})
	a := newAgent(t, "", func(c *server.Config) { c.TokenFileDirs = []string{allowed} })
	if _, err := a.client.PutConnection(t.Context(), conn(good)); err != nil {
		t.Fatalf("a token file in the allowed folder: %v", err)
	}
	refused(t, a, secret, "not in a folder this agent reads OAuth tokens from")
	refused(t, a, link, "not in a folder this agent reads OAuth tokens from")
	refused(t, a, filepath.Join(allowed, "..", filepath.Base(outside), "secrets.key"), "not in a folder")
	refused(t, a, "token", "not an absolute path")
}
