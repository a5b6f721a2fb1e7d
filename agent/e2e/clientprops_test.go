//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestClientPropertiesInEffect reads a topic with client_properties and
// finds them in the broker's log of the requests it served (tools/kafka.sh
// logs the requests of client ids starting with tributary-e2e-): the
// table's fetches carry its client.id, fetch.max.wait.ms, fetch.min.bytes
// and max.partition.fetch.bytes.
func TestClientPropertiesInEffect(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	topic := uniqueName("e2e-props")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0", "--partitions", "1")
	id := uniqueName("tributary-e2e-props")
	p := lossPipeline("props", topic, true, func(ko *spec.KafkaOptions) {
		ko.ClientProperties = map[string]string{"client.id": id, "fetch.max.wait.ms": "1234", "fetch.min.bytes": "7",
			"max.partition.fetch.bytes": "65000"}
	})
	putPipeline(t, a, p)
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "100", "--partitions", "1")
	a.waitRows(p.Name, 0, 100, time.Minute)

	requests := filepath.Join(filepath.Dir(kafkaTool(t, "logs")), "request.log")
	want := []string{`"clientId":"` + id + `"`, `"requestApiKey":1,`, `"maxWaitMs":1234,`, `"minBytes":7,`, `"partitionMaxBytes":65000`}
	var log []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		log, _ = os.ReadFile(requests)
		for _, line := range strings.Split(string(log), "\n") {
			if containsAll(line, want) {
				t.Logf("the broker served: %.400s", line)
				return
			}
		}
	}
	t.Fatalf("%s has no fetch request with %v; the last of it:\n%.4000s", requests, want, tail(log, 4000))
}

// kafkaTool runs tools/kafka.sh with args against the test broker and
// returns its output, trimmed.
func kafkaTool(t *testing.T, args ...string) string {
	t.Helper()
	_, port, _ := strings.Cut(env.bootstrap, ":")
	cmd := exec.Command(filepath.Join(env.root, "tools", "kafka.sh"), args...)
	cmd.Env = append(os.Environ(), "KAFKA_PORT="+port)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tools/kafka.sh %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// tail returns the last n bytes of b at most.
func tail(b []byte, n int) []byte { return b[max(len(b)-n, 0):] }
