package flock_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/flock"
)

// helperEnv makes the test binary hold a lock in a child process (see
// TestMain) instead of running tests.
const helperEnv = "FLOCK_TEST_HOLD"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		// Hold the lock until stdin closes.
		if _, err := flock.Acquire(path, "child", 0o600); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestAcquireInProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := flock.Acquire(path, `pipeline "p", table c.s.t`, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	for _, want := range []string{`pipeline "p", table c.s.t`, fmt.Sprintf("pid %d", os.Getpid()), "host " + host, "since "} {
		if !strings.Contains(string(data), want) {
			t.Errorf("lock file %q lacks %q", data, want)
		}
	}

	// A second owner in the same process is refused too: the lock belongs
	// to an open file, not to the process.
	_, err = flock.Acquire(path, "second", 0o600)
	var held *flock.HeldError
	if !errors.As(err, &held) || held.Path != path || held.Holder != strings.TrimSpace(string(data)) {
		t.Fatalf("second Acquire error = %v, want a HeldError naming %q", err, data)
	}
	if !strings.Contains(err.Error(), `pipeline "p"`) {
		t.Errorf("error %q does not name the holder", err)
	}

	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	l2, err := flock.Acquire(path, "second", 0o600)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	defer l2.Release()
	if data, _ := os.ReadFile(path); !strings.HasPrefix(string(data), "second (") || strings.Count(string(data), "\n") != 1 {
		t.Errorf("lock file after a new Acquire = %q, want one line naming the new holder", data)
	}
}

func TestAcquireOtherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), helperEnv+"="+path)
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	defer stdin.Close()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		t.Fatalf("child: %q", line)
	}

	_, err = flock.Acquire(path, "parent", 0o600)
	var held *flock.HeldError
	if !errors.As(err, &held) || !strings.Contains(held.Holder, fmt.Sprintf("child (pid %d ", child.Process.Pid)) {
		t.Fatalf("Acquire while the child holds the lock: %v, want a HeldError naming the child's pid %d", err, child.Process.Pid)
	}

	// The lock goes with the process, however it ends.
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	l, err := flock.Acquire(path, "parent", 0o600)
	if err != nil {
		t.Fatalf("Acquire after the holder died: %v", err)
	}
	l.Release()
}

func TestHeldErrorUnknownHolder(t *testing.T) {
	e := &flock.HeldError{Path: "/x.lock"}
	if !strings.Contains(e.Error(), "/x.lock") || !strings.Contains(e.Error(), "not written its name") {
		t.Errorf("error = %q", e)
	}
}
