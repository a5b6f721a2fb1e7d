// Package deploytest holds what the tests of deploy/helm and deploy/systemd
// share: the agent binary they run with the command line a chart or a unit
// gives it, and the throw-away certificates it serves HTTPS with.
package deploytest

import (
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

const (
	// AgentEnv names a prebuilt agent binary to run instead of building
	// one, as for the provider's tests.
	AgentEnv = "TRIBUTARY_TEST_AGENT"
	module   = "github.com/tributary-io/terraform-provider-tributary"
)

// Agent returns $TRIBUTARY_TEST_AGENT when set, else builds the agent into
// dir and returns its path. It is built with CGO_ENABLED=0, as the image's
// agent and as the agent command's own tests build it (in the same step of
// make test, so that one build serves them all from the build cache).
func Agent(dir string) (string, error) {
	if bin := os.Getenv(AgentEnv); bin != "" {
		return bin, nil
	}
	bin := filepath.Join(dir, "tributary-agent")
	build := exec.Command("go", "build", "-o", bin, module+"/agent/cmd/tributary-agent")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the agent: %w\n%s", err, out)
	}
	return bin, nil
}

// Certs are the test CA's certificate and a server certificate it signed
// for localhost, 127.0.0.1 and ::1, with its key, in PEM; Pool trusts the
// CA.
type Certs struct {
	CAPEM, CertPEM, KeyPEM []byte
	Pool                   *x509.CertPool
}

// NewCerts writes a throw-away set with agent/cmd/testcerts, the test
// services' certificates (the agent's internal testcerts package is out of
// reach here), and reads the CA and the server's pair.
func NewCerts(t testing.TB) Certs {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "run", module+"/agent/cmd/testcerts", "-dir", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("making test certificates: %v\n%s", err, out)
	}
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	c := Certs{CAPEM: read("ca.pem"), CertPEM: read("server.pem"), KeyPEM: read("server-key.pem"), Pool: x509.NewCertPool()}
	if !c.Pool.AppendCertsFromPEM(c.CAPEM) {
		t.Fatal("ca.pem holds no certificate")
	}
	return c
}
