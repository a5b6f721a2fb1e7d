package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
)

// copyFixture copies the data folder testdata/<name> to a new temporary
// folder, with the key file's mode the agent gives it (git keeps no
// modes, and a key file others may read is refused), and returns it.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dst, store.DefaultKeyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// readFormat returns the format format.json in dir records; 0 when there
// is none.
func readFormat(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "format.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Format int }
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("format.json: %v", err)
	}
	return doc.Format
}

// TestOpenMigratesFormat1: a data folder the previous release wrote (no
// format.json: a connection with an encrypted secret, a pipeline, a fanout
// schema, a Kafka sink) opens with every object as it was, and gets
// format.json; the object files are not rewritten, since format 1 already
// holds them in the current form.
func TestOpenMigratesFormat1(t *testing.T) {
	dir := copyFixture(t, "format1")
	before := map[string][]byte{}
	for _, f := range []string{"connections/kafka.json", "pipelines/orders.json", "fanout_schemas/orders.json", "kafka_sinks/out.json"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = data
	}
	s := open(t, dir)
	c, err := s.Connections.Get("kafka")
	if err != nil || c.SASL == nil || c.SASL.Password != "fixture-password" {
		t.Fatalf("the connection = %+v, %v; want its password decrypted", c, err)
	}
	if p, err := s.Pipelines.Get("orders"); err != nil || p.Connection != "kafka" || p.Tables[0].DestinationTable != "events" {
		t.Fatalf("the pipeline = %+v, %v", p, err)
	}
	if f, err := s.FanoutSchemas.Get("orders"); err != nil || f.FanoutOptions.TableIDFields[0] != "type" {
		t.Fatalf("the fanout schema = %+v, %v", f, err)
	}
	if k, err := s.KafkaSinks.Get("out"); err != nil || k.Topic != "copy" || !k.ExactlyOnce() {
		t.Fatalf("the Kafka sink = %+v, %v", k, err)
	}
	if got := readFormat(t, dir); got != store.LocalFormat {
		t.Fatalf("format.json after the migration records format %d, want %d", got, store.LocalFormat)
	}
	for f, data := range before {
		if after, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(after) != string(data) {
			t.Errorf("%s changed in the migration: %v\n%s", f, err, after)
		}
	}
	if c, err := open(t, dir).Connections.Get("kafka"); err != nil || c.SASL.Password != "fixture-password" {
		t.Fatalf("after a second Open: %+v, %v", c, err)
	}
}

// TestOpenMigratesAfterCrash: a migration cut short (a plain-text secret
// of the oldest agents not encrypted yet, the write of format.json left as
// a temporary file) is done again by the next Open: the secret ends up
// encrypted, format.json written and the leftover removed.
func TestOpenMigratesAfterCrash(t *testing.T) {
	dir := copyFixture(t, "format1")
	plain := `{"name":"legacy","bootstrap_servers":["broker:9093"],"security_protocol":"SASL_SSL",` +
		`"sasl":{"mechanism":"PLAIN","username":"u","password":"plain-password"}}`
	if err := os.WriteFile(filepath.Join(dir, "connections", "legacy.json"), []byte(plain), 0o600); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(dir, ".tmp-123456")
	if err := os.WriteFile(leftover, []byte(`{"for`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir)
	if c, err := s.Connections.Get("legacy"); err != nil || c.SASL.Password != "plain-password" {
		t.Fatalf("the plain-text connection = %+v, %v", c, err)
	}
	assertNoSecret(t, connFile(dir, "legacy"), []string{"plain-password"})
	if got := readFormat(t, dir); got != store.LocalFormat {
		t.Fatalf("format.json records format %d, want %d", got, store.LocalFormat)
	}
	if _, err := os.Stat(leftover); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the unfinished write of format.json is still there: %v", err)
	}
}

// TestOpenNewFolderFormat: a new data folder is created in the current
// format.
func TestOpenNewFolderFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	open(t, dir)
	if got := readFormat(t, dir); got != store.LocalFormat {
		t.Fatalf("a new folder's format.json records format %d, want %d", got, store.LocalFormat)
	}
}

// TestOpenRefusesNewerFormat: a data folder of a newer format is refused
// with a message naming the file, both formats and the fix, and Open
// changes nothing in it: no key generated, no folder created, no leftover
// removed.
func TestOpenRefusesNewerFormat(t *testing.T) {
	dir := t.TempDir()
	format := filepath.Join(dir, "format.json")
	newer := store.LocalFormat + 1
	if err := os.WriteFile(format, fmt.Appendf(nil, `{"format": %d}`, newer), 0o600); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(dir, ".tmp-1")
	if err := os.WriteFile(leftover, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := store.Open(dir)
	if err == nil {
		t.Fatal("Open of a newer format succeeded")
	}
	for _, want := range []string{format, fmt.Sprintf("format %d", newer), fmt.Sprintf("format %d", store.LocalFormat), "state restore", "agent version"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open error %q does not say %q", err, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("Open of a newer format changed the folder: %v", entries)
	}
	for _, bad := range []string{`{"format": 0}`, `{"format": "2"}`, `{`} {
		if err := os.WriteFile(format, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Open(dir); err == nil || !strings.Contains(err.Error(), format) {
			t.Errorf("format.json %s: Open error %v, want one naming the file", bad, err)
		}
	}
}
