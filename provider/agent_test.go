package provider_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/segmentio/kafka-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// testAgent is a tributary-agent process shared by the acceptance tests of
// one test binary run: built and started on first use, stopped by TestMain.
type testAgent struct {
	URL    string
	Token  string
	Client *client.Client
	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
}

var (
	agentOnce sync.Once
	agent     *testAgent
	agentErr  error //nolint:errname // the outcome of starting the shared agent once, not a sentinel
)

// sharedAgent returns the running test agent, starting it on first use. It
// fails t when the agent cannot be built or started. The acceptance tests
// run in parallel (resource.ParallelTest) on this one agent: each names its
// connections, pipelines, sinks, topics and destination schemas with
// uniqueName, and none may depend on what the others hold.
func sharedAgent(t *testing.T) *testAgent {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1 (make test and make testacc do)", resource.EnvTfAcc)
	}
	agentOnce.Do(func() { agent, agentErr = startTestAgent(nil) })
	if agentErr != nil {
		t.Fatalf("starting the test agent: %v", agentErr)
	}
	return agent
}

// envTestAgent names a prebuilt tributary-agent binary for the acceptance
// tests to run instead of building ./agent/cmd/tributary-agent.
const envTestAgent = "TRIBUTARY_TEST_AGENT"

var (
	binaryOnce sync.Once
	binaryDir  string
	binary     string
	binaryErr  error //nolint:errname // the outcome of building the agent once, not a sentinel
)

// agentBinary returns $TRIBUTARY_TEST_AGENT, or else builds
// ./agent/cmd/tributary-agent once into a temporary folder that
// stopTestAgent removes.
func agentBinary() (string, error) {
	binaryOnce.Do(func() {
		if binary = os.Getenv(envTestAgent); binary != "" {
			return
		}
		if binaryDir, binaryErr = os.MkdirTemp("", "tributary-acc-bin-"); binaryErr != nil {
			return
		}
		binary = filepath.Join(binaryDir, "tributary-agent")
		build := exec.Command("go", "build", "-o", binary, "github.com/tributary-io/terraform-provider-tributary/agent/cmd/tributary-agent")
		if out, err := build.CombinedOutput(); err != nil {
			binaryErr = fmt.Errorf("building the agent: %w\n%s", err, out)
		}
	})
	return binary, binaryErr
}

// startTestAgent runs `serve` of agentBinary on a free port with a fresh
// data folder and token, and the extra arguments; clientTLS is the TLS
// configuration of the clients that reach an agent serving HTTPS (nil for
// plain HTTP).
func startTestAgent(clientTLS *tls.Config, extra ...string) (*testAgent, error) {
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	return startAgentWithToken(hex.EncodeToString(secret), clientTLS, extra...)
}

// startAgentWithToken is startTestAgent with the given token, which the
// agents of one cluster share.
func startAgentWithToken(token string, clientTLS *tls.Config, extra ...string) (*testAgent, error) {
	dir, err := os.MkdirTemp("", "tributary-acc-")
	if err != nil {
		return nil, err
	}
	a := &testAgent{dir: dir, exited: make(chan struct{}), Token: token}
	bin, err := agentBinary()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(a.Token+"\n"), 0o600); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "agent.log"))
	if err != nil {
		return nil, err
	}
	a.cmd = exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"),
		"--token-file", tokenFile, "--shutdown-timeout", "10s"}, extra...)...)
	a.cmd.Stderr = logFile
	stdout, err := a.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := a.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the agent: %w", err)
	}
	go func() { _ = a.cmd.Wait(); logFile.Close(); close(a.exited) }()

	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "tributary-agent listening on "); ok {
				urls <- strings.TrimSpace(u)
			}
		}
	}()
	select {
	case a.URL = <-urls:
	case <-a.exited:
		return nil, fmt.Errorf("the agent exited at start; its log is %s:\n%s", logFile.Name(), readFile(logFile.Name()))
	case <-time.After(30 * time.Second):
		a.stop()
		return nil, fmt.Errorf("the agent did not print its URL within 30s; its log:\n%s", readFile(logFile.Name()))
	}
	h := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS}}
	if err := waitHealthy(h, a.URL+"/healthz", 30*time.Second); err != nil {
		a.stop()
		return nil, fmt.Errorf("%w; agent log:\n%s", err, readFile(logFile.Name()))
	}
	a.Client, err = client.New(a.URL, a.Token, client.WithHTTPClient(h))
	return a, err
}

func readFile(name string) string {
	b, _ := os.ReadFile(name)
	return string(b)
}

// waitHealthy polls url with h until it answers 200 or timeout passes.
func waitHealthy(h *http.Client, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := h.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not healthy after %s: %w", url, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends the agent (SIGTERM, then SIGKILL after 20s) and removes its
// folder.
func (a *testAgent) stop() {
	if a.cmd != nil && a.cmd.Process != nil {
		_ = a.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-a.exited:
		case <-time.After(20 * time.Second):
			_ = a.cmd.Process.Kill()
			<-a.exited
		}
	}
	os.RemoveAll(a.dir)
}

// stopTestAgent stops the shared agent if a test started it, and removes
// the agent binary if a test built it.
func stopTestAgent() {
	if agent != nil {
		agent.stop()
	}
	if binaryDir != "" {
		os.RemoveAll(binaryDir)
	}
}

// providerHCL is the provider block that points at the agent, with the
// attributes extra (HCL lines).
func (a *testAgent) providerHCL(extra ...string) string {
	return fmt.Sprintf("provider \"tributary\" {\n  endpoint = %s\n  token = %s\n%s}\n", hclString(a.URL), hclString(a.Token),
		strings.Join(extra, ""))
}

// kafkaBootstrap is the broker the acceptance tests use: $KAFKA_BOOTSTRAP,
// by default the one `make kafka-up` starts.
func kafkaBootstrap() string {
	if b := os.Getenv("KAFKA_BOOTSTRAP"); b != "" {
		return b
	}
	return "127.0.0.1:19092"
}

// uniqueName returns prefix followed by a random suffix, usable as a topic,
// connection, pipeline or table name.
func uniqueName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

// createTopic creates a topic with the given partitions on the test broker.
func createTopic(t *testing.T, name string, partitions int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var d kafka.Dialer
	conn, err := d.DialContext(ctx, "tcp", kafkaBootstrap())
	if err != nil {
		t.Fatalf("dialing Kafka at %s (run `make kafka-up`, or set KAFKA_BOOTSTRAP): %v", kafkaBootstrap(), err)
	}
	defer conn.Close()
	ctrl, err := conn.Controller()
	if err != nil {
		t.Fatalf("finding the Kafka controller: %v", err)
	}
	cc, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port)))
	if err != nil {
		t.Fatalf("dialing the Kafka controller: %v", err)
	}
	defer cc.Close()
	if err := cc.CreateTopics(kafka.TopicConfig{Topic: name, NumPartitions: partitions, ReplicationFactor: 1}); err != nil {
		t.Fatalf("creating topic %s: %v", name, err)
	}
}

// produce writes values, keyed by their index, to topic on the test broker,
// retrying for up to 30 seconds while the broker does not serve a topic
// just created yet.
func produce(t *testing.T, topic string, values ...string) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(kafkaBootstrap()), Topic: topic, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	msgs := make([]kafka.Message, len(values))
	for i, v := range values {
		msgs[i] = kafka.Message{Key: []byte(strconv.Itoa(i)), Value: []byte(v)}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := w.WriteMessages(ctx, msgs...)
		cancel()
		switch {
		case err == nil:
			return
		case !errors.Is(err, kafka.UnknownTopicOrPartition) || time.Now().After(deadline):
			t.Fatalf("producing to %s: %v", topic, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitRows waits until the agent reports rows committed rows in the first
// table of the named pipeline, and returns that table's status.
func (a *testAgent) waitRows(t *testing.T, pipeline string, rows int64) spec.TableStatus {
	t.Helper()
	got := waitUntil(t, "pipeline "+pipeline, fmt.Sprintf("commit %d rows", rows),
		func(ctx context.Context) (*spec.PipelineResponse, error) { return a.Client.GetPipeline(ctx, pipeline) },
		func(got *spec.PipelineResponse) bool { return got.Status.Tables[0].Rows >= rows })
	return got.Status.Tables[0]
}

// waitUntil reads an object of the agent, what ("pipeline p"), until done
// holds for the answer, and returns it; after a minute it fails the test,
// saying that the object did not want ("commit 3 rows").
func waitUntil[T any](t *testing.T, what, want string, read func(context.Context) (T, error), done func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := read(context.Background())
		if err != nil {
			t.Fatalf("reading %s: %v", what, err)
		}
		if done(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not %s within a minute: %+v", what, want, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
