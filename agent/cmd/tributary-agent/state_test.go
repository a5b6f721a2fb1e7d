package main

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runBinary runs the binary with args to its end and returns its exit code
// and output.
func runBinary(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, agentBin, args...).CombinedOutput()
	return exitCode(err), string(out)
}

// TestStateBackupRestore: state backup and restore refuse a data folder a
// running agent holds; once it stopped, the backup restores into a new
// folder, where an agent serves it; restore refuses a folder with state
// unless --force.
func TestStateBackupRestore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dir, os.DirFS("../../internal/store/testdata/format1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "secrets.key"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "state.json")
	agent := start(t, []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", dir, "--insecure-no-auth"})
	agent.waitFor(t, listeningRE)
	for _, args := range [][]string{
		{"state", "backup", "--data-dir", dir, "--out", out},
		{"state", "restore", "--data-dir", dir, "--in", out, "--force"},
	} {
		if code, text := runBinary(t, args...); code != 1 || !strings.Contains(text, "is in use by another agent") {
			t.Errorf("%s while the agent runs: exit %d, %s; want a refusal", args[1], code, text)
		}
	}
	agent.stop(t, syscall.SIGTERM)

	code, text := runBinary(t, "state", "backup", "--data-dir", dir, "--out", out)
	if code != 0 || !strings.Contains(text, "backed up 4 object(s)") || !strings.Contains(text, "secrets key is not in the backup") {
		t.Fatalf("state backup: exit %d, %s", code, text)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the backup file: %v, %v; want mode 0600", fi, err)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	key := filepath.Join(dir, "secrets.key")
	code, text = runBinary(t, "state", "restore", "--data-dir", restored, "--in", out, "--secrets-key-file", key)
	if code != 0 || !strings.Contains(text, "restored 4 object(s) of format 3") {
		t.Fatalf("state restore: exit %d, %s", code, text)
	}
	code, text = runBinary(t, "state", "restore", "--data-dir", restored, "--in", out)
	if code != 1 || !strings.Contains(text, "--force") {
		t.Fatalf("state restore into a folder with state: exit %d, %s; want a refusal naming --force", code, text)
	}
	code, text = runBinary(t, "state", "restore", "--data-dir", restored, "--in", out, "--force", "--secrets-key-file", key)
	if code != 0 {
		t.Fatalf("state restore --force: exit %d, %s", code, text)
	}
	// Checked with another key, the backup's connection does not open:
	// refused before anything is written.
	other := filepath.Join(t.TempDir(), "other.key")
	if err := os.WriteFile(other, []byte(base64.StdEncoding.EncodeToString(make([]byte, 32))), 0o600); err != nil {
		t.Fatal(err)
	}
	code, text = runBinary(t, "state", "restore", "--data-dir", restored, "--in", out, "--force", "--secrets-key-file", other)
	if code != 1 || !strings.Contains(text, "nothing was written") || !strings.Contains(text, "cannot be decrypted") {
		t.Fatalf("state restore checked with another key: exit %d, %s; want a refusal saying the connection does not open", code, text)
	}
	again := start(t, []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", restored, "--insecure-no-auth", "--secrets-key-file", key})
	url := again.waitFor(t, listeningRE)
	if status := get(t, url+"/v1/connections/kafka", ""); status != 200 {
		t.Errorf("GET the restored connection: %d", status)
	}
	again.stop(t, syscall.SIGTERM)

	if code, text := runBinary(t, "state", "backup", "--data-dir", filepath.Join(t.TempDir(), "none"), "--out", out); code != 1 ||
		!strings.Contains(text, "no such file") {
		t.Errorf("state backup of a missing folder: exit %d, %s", code, text)
	}
	// A folder a restore left midway: serve refuses it, saying to restore
	// again.
	if err := os.WriteFile(filepath.Join(restored, ".restore-in-progress"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, text := runBinary(t, "serve", "--listen", "127.0.0.1:0", "--data-dir", restored, "--insecure-no-auth"); code != 1 ||
		!strings.Contains(text, "state restore --force") {
		t.Errorf("serve on a folder a restore left midway: exit %d, %s; want a refusal saying to restore again", code, text)
	}
	// A folder without objects, as a cluster agent's: backed up, with a
	// warning saying where a cluster's state is.
	if code, text := runBinary(t, "state", "backup", "--data-dir", t.TempDir(), "--out", out); code != 0 ||
		!strings.Contains(text, "warning:") || !strings.Contains(text, "versioning") {
		t.Errorf("state backup of a folder without objects: exit %d, %s; want a warning", code, text)
	}
	if code, _ := runBinary(t, "state", "bogus"); code != 2 {
		t.Errorf("state bogus: exit %d, want 2", code)
	}
}
