package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/testlog"
)

// agentBin is the binary under test, built once by TestMain with
// CGO_ENABLED=0, as it ships.
var agentBin string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tributary-agent-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	agentBin = filepath.Join(dir, "tributary-agent")
	build := exec.Command("go", "build", "-o", agentBin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building tributary-agent with CGO_ENABLED=0: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// process is a running agent binary.
type process struct {
	cmd    *exec.Cmd
	lines  chan string // stdout, line by line
	stderr *testlog.Buffer
	exited chan error
}

// start runs the binary with args and an environment without
// TRIBUTARY_TOKEN plus env.
func start(t *testing.T, args []string, env ...string) *process {
	t.Helper()
	cmd := exec.Command(agentBin, args...)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, tokenEnv+"=")
	}), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, lines: make(chan string, 100), stderr: new(testlog.Buffer), exited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	return p
}

// waitFor returns the first submatch of re in a stdout line, failing after
// 20 seconds or when the process exits first.
func (p *process) waitFor(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("agent exited before printing %v; stderr:\n%s", re, p.stderr)
			}
			if m := re.FindStringSubmatch(line); m != nil {
				return m[1]
			}
		case <-timeout:
			t.Fatalf("agent printed no line matching %v in 20s; stderr:\n%s", re, p.stderr)
		}
	}
}

// stop sends sig and asserts a clean exit within 20 seconds.
func (p *process) stop(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range p.lines { // drain, so the reader reaches Wait
		}
	}()
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("agent exited with %v after %v; stderr:\n%s", err, sig, p.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("agent still running 20s after %v", sig)
	}
}

var listeningRE = regexp.MustCompile(`^tributary-agent listening on (http://\S+)$`)

// get sends GET url with token (none when "") and returns the status.
func get(t *testing.T, url, token string) int {
	t.Helper()
	resp, err := request(t, http.DefaultClient, url, token)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

// request sends GET url through hc with token (none when "") and returns
// the answer, its body read and closed.
func request(t *testing.T, hc *http.Client, url, token string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp, nil
}

// Tokens of the tests: the agent refuses any shorter than 32 bytes.
const (
	fileToken     = "file-token-0123456789abcdef0123456789"
	envTokenValue = "env-token-0123456789abcdef0123456789"
)

func TestServe(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("  "+fileToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		env   []string
		token string // what the API accepts; "" for none needed
		log   string // a line of the log has it
	}{
		{name: "token file", args: []string{"--token-file", tokenFile}, token: fileToken,
			log: "memory_limit=512MiB buffer_budget=256MiB go_memory_limit=448MiB"},
		{name: "token from env", env: []string{tokenEnv + "=" + envTokenValue}, token: envTokenValue},
		{name: "insecure", args: []string{"--insecure-no-auth"}},
		{name: "plain HTTP on every address", args: []string{"--insecure-no-auth", "--listen", "0.0.0.0:0"},
			log: "INSECURE: the API is served over plain HTTP on a non-loopback address"},
		{name: "memory limit", args: []string{"--insecure-no-auth", "--memory-limit", "1GiB"},
			log: "memory_limit=1GiB buffer_budget=512MiB go_memory_limit=896MiB"},
		{name: "GOMEMLIMIT wins", args: []string{"--insecure-no-auth", "--memory-limit", "64MiB"}, env: []string{"GOMEMLIMIT=100MiB"},
			log: "memory_limit=64MiB buffer_budget=32MiB go_memory_limit=100MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir()}, tt.args...)
			p := start(t, args, tt.env...)
			url := p.waitFor(t, listeningRE)
			if got := get(t, url+"/healthz", ""); got != http.StatusOK {
				t.Fatalf("/healthz: %d", got)
			}
			if got := get(t, url+"/v1/pipelines", tt.token); got != http.StatusOK {
				t.Fatalf("/v1/pipelines with the token: %d", got)
			}
			if tt.token != "" {
				if got := get(t, url+"/v1/pipelines", ""); got != http.StatusUnauthorized {
					t.Fatalf("/v1/pipelines without the token: %d, want 401", got)
				}
			}
			p.stop(t, syscall.SIGTERM)
			if !strings.Contains(p.stderr.String(), tt.log) {
				t.Errorf("the log lacks %q:\n%s", tt.log, p.stderr)
			}
		})
	}
}

func TestServeRefuses(t *testing.T) {
	dir := t.TempDir()
	empty := writeFile(t, dir, "empty", "\n", 0o600)
	short := writeFile(t, dir, "short", fileToken+"\nshort-token\n", 0o600)
	tests := []struct {
		name     string
		args     []string
		env      []string
		wantCode int
		want     []string
	}{
		{name: "no token", args: []string{"--data-dir", dir}, wantCode: 1, want: []string{"no API token", "--token-file", tokenEnv, "--insecure-no-auth"}},
		{name: "empty token file", args: []string{"--data-dir", dir, "--token-file", empty}, wantCode: 1, want: []string{"is empty"}},
		{name: "short token in the file", args: []string{"--data-dir", dir, "--token-file", short}, wantCode: 1,
			want: []string{"line 2: the token is 11 bytes long, shorter than the minimum of 32"}},
		{name: "short token in the environment", args: []string{"--data-dir", dir}, env: []string{tokenEnv + "=0123456789"}, wantCode: 1,
			want: []string{tokenEnv + " is 10 bytes long, shorter than the minimum of 32"}},
		{name: "TLS certificate without key", args: []string{"--insecure-no-auth", "--data-dir", dir, "--tls-cert", empty}, wantCode: 2,
			want: []string{"--tls-cert and --tls-key go together"}},
		{name: "warehouse mode the agent cannot write", args: []string{"--insecure-no-auth", "--data-dir", dir, "--warehouse-mode", "0440"},
			wantCode: 2, want: []string{"0440 does not let the agent read and write its own files"}},
		{name: "no connections", args: []string{"--insecure-no-auth", "--data-dir", dir, "--max-connections", "0"},
			wantCode: 2, want: []string{"--max-connections 0 must be 1 or more"}},
		{name: "no data dir", args: []string{"--insecure-no-auth"}, wantCode: 2, want: []string{"--data-dir"}},
		{name: "unknown flag", args: []string{"--nope"}, wantCode: 2, want: []string{"-nope"}},
		{name: "memory limit too small", args: []string{"--insecure-no-auth", "--data-dir", dir, "--memory-limit", "1MiB"},
			wantCode: 2, want: []string{"--memory-limit 1MiB is below the minimum of 32MiB"}},
		{name: "memory limit not a size", args: []string{"--insecure-no-auth", "--data-dir", dir, "--memory-limit", "lots"},
			wantCode: 2, want: []string{"-memory-limit", "MiB"}},
		{name: "warehouse of an unknown store", args: []string{"--insecure-no-auth", "--data-dir", dir, "--warehouse", "hdfs://nn/lake"},
			wantCode: 2, want: []string{`--warehouse "hdfs://nn/lake": unsupported scheme "hdfs"`}},
		{name: "negative grace", args: []string{"--insecure-no-auth", "--data-dir", dir, "--gc-grace", "-1s"},
			wantCode: 2, want: []string{"--gc-grace -1s is negative"}},
		{name: "cluster on local disk", args: []string{"--insecure-no-auth", "--data-dir", dir, "--cluster", "prod", "--secrets-key-file", empty},
			wantCode: 2, want: []string{"--cluster prod needs --warehouse on an object store", "not a local folder"}},
		{name: "cluster on a local warehouse", args: []string{"--insecure-no-auth", "--data-dir", dir, "--cluster", "prod", "--warehouse", "file:///lake"},
			wantCode: 2, want: []string{"--cluster prod needs --warehouse on an object store"}},
		{name: "cluster without a key", args: []string{"--insecure-no-auth", "--data-dir", dir, "--cluster", "prod", "--warehouse", "s3://lake/raw"},
			wantCode: 2, want: []string{"--cluster prod needs --secrets-key-file"}},
		{name: "cluster of a bad name", args: []string{"--insecure-no-auth", "--data-dir", dir, "--cluster", "a/b"},
			wantCode: 2, want: []string{`--cluster "a/b" is not a valid name`}},
		{name: "allowed root without a bucket", args: []string{"--insecure-no-auth", "--data-dir", dir, "--warehouse-allow", "s3:///raw"},
			wantCode: 2, want: []string{`"s3:///raw" names no bucket: s3://<bucket>/<prefix>`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, agentBin, append([]string{"serve"}, tt.args...)...)
			cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, tokenEnv+"=") }), tt.env...)
			out, err := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != tt.wantCode {
				t.Fatalf("exit code %d (%v), want %d; output:\n%s", code, err, tt.wantCode, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(string(out), "short-token") {
				t.Errorf("the output shows a token:\n%s", out)
			}
		})
	}
}

// TestDataDirLocked starts a second agent, serve then dev, on the data
// folder of a running one: both are refused, naming the first.
func TestDataDirLocked(t *testing.T) {
	dir := t.TempDir()
	first := start(t, []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", dir, "--insecure-no-auth"})
	first.waitFor(t, listeningRE)
	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0", "--data-dir", dir, "--insecure-no-auth"},
		{"dev", "--listen", "127.0.0.1:0", "--kafka-port", "0", "--data-dir", dir},
	} {
		t.Run(args[0], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, agentBin, args...).CombinedOutput()
			if code := exitCode(err); code != 1 {
				t.Fatalf("exit code %d (%v), want 1; output:\n%s", code, err, out)
			}
			want := []string{"data folder " + dir + " is in use by another agent",
				fmt.Sprintf("tributary-agent serve (pid %d on host ", first.cmd.Process.Pid), "--data-dir"}
			for _, w := range want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	first.stop(t, syscall.SIGTERM)
}

// exitCode is the exit code of a finished command's error.
func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestDev(t *testing.T) {
	dir := t.TempDir()
	tokenFile := writeFile(t, dir, "token", "from an earlier run\n", 0o644)
	p := start(t, []string{"dev", "--listen", "127.0.0.1:0", "--kafka-port", "0", "--data-dir", dir,
		"--token-file-out", tokenFile, "--rate", "50"})
	bootstrap := p.waitFor(t, regexp.MustCompile(`^Kafka bootstrap servers: (\S+)`))
	url := p.waitFor(t, listeningRE)
	export := p.waitFor(t, regexp.MustCompile(`^(export TRIBUTARY_ENDPOINT=.*)$`))
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(tokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the token file's mode: %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if !strings.Contains(export, "TRIBUTARY_TOKEN="+strings.TrimSpace(string(token))) || !strings.Contains(export, url) {
		t.Errorf("export line %q does not carry the endpoint %s and the token", export, url)
	}
	if got := get(t, url+"/v1/pipelines", strings.TrimSpace(string(token))); got != http.StatusOK {
		t.Fatalf("/v1/pipelines with the written token: %d", got)
	}

	// The sample producer writes JSON events, and now and then a malformed one.
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...), kgo.ConsumeTopics(devTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var good, bad int
	for good == 0 || bad == 0 {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("after 20s: %d good and %d malformed events, want some of each", good, bad)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			var ev sampleEvent
			if json.Unmarshal(r.Value, &ev) == nil && ev.User != "" && string(r.Key) == ev.User {
				good++
			} else {
				bad++
			}
		})
	}
	p.stop(t, syscall.SIGINT)
}

func TestVersion(t *testing.T) {
	out, err := exec.Command(agentBin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "tributary-agent ") {
		t.Fatalf("version: %q, %v", out, err)
	}
}
