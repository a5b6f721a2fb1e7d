//go:build e2e

// Package e2e runs Tributary end to end: the real agent binary, the real
// Terraform CLI with the provider binary, a real Kafka broker (tools/kafka.sh,
// at KAFKA_BOOTSTRAP), object store servers (tools/s3.sh, SeaweedFS, its
// bucket TRIBUTARY_S3_BUCKET at AWS_ENDPOINT_URL; tools/gcs.sh,
// fake-gcs-server, its bucket TRIBUTARY_GCS_BUCKET; tools/azure.sh,
// Azurite, its container TRIBUTARY_AZURE_CONTAINER), records produced by
// Confluent's Python client and tables read back by delta-rs, DuckDB and
// pyarrow (the venv at TRIBUTARY_PY). `make test` sets everything up; run
// alone with
//
//	make tools kafka-up
//	eval "$(S3_BUCKETS=tributary-e2e tools/s3.sh up)"
//	eval "$(GCS_BUCKETS=tributary-e2e tools/gcs.sh up)"
//	eval "$(AZURE_CONTAINERS=tributary-e2e tools/azure.sh up)"
//	KAFKA_BOOTSTRAP=127.0.0.1:19092 TRIBUTARY_PY=$PWD/.tools/py/bin/python TRIBUTARY_S3_BUCKET=tributary-e2e \
//	  TRIBUTARY_GCS_BUCKET=tributary-e2e TRIBUTARY_AZURE_CONTAINER=tributary-e2e \
//	  go test -tags e2e -count=1 -v ./agent/e2e/
//
// The tests on an object store whose server is not configured are skipped
// (see objstoretest.Root).
package e2e

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/objstoretest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// env is what every test needs, set up once by TestMain.
var env struct {
	bootstrap string
	python    string
	terraform string
	agentBin  string
	pluginDir string // holds terraform-provider-tributary for dev_overrides
	root      string
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	env.bootstrap = os.Getenv("KAFKA_BOOTSTRAP")
	env.python = os.Getenv("TRIBUTARY_PY")
	if env.bootstrap == "" || env.python == "" {
		fmt.Fprintln(os.Stderr, "e2e: set KAFKA_BOOTSTRAP and TRIBUTARY_PY (make test does); skipping")
		return 0
	}
	wd, _ := os.Getwd()
	env.root = filepath.Clean(filepath.Join(wd, "..", ".."))
	env.terraform = os.Getenv("TRIBUTARY_TERRAFORM")
	if env.terraform == "" {
		env.terraform = filepath.Join(env.root, ".tools", "bin", "terraform")
	}
	dir, err := os.MkdirTemp("", "tributary-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	env.agentBin = filepath.Join(dir, "tributary-agent")
	env.pluginDir = filepath.Join(dir, "plugins")
	for _, b := range []struct{ out, pkg string }{
		{env.agentBin, "./agent/cmd/tributary-agent"},
		{filepath.Join(env.pluginDir, "terraform-provider-tributary"), "."},
	} {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		cmd.Dir, cmd.Stdout, cmd.Stderr = env.root, os.Stderr, os.Stderr
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n", b.pkg, err)
			return 1
		}
	}
	return m.Run()
}

// uniqueName returns prefix plus a random suffix, for topics and tables
// that must not collide with earlier runs on the same broker.
func uniqueName(prefix string) string {
	b := make([]byte, 4)
	rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

// storeRoot returns a new root in the test bucket of the object store kind
// (one of objstoretest.Kinds), as the agent takes it, or skips the test when
// that server is not configured (see objstoretest.Root).
func storeRoot(t *testing.T, kind string) string {
	t.Helper()
	return objstoretest.Root(t, kind, uniqueName(t.Name()))
}

// forEachStore runs test as a parallel subtest on each object store of
// objstoretest.Kinds, with a new root in its test bucket.
func forEachStore(t *testing.T, test func(t *testing.T, root string)) {
	for _, kind := range objstoretest.Kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			test(t, storeRoot(t, kind))
		})
	}
}

// agent is a running tributary-agent serve process.
type agent struct {
	t         *testing.T
	dataDir   string
	warehouse string
	flags     []string // more serve flags
	environ   []string // more environment variables, NAME=VALUE
	token     string
	endpoint  string
	// command, when set, makes the agent's process (a fresh one for each
	// start) in place of the binary serve with the flags above; the
	// agent must still print where it listens on stdout.
	command func() *exec.Cmd
	cmd     *exec.Cmd
	exited  chan struct{}
	// bin is the binary start runs; "" runs env.agentBin.
	bin string
}

// startAgent starts an agent on dataDir (kept across restarts) on a free
// port and waits until it is listening.
func startAgent(t *testing.T, dataDir string) *agent {
	t.Helper()
	return startAgentOn(t, dataDir, filepath.Join(dataDir, "warehouse"))
}

// startAgentOn starts an agent like startAgent, writing its tables under
// warehouse, which other agents may share, with more serve flags.
func startAgentOn(t *testing.T, dataDir, warehouse string, flags ...string) *agent {
	t.Helper()
	return startAgentEnv(t, dataDir, warehouse, nil, flags...)
}

// startAgentEnv starts an agent like startAgentOn, with the environment
// variables of environ (NAME=VALUE) over those the test process has. The
// tests run in parallel, so an agent's environment is set here, never with
// t.Setenv, which every agent started meanwhile would inherit.
func startAgentEnv(t *testing.T, dataDir, warehouse string, environ []string, flags ...string) *agent {
	t.Helper()
	a := &agent{t: t, dataDir: dataDir, warehouse: warehouse, flags: flags, environ: environ,
		token: uniqueName("e2e-token") + strings.Repeat("0", 32)}
	tokenFile := filepath.Join(dataDir, "token")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(tokenFile); err == nil {
		a.token = strings.TrimSpace(string(b))
	} else if err := os.WriteFile(tokenFile, []byte(a.token), 0o600); err != nil {
		t.Fatal(err)
	}
	a.start()
	t.Cleanup(a.stop)
	return a
}

var listeningRE = regexp.MustCompile(`listening on (http://\S+)`)

func (a *agent) start() {
	t := a.t
	t.Helper()
	if a.command != nil {
		a.cmd = a.command()
	} else {
		a.cmd = exec.Command(cmp.Or(a.bin, env.agentBin), append([]string{"serve", "--listen", "127.0.0.1:0",
			"--data-dir", a.dataDir, "--warehouse", a.warehouse,
			"--token-file", filepath.Join(a.dataDir, "token")}, a.flags...)...)
		if a.environ != nil {
			a.cmd.Env = append(os.Environ(), a.environ...) // the last of a name wins
		}
	}
	logFile, err := os.OpenFile(filepath.Join(a.dataDir, "agent.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := a.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	a.cmd.Stderr = logFile
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a.exited = make(chan struct{})
	go func() { a.cmd.Wait(); logFile.Close(); close(a.exited) }()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case a.endpoint = <-found:
	case <-a.exited:
		t.Fatalf("agent exited at start; log:\n%s", a.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("agent did not start listening within 30s; log:\n%s", a.log())
	}
}

// kill stops the agent with SIGKILL: no flush, no commit, no cleanup.
func (a *agent) kill() {
	a.cmd.Process.Signal(syscall.SIGKILL)
	<-a.exited
}

// stop stops the agent gracefully, with SIGKILL after 30s.
func (a *agent) stop() {
	select {
	case <-a.exited:
		return
	default:
	}
	a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.exited:
	case <-time.After(30 * time.Second):
		a.kill()
	}
}

func (a *agent) log() string {
	b, _ := os.ReadFile(filepath.Join(a.dataDir, "agent.log"))
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

func (a *agent) client() *client.Client {
	c, err := client.New(a.endpoint, a.token)
	if err != nil {
		a.t.Fatal(err)
	}
	return c
}

// waitRows polls the pipeline until table idx has committed want rows, or
// fails the test after timeout.
func (a *agent) waitRows(pipeline string, idx int, want int64, timeout time.Duration) spec.TableStatus {
	a.t.Helper()
	last, reached := a.pollRows(pipeline, idx, want, timeout)
	if !reached {
		a.t.Fatalf("table has %d rows after %s, want %d; status %+v\nagent log:\n%s", last.Rows, timeout, want, last, a.log())
	}
	if last.Rows > want {
		a.t.Fatalf("table has %d rows, want %d", last.Rows, want)
	}
	return last
}

// pollRows polls the pipeline until table idx has committed at least want
// rows or timeout passes, and returns the table's last status and whether
// it got there. It fails the test if the pipeline fails.
func (a *agent) pollRows(pipeline string, idx int, want int64, timeout time.Duration) (spec.TableStatus, bool) {
	a.t.Helper()
	return a.pollTable(pipeline, idx, timeout, func(p *spec.PipelineStatus, ts spec.TableStatus) bool {
		if ts.Rows >= want {
			return true
		}
		if p.State == spec.StateFailed {
			a.t.Fatalf("pipeline %s failed: %+v", pipeline, *p)
		}
		return false
	})
}

// pollTable polls the pipeline until done holds for its status and that of
// its table idx, or timeout passes, and returns the table's last status and
// whether done held.
func (a *agent) pollTable(pipeline string, idx int, timeout time.Duration, done func(*spec.PipelineStatus, spec.TableStatus) bool) (spec.TableStatus, bool) {
	a.t.Helper()
	deadline := time.Now().Add(timeout)
	var last spec.TableStatus
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		p, err := a.client().GetPipeline(ctx, pipeline)
		cancel()
		if err == nil && len(p.Status.Tables) > idx {
			last = p.Status.Tables[idx]
			if done(&p.Status, last) {
				return last, true
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return last, false
}

// python runs a script from testdata with the venv's interpreter.
func python(t *testing.T, script string, args ...string) string {
	t.Helper()
	cmd := exec.Command(env.python, append([]string{filepath.Join("testdata", script)}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", script, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// awaitGroupOffsets waits up to timeout until the committed offsets of
// consumer group sum to want, as Confluent's admin client reads them
// (group_offsets.py). librdkafka's admin client may crash while the group's
// coordinator moves (confluent-kafka-python#1982, confluent-kafka-javascript#374:
// a NOT_COORDINATOR answer to OffsetFetch dereferences a missing consumer
// group); a run killed by a signal is retried, as a failed read.
func awaitGroupOffsets(t *testing.T, group string, want int64, timeout time.Duration) {
	t.Helper()
	got := ""
	for deadline := time.Now().Add(timeout); ; time.Sleep(500 * time.Millisecond) {
		out, err := exec.Command(env.python, filepath.Join("testdata", "group_offsets.py"), env.bootstrap, group).CombinedOutput()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && !exit.Exited():
			t.Logf("group_offsets.py %s: %v (retried)", group, err)
		case err != nil:
			t.Fatalf("group_offsets.py %s: %v\n%s", group, err, out)
		default:
			if got = strings.TrimSpace(string(out)); got == strconv.FormatInt(want, 10) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the committed offsets of group %s sum to %q after %s, want %d", group, got, timeout, want)
		}
	}
}

// terraform runs the Terraform CLI in dir with the provider binary from
// this build installed through dev_overrides, so no registry is asked, and
// fails the test if it fails.
func terraform(t *testing.T, dir string, a *agent, args ...string) string {
	t.Helper()
	out, err := tryTerraform(t, dir, a, args...)
	if err != nil {
		t.Fatalf("terraform %s: %v\n%s\nagent log:\n%s", strings.Join(args, " "), err, out, a.log())
	}
	return out
}

// tryTerraform runs the Terraform CLI like terraform and returns its output
// and error, for a test that goes on when it fails.
func tryTerraform(t *testing.T, dir string, a *agent, args ...string) (string, error) {
	t.Helper()
	rc := filepath.Join(dir, ".terraformrc")
	cfg := fmt.Sprintf(`provider_installation {
  dev_overrides {
    "tributary-io/tributary" = %q
  }
  direct {}
}
`, env.pluginDir)
	if err := os.WriteFile(rc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(env.terraform, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1",
		"TRIBUTARY_ENDPOINT="+a.endpoint, "TRIBUTARY_TOKEN="+a.token)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// waitFor polls the pipeline until cond holds and returns what it saw; it
// fails the test, saying what was awaited, when the pipeline fails or after
// timeout.
func (a *agent) waitFor(pipeline, what string, timeout time.Duration, cond func(*spec.PipelineResponse) bool) *spec.PipelineResponse {
	a.t.Helper()
	return awaitObject(a, "pipeline "+pipeline, what, timeout, a.client().GetPipeline, pipeline, cond,
		func(p *spec.PipelineResponse) (string, any) { return p.Status.State, p.Status })
}

// awaitObject polls the agent's object name through get until cond holds
// and returns what it saw; it fails the test, saying what was awaited, when
// the object's state (from status, which also gives what the message
// shows) is FAILED while cond does not hold, or after timeout. kind names
// the object in messages ("pipeline p").
func awaitObject[R any](a *agent, kind, what string, timeout time.Duration, get func(context.Context, string) (*R, error), name string,
	cond func(*R) bool, status func(*R) (string, any)) *R {
	a.t.Helper()
	deadline := time.Now().Add(timeout)
	var last *R
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		o, err := get(ctx, name)
		cancel()
		if err == nil {
			last = o
			if cond(o) {
				return o
			}
			if state, st := status(o); state == spec.StateFailed {
				a.t.Fatalf("%s failed while waiting until %s: %+v", kind, what, st)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	var st any = "no answer"
	if last != nil {
		_, st = status(last)
	}
	a.t.Fatalf("%s: not %s after %s; status %+v\nagent log:\n%s", kind, what, timeout, st, a.log())
	return nil
}

// waitAtLeast polls the pipeline until table idx has committed at least
// want rows and returns its status. Unlike waitRows it accepts more rows,
// and after timeout it logs and returns what it saw, so that a checker run
// next can say which rows are missing or extra.
func (a *agent) waitAtLeast(pipeline string, idx int, want int64, timeout time.Duration) spec.TableStatus {
	a.t.Helper()
	last, reached := a.pollRows(pipeline, idx, want, timeout)
	if !reached {
		a.t.Logf("table %s has %d rows after %s, want %d", last.DestinationTable, last.Rows, timeout, want)
	}
	if last.Location == "" {
		a.t.Fatalf("pipeline %s never reported table %d; agent log:\n%s", pipeline, idx, a.log())
	}
	return last
}

// awaitCompaction waits up to timeout for the log of the table at location
// to hold an OPTIMIZE commit: a compaction that began while the last
// records came in may commit seconds after them on a busy machine. The
// check that follows reports a table still not compacted.
func awaitCompaction(t *testing.T, location string, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		cmd := exec.Command(env.python, filepath.Join("testdata", "check_table.py"), localCopy(t, location), "--files-only", "--compacted")
		if cmd.Run() == nil {
			return
		}
	}
}

// checkTable runs testdata/check_table.py on a table folder (or a table on
// an object store: see localCopy) and reports a failure with t.Errorf, so
// that one run shows every table that is wrong.
func checkTable(t *testing.T, location string, args ...string) bool {
	t.Helper()
	location = localCopy(t, location)
	cmd := exec.Command(env.python, append([]string{filepath.Join("testdata", "check_table.py"), location}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("check_table.py %s %s: %v\n%s", filepath.Base(location), strings.Join(args, " "), err, out)
		return false
	}
	t.Logf("check_table.py %s: %s", filepath.Base(location), out)
	return true
}
