//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRollingRestartExactlyOnce stops the agent with SIGTERM ten times
// while 100,000 records are produced, and starts it again each time on the
// same data folder, as a rolling upgrade does: every other time with a
// second build of the agent whose version says it is the next release, the
// others with the first build again (a downgrade within the format).
// Afterwards every (partition, offset) is in the table exactly once, every
// stop was graceful (the agent logged it stopped, after committing what it
// held), and the second build did run.
func TestRollingRestartExactlyOnce(t *testing.T) {
	t.Parallel()
	const restarts = 10
	next := filepath.Join(t.TempDir(), "tributary-agent-next")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=e2e-next", "-o", next, "./agent/cmd/tributary-agent")
	build.Dir, build.Env = env.root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the next release: %v\n%s", err, out)
	}
	bins := map[string]string{next: "the next release", "": "the first build"}
	var restarted *agent
	rolling := disruption{times: restarts, pause: time.Second, spread: time.Second, do: func(a *agent, i int) {
		a.stop()
		a.bin = next
		if i%2 == 1 {
			a.bin = ""
		}
		a.start()
		a.t.Logf("restart %d: agent stopped with SIGTERM, %s started", i+1, bins[a.bin])
		restarted = a
	}}
	crashPlain(t, 100_000, 5_000, rolling, "")
	logs, err := os.ReadFile(filepath.Join(restarted.dataDir, "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(logs), "msg=stopped"); n != restarts {
		t.Errorf("the agent logged %d graceful stops, want %d", n, restarts)
	}
	if n := strings.Count(string(logs), "version=e2e-next"); n != restarts/2 {
		t.Errorf("the next release started %d times, want %d", n, restarts/2)
	}
}
