package store_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
)

// backup returns the backup of the data folder dir, with the key in
// keyFile ("" for none).
func backup(t *testing.T, dir, keyFile string) []byte {
	t.Helper()
	var out bytes.Buffer
	if _, err := store.Backup(dir, &out, keyFile); err != nil {
		t.Fatalf("Backup: %v", err)
	}
	return out.Bytes()
}

// folderFiles returns every file under dir with its content, by path
// relative to dir.
func folderFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestBackupRestore: the backup of a data folder of the previous release
// changes nothing in it and keeps its secrets encrypted; restored into an
// empty folder beside the key, it opens with every object, and is
// migrated like the original.
func TestBackupRestore(t *testing.T) {
	dir := copyFixture(t, "format1")
	before := folderFiles(t, dir)
	data := backup(t, dir, "")
	if after := folderFiles(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("Backup changed the data folder:\n%v\nwas\n%v", after, before)
	}
	if bytes.Contains(data, []byte("fixture-password")) || bytes.Contains(data, []byte("secrets_key")) {
		t.Fatalf("the backup holds a secret in plain text, or the key:\n%s", data)
	}
	var doc struct {
		Format  int
		Objects map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.Format != 1 || len(doc.Objects["connections"]) != 1 ||
		len(doc.Objects["pipelines"]) != 1 || len(doc.Objects["fanout_schemas"]) != 1 || len(doc.Objects["kafka_sinks"]) != 1 {
		t.Fatalf("backup = %+v (%v), want format 1 and one object of each kind", doc, err)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	res, err := store.Restore(restored, bytes.NewReader(data), false)
	if err != nil || res.Objects != 4 || res.Format != 1 || res.KeyFile != "" {
		t.Fatalf("Restore = %+v, %v", res, err)
	}
	for rel, content := range before {
		if rel == store.DefaultKeyFile {
			continue
		}
		if got, err := os.ReadFile(filepath.Join(restored, rel)); err != nil || string(got) != content {
			t.Errorf("restored %s = %q, %v; want %q", rel, got, err, content)
		}
	}
	s, err := store.Open(restored, store.SecretsKeyFile(filepath.Join(dir, store.DefaultKeyFile)))
	if err != nil {
		t.Fatalf("Open of the restored folder: %v", err)
	}
	if c, err := s.Connections.Get("kafka"); err != nil || c.SASL.Password != "fixture-password" {
		t.Fatalf("restored connection = %+v, %v", c, err)
	}
	if got := readFormat(t, restored); got != store.LocalFormat {
		t.Fatalf("the restored folder of format 1 was not migrated on Open: format %d", got)
	}
}

// TestRestoreRefusesNonEmpty: a folder that holds state is refused, naming
// what it holds and --force; with force it ends up holding the backup
// alone.
func TestRestoreRefusesNonEmpty(t *testing.T) {
	data := backup(t, copyFixture(t, "format1"), "")
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Pipelines.Put(pipeline("extra")); err != nil {
		t.Fatal(err)
	}
	_, err := store.Restore(dir, bytes.NewReader(data), false)
	if err == nil || !strings.Contains(err.Error(), "pipelines/extra") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("Restore into a folder with state = %v, want a refusal naming pipelines/extra and --force", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pipelines", "orders.json")); !os.IsNotExist(err) {
		t.Fatalf("a refused restore wrote the backup's pipeline: %v", err)
	}
	if _, err := store.Restore(dir, bytes.NewReader(data), true); err != nil {
		t.Fatalf("Restore with force: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pipelines", "extra.json")); !os.IsNotExist(err) {
		t.Fatalf("the pipeline the backup lacks is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pipelines", "orders.json")); err != nil {
		t.Fatal(err)
	}
}

// TestBackupWithKey: a backup asked to hold the key restores a folder that
// opens on its own, with the key file mode 0600; into a folder whose key
// is another one, it is refused without force.
func TestBackupWithKey(t *testing.T) {
	src := copyFixture(t, "format1")
	data := backup(t, src, filepath.Join(src, store.DefaultKeyFile))
	dir := filepath.Join(t.TempDir(), "d")
	res, err := store.Restore(dir, bytes.NewReader(data), false)
	if err != nil || res.KeyFile != filepath.Join(dir, store.DefaultKeyFile) {
		t.Fatalf("Restore = %+v, %v", res, err)
	}
	if fi, err := os.Stat(res.KeyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("restored key file: %v, %v", fi, err)
	}
	if c, err := open(t, dir).Connections.Get("kafka"); err != nil || c.SASL.Password != "fixture-password" {
		t.Fatalf("restored connection = %+v, %v", c, err)
	}

	other := t.TempDir()
	open(t, other) // generates another key
	if _, err := store.Restore(other, bytes.NewReader(data), false); err == nil || !strings.Contains(err.Error(), "another key") {
		t.Fatalf("Restore over another key = %v, want a refusal", err)
	}
}

// TestRestoreRefusesBadBackups: a backup of a newer format, or with a
// damaged object, is refused before anything is written.
func TestRestoreRefusesBadBackups(t *testing.T) {
	newer := store.LocalFormat + 1
	for name, tc := range map[string]struct{ backup, want string }{
		"newer format":  {fmt.Sprintf(`{"format": %d, "objects": {}}`, newer), fmt.Sprintf("format %d", newer)},
		"no format":     {`{"objects": {}}`, "not a backup"},
		"misnamed":      {`{"format": 2, "objects": {"pipelines": {"a": {"name": "b"}}}}`, `named "b"`},
		"unknown kind":  {`{"format": 2, "objects": {"widgets": {}}}`, `"widgets"`},
		"bad key":       {`{"format": 2, "objects": {}, "secrets_key": "short"}`, "secrets key"},
		"not json":      {`{`, "reading the backup"},
		"unknown field": {`{"format": 2, "objects": {}, "tables": {}}`, `unknown field "tables"`},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "d")
			_, err := store.Restore(dir, strings.NewReader(tc.backup), false)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Restore = %v, want an error saying %q", err, tc.want)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("a refused restore created the folder: %v", err)
			}
		})
	}
}

// TestBackupRefusesNewerFormat: a data folder of a newer format is not
// backed up by an agent that cannot vouch for it.
func TestBackupRefusesNewerFormat(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "format.json"), fmt.Appendf(nil, `{"format": %d}`, store.LocalFormat+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Backup(dir, &bytes.Buffer{}, ""); err == nil || !strings.Contains(err.Error(), "format.json") {
		t.Fatalf("Backup = %v, want a refusal naming format.json", err)
	}
}
