package server_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A PUT's secrets_set is ignored: it is not stored, and a PUT that differs
// from the stored connection only by it changes nothing (no pipeline is
// applied again).
func TestPutIgnoresSecretsSet(t *testing.T) {
	a := newAgent(t, "")
	a.mustPut(t, pipeline("p", "local", "t"))
	before := a.engine.count(a.engine.applies, "p")
	body := `{"bootstrap_servers":["127.0.0.1:19092"],"secrets_set":["sasl.password"]}`
	if status, _, answer := raw(t, http.MethodPut, a.url+"/v1/connections/local", testToken, body); status != http.StatusOK {
		t.Fatalf("PUT: %d %s", status, answer)
	}
	if n := a.engine.count(a.engine.applies, "p"); n != before {
		t.Errorf("pipeline p applied %d times after a PUT that only adds secrets_set, want %d", n, before)
	}
	data, err := os.ReadFile(filepath.Join(a.dir, "connections", "local.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "secrets_set") {
		t.Errorf("the stored connection keeps the PUT's secrets_set:\n%s", data)
	}
}
