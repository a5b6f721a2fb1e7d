//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// nextVersion is the version of the second build buildNext makes.
const nextVersion = "e2e-next"

// nextBuild is the second build of the agent, which buildNext makes once for
// every test that needs it.
var nextBuild struct {
	once sync.Once
	bin  string
	err  error
}

// buildNext builds the agent again with another version string, as the
// next release to upgrade to, beside the first build, and returns the
// binary.
func buildNext(t *testing.T) string {
	t.Helper()
	nextBuild.once.Do(func() {
		nextBuild.bin = filepath.Join(filepath.Dir(env.agentBin), "tributary-agent-next")
		build := exec.Command("go", "build", "-ldflags", "-X main.version="+nextVersion, "-o", nextBuild.bin, "./agent/cmd/tributary-agent")
		build.Dir, build.Env = env.root, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			nextBuild.err = fmt.Errorf("building the next release: %w\n%s", err, out)
		}
	})
	if nextBuild.err != nil {
		t.Fatal(nextBuild.err)
	}
	return nextBuild.bin
}

// restart stops a with SIGTERM and starts bin ("" for the first build) on
// its data folder.
func (a *agent) restart(bin string) {
	a.stop()
	a.bin = bin
	a.start()
}

// checkGraceful fails the test unless a's log says it stopped gracefully
// stops times (after committing what it held) and that the next release
// started nexts times.
func (a *agent) checkGraceful(t *testing.T, stops, nexts int) {
	t.Helper()
	logs, err := os.ReadFile(filepath.Join(a.dataDir, "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(logs), "msg=stopped"); n != stops {
		t.Errorf("agent %s logged %d graceful stops, want %d", a.dataDir, n, stops)
	}
	if n := strings.Count(string(logs), "version="+nextVersion); n != nexts {
		t.Errorf("agent %s: the next release started %d times, want %d", a.dataDir, n, nexts)
	}
}

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
	nextBin := buildNext(t)
	var restarted *agent
	rolling := disruption{times: restarts, pause: time.Second, spread: time.Second, do: func(a *agent, i int) {
		bin, what := nextBin, "the next release"
		if i%2 == 1 {
			bin, what = "", "the first build"
		}
		a.restart(bin)
		a.t.Logf("restart %d: agent stopped with SIGTERM, %s started", i+1, what)
		restarted = a
	}}
	crashPlain(t, 100_000, 5_000, rolling, "")
	restarted.checkGraceful(t, restarts, restarts/2)
}

// TestClusterRollingUpgrade: two agents of a cluster are upgraded one after
// the other, twice over (to the next release, then back), while 60,000
// records are produced to 6 partitions: each is stopped with SIGTERM (it
// commits what it held and leaves), and starts again on its data folder
// while the other runs. Afterwards every (partition, offset) is in the
// table exactly once, and every stop was graceful.
func TestClusterRollingUpgrade(t *testing.T) {
	t.Parallel()
	const total = 60_000
	nextBin := buildNext(t)
	c := newCluster(t)
	c.join()
	c.join()
	topic := uniqueName("e2e-rolling")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0", "--partitions", "6")
	ctx := context.Background()
	api := c.agents[0].client()
	if _, err := api.PutConnection(ctx, &spec.Connection{Name: "kafka", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.PutPipeline(ctx, crashPipeline("kafka", topic)); err != nil {
		t.Fatal(err)
	}
	produced := startPython(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic,
		"--count", fmt.Sprint(total), "--partitions", "6", "--rate", "3000")
	for round, bin := range []string{nextBin, ""} {
		for i, a := range c.agents {
			time.Sleep(3 * time.Second)
			a.restart(bin)
			t.Logf("round %d: agent%d restarted", round+1, i)
		}
	}
	produced()
	st := c.agents[0].waitAtLeast("crash", 0, total, 3*time.Minute)
	checkTable(t, st.Location, "--count", fmt.Sprint(total), "--metadata", "_kafka", "--exactly-once", "--orphans-by-agent")
	for _, a := range c.agents {
		a.checkGraceful(t, 2, 1)
	}
}
