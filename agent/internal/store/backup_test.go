package store_test

import (
	"bytes"
	"encoding/base64"
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
	if _, err := store.Backup(dir, &out, store.BackupOptions{KeyFile: keyFile, IncludeKey: keyFile != ""}); err != nil {
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
	res, err := store.Restore(restored, bytes.NewReader(data), store.RestoreOptions{})
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
	src := copyFixture(t, "format1")
	data := backup(t, src, filepath.Join(src, store.DefaultKeyFile))
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Pipelines.Put(pipeline("extra")); err != nil {
		t.Fatal(err)
	}
	_, err := store.Restore(dir, bytes.NewReader(data), store.RestoreOptions{})
	if err == nil || !strings.Contains(err.Error(), "pipelines/extra") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("Restore into a folder with state = %v, want a refusal naming pipelines/extra and --force", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pipelines", "orders.json")); !os.IsNotExist(err) {
		t.Fatalf("a refused restore wrote the backup's pipeline: %v", err)
	}
	if _, err := store.Restore(dir, bytes.NewReader(data), store.RestoreOptions{Force: true}); err != nil {
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
	res, err := store.Restore(dir, bytes.NewReader(data), store.RestoreOptions{})
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
	if _, err := store.Restore(other, bytes.NewReader(data), store.RestoreOptions{}); err == nil || !strings.Contains(err.Error(), "another key") {
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
			_, err := store.Restore(dir, strings.NewReader(tc.backup), store.RestoreOptions{})
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
	if _, err := store.Backup(dir, &bytes.Buffer{}, store.BackupOptions{}); err == nil || !strings.Contains(err.Error(), "format.json") {
		t.Fatalf("Backup = %v, want a refusal naming format.json", err)
	}
}

// plainFixture returns the data folder of the fixture, whose connection
// holds its password in plain text, as agents before the secrets key
// stored it; withKey keeps the fixture's key file, else there is none.
func plainFixture(t *testing.T, withKey bool) string {
	t.Helper()
	dir := copyFixture(t, "format1")
	conn := `{"name": "kafka", "bootstrap_servers": ["broker:9093"], "security_protocol": "SASL_SSL",
  "sasl": {"mechanism": "SCRAM-SHA-512", "username": "ingest", "password": "fixture-password"}}`
	if err := os.WriteFile(filepath.Join(dir, "connections", "kafka.json"), []byte(conn), 0o600); err != nil {
		t.Fatal(err)
	}
	if !withKey {
		if err := os.Remove(filepath.Join(dir, store.DefaultKeyFile)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBackupSealsPlainSecrets: a secret a data folder stores in plain text
// is encrypted in the backup, with the folder's key, or with a key
// generated in the folder when it has none, as the agent's next start
// would; the backup restores with that key.
func TestBackupSealsPlainSecrets(t *testing.T) {
	for _, withKey := range []bool{true, false} {
		t.Run(fmt.Sprintf("key file %v", withKey), func(t *testing.T) {
			dir := plainFixture(t, withKey)
			var out bytes.Buffer
			res, err := store.Backup(dir, &out, store.BackupOptions{})
			keyFile := filepath.Join(dir, store.DefaultKeyFile)
			if err != nil || res.Objects != 4 || res.Sealed != 1 || res.KeyFile != keyFile || res.KeyGenerated == withKey {
				t.Fatalf("Backup = %+v, %v; want 4 objects, 1 sealed with %s, generated %v", res, err, keyFile, !withKey)
			}
			if bytes.Contains(out.Bytes(), []byte("fixture-password")) || !bytes.Contains(out.Bytes(), []byte("enc:v1:")) {
				t.Fatalf("the backup holds a secret in plain text:\n%s", out.Bytes())
			}
			restored := filepath.Join(t.TempDir(), "restored")
			if _, err := store.Restore(restored, &out, store.RestoreOptions{KeyFile: keyFile}); err != nil {
				t.Fatalf("Restore: %v", err)
			}
			s, err := store.Open(restored, store.SecretsKeyFile(keyFile))
			if err != nil {
				t.Fatal(err)
			}
			if c, err := s.Connections.Get("kafka"); err != nil || c.SASL.Password != "fixture-password" {
				t.Fatalf("restored connection = %+v, %v", c, err)
			}
		})
	}
}

// TestRestoreChecksKeyFirst: a forced restore whose connections the key
// the agent will use does not decrypt (the folder's own, or the one
// given) is refused before it changes anything in the folder.
func TestRestoreChecksKeyFirst(t *testing.T) {
	src := copyFixture(t, "format1")
	data := backup(t, src, "")
	dir := t.TempDir()
	if err := open(t, dir).Pipelines.Put(pipeline("extra")); err != nil {
		t.Fatal(err)
	}
	before := folderFiles(t, dir)
	other := filepath.Join(t.TempDir(), "other.key")
	if err := os.WriteFile(other, []byte(base64.StdEncoding.EncodeToString(make([]byte, 32))), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, keyFile := range []string{"", other} {
		_, err := store.Restore(dir, bytes.NewReader(data), store.RestoreOptions{Force: true, KeyFile: keyFile})
		if err == nil || !strings.Contains(err.Error(), `connection "kafka" does not open`) {
			t.Fatalf("Restore --force with key file %q = %v, want a refusal", keyFile, err)
		}
		if after := folderFiles(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("a refused restore changed the folder:\n%v\nwas\n%v", after, before)
		}
	}
	res, err := store.Restore(dir, bytes.NewReader(data), store.RestoreOptions{Force: true, KeyFile: filepath.Join(src, store.DefaultKeyFile)})
	if err != nil || !res.Checked {
		t.Fatalf("Restore --force with the backup's key = %+v, %v", res, err)
	}
}

// TestRestoreCutShort: a restore that stops midway leaves a folder that
// Open and Backup refuse, saying to restore again; restoring again
// completes it.
func TestRestoreCutShort(t *testing.T) {
	src := copyFixture(t, "format1")
	data := backup(t, src, filepath.Join(src, store.DefaultKeyFile))
	dir := t.TempDir()
	// A file where the pipelines' folder goes stops the restore after the
	// connections.
	blocker := filepath.Join(dir, "pipelines")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Restore(dir, bytes.NewReader(data), store.RestoreOptions{Force: true}); err == nil {
		t.Fatal("Restore with a file in the way succeeded")
	}
	if _, err := store.Open(dir); err == nil || !strings.Contains(err.Error(), "state restore --force") {
		t.Fatalf("Open of a folder a restore left midway = %v, want a refusal saying to restore again", err)
	}
	if _, err := store.Backup(dir, &bytes.Buffer{}, store.BackupOptions{}); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("Backup of a folder a restore left midway = %v, want a refusal", err)
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Restore(dir, bytes.NewReader(data), store.RestoreOptions{Force: true}); err != nil {
		t.Fatalf("Restore again: %v", err)
	}
	if c, err := open(t, dir).Connections.Get("kafka"); err != nil || c.SASL.Password != "fixture-password" {
		t.Fatalf("restored connection = %+v, %v", c, err)
	}
}

// TestRestoreIntoStartedFolder: the folder of an agent started once, which
// stored nothing, holds format.json alone (and a key): a restore needs no
// force there when the key opens the backup.
func TestRestoreIntoStartedFolder(t *testing.T) {
	src := copyFixture(t, "format1")
	keyFile := filepath.Join(src, store.DefaultKeyFile)
	data := backup(t, src, "")
	dir := t.TempDir()
	if _, err := store.Open(dir, store.SecretsKeyFile(keyFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Restore(dir, bytes.NewReader(data), store.RestoreOptions{KeyFile: keyFile}); err != nil {
		t.Fatalf("Restore into a folder holding format.json alone: %v", err)
	}
	// Its own generated key, when the backup holds it too.
	withKey := backup(t, src, keyFile)
	dir = t.TempDir()
	open(t, dir)
	key, err := os.ReadFile(keyFile)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, store.DefaultKeyFile), key, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Restore(dir, bytes.NewReader(withKey), store.RestoreOptions{}); err != nil {
		t.Fatalf("Restore into a folder holding format.json and the backup's key: %v", err)
	}
}

// TestBackupKeyNotGenerated: a backup asked to hold the key of a folder
// that has none fails, and generates none there.
func TestBackupKeyNotGenerated(t *testing.T) {
	dir := copyFixture(t, "format1")
	keyFile := filepath.Join(dir, store.DefaultKeyFile)
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Backup(dir, &bytes.Buffer{}, store.BackupOptions{IncludeKey: true}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("Backup with the key of a folder without one = %v, want a refusal", err)
	}
	if _, err := os.Stat(keyFile); !os.IsNotExist(err) {
		t.Fatalf("Backup generated a key: %v", err)
	}
}
