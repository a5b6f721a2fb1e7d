package store_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// secureConnection returns a connection with every secret field set, each
// to a distinct value.
func secureConnection(name string) *spec.Connection {
	return &spec.Connection{
		Name: name, BootstrapServers: []string{"broker:9093"}, SecurityProtocol: "SASL_SSL",
		SASL: &spec.SASL{Mechanism: spec.SASLOAuthBearer, Username: "ingest", Password: "sasl-password-1",
			OAuth: &spec.OAuth{ClientID: "agent", ClientSecret: "oauth-client-secret-2", Token: "static-token-3"}},
		TLS: &spec.TLS{KeyPEM: "-----BEGIN PRIVATE KEY-----\nkey-pem-4\n-----END PRIVATE KEY-----\n",
			KeystoreP12Base64: "a2V5c3RvcmUtNQ==", KeystorePassword: "keystore-password-6"},
		SchemaRegistry: &spec.SchemaRegistry{URL: "https://registry:8081", APIKey: "key", APISecret: "registry-secret-7"},
	}
}

// secretValues returns the value of every secret field of c.
func secretValues(c *spec.Connection) []string {
	var out []string
	for _, f := range c.SecretFields() {
		out = append(out, *f.Value)
	}
	return out
}

// assertNoSecret fails t if file, a stored connection, holds any of
// secrets as JSON writes it.
func assertNoSecret(t *testing.T, file string, secrets []string) {
	t.Helper()
	for _, secret := range secrets {
		quoted, err := json.Marshal(secret)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(file, string(quoted[1:len(quoted)-1])) {
			t.Errorf("the file holds secret %q in clear:\n%s", secret, file)
		}
	}
}

func connFile(dir, name string) string { return filepath.Join(dir, "connections", name+".json") }

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestSecretsEncryptedAtRest: the file on disk holds no secret in clear,
// every secret is sealed, and a reopened store gives them back.
func TestSecretsEncryptedAtRest(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	c := secureConnection("secure")
	want := secretValues(c)
	if err := s.Connections.Put(c); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if !reflect.DeepEqual(secretValues(c), want) {
		t.Fatalf("Put changed the caller's connection: %v", secretValues(c))
	}
	onDisk := readFile(t, connFile(dir, "secure"))
	assertNoSecret(t, onDisk, want)
	var stored spec.Connection
	if err := json.Unmarshal([]byte(onDisk), &stored); err != nil {
		t.Fatal(err)
	}
	for _, f := range stored.SecretFields() {
		if !strings.HasPrefix(*f.Value, "enc:v1:") {
			t.Errorf("%s on disk = %q, want enc:v1:...", f.Path, *f.Value)
		}
	}
	if stored.SASL.Username != "ingest" || stored.SchemaRegistry.APIKey != "key" {
		t.Errorf("a field that is no secret was changed on disk: %+v", stored)
	}

	for _, st := range []*store.Store{s, open(t, dir)} {
		got, err := st.Connections.Get("secure")
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if !reflect.DeepEqual(&got, c) {
			t.Errorf("Get = %+v, want %+v", got, c)
		}
	}
	// Each write seals with new nonces.
	if err := s.Connections.Put(c); err != nil {
		t.Fatal(err)
	}
	if again := readFile(t, connFile(dir, "secure")); again == onDisk {
		t.Error("two writes of the same connection gave the same ciphertext")
	}
}

// TestSecretsKeyFileGenerated: without a key file, Open generates one in
// the data folder, mode 0600, and uses it again on the next Open.
func TestSecretsKeyFileGenerated(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	path, generated := s.KeyFile()
	if path != filepath.Join(dir, store.DefaultKeyFile) || !generated {
		t.Fatalf("KeyFile() = %s, %v; want the default file, generated", path, generated)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %o, want 600", fi.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("leftover %s in the data folder", e.Name())
		}
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(readFile(t, path)))
	if err != nil || len(key) != 32 {
		t.Errorf("key file holds %d bytes (%v), want 32 in base64", len(key), err)
	}
	if err := s.Connections.Put(secureConnection("c")); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, dir)
	if _, generated := s2.KeyFile(); generated {
		t.Error("the second Open generated another key")
	}
	if _, err := s2.Connections.Get("c"); err != nil {
		t.Fatal(err)
	}
}

func writeKey(t *testing.T, path string, b byte, mode os.FileMode) {
	t.Helper()
	key := make([]byte, 32)
	for i := range key {
		key[i] = b
	}
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// TestSecretsWrongKey: a store encrypted with one key does not open with
// another, and the error names the connection file, the field and the key
// file without any secret.
func TestSecretsWrongKey(t *testing.T) {
	dir, keys := t.TempDir(), t.TempDir()
	right, wrong := filepath.Join(keys, "right.key"), filepath.Join(keys, "wrong.key")
	writeKey(t, right, 1, 0o600)
	writeKey(t, wrong, 2, 0o600)
	s, err := store.Open(dir, store.SecretsKeyFile(right))
	if err != nil {
		t.Fatal(err)
	}
	if path, generated := s.KeyFile(); path != right || generated {
		t.Fatalf("KeyFile() = %s, %v; want %s", path, generated, right)
	}
	c := secureConnection("secure")
	if err := s.Connections.Put(c); err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(dir, store.SecretsKeyFile(wrong))
	if err == nil {
		t.Fatal("Open with the wrong key succeeded")
	}
	msg := err.Error()
	for _, want := range []string{connFile(dir, "secure"), wrong, "cannot be decrypted", "--secrets-key-file"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	for _, secret := range secretValues(c) {
		if strings.Contains(msg, secret) {
			t.Errorf("error holds secret %q: %s", secret, msg)
		}
	}
	// Without the key file, the generated key is the wrong one, and the
	// error says it was just made.
	if _, err := store.Open(dir); err == nil || !strings.Contains(err.Error(), "generated just now") {
		t.Errorf("Open with a generated key: err = %v, want one saying the key was just generated", err)
	}
	if _, err := store.Open(dir, store.SecretsKeyFile(right)); err != nil {
		t.Errorf("Open with the right key again: %v", err)
	}
}

// TestSecretsSwappedValues: a sealed value moved to another field or
// connection does not decrypt.
func TestSecretsSwappedValues(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Connections.Put(secureConnection("a")); err != nil {
		t.Fatal(err)
	}
	if err := s.Connections.Put(secureConnection("b")); err != nil {
		t.Fatal(err)
	}
	var a, b spec.Connection
	for name, c := range map[string]*spec.Connection{"a": &a, "b": &b} {
		if err := json.Unmarshal([]byte(readFile(t, connFile(dir, name))), c); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func()
	}{
		{"another field", func() { a.SASL.Password = a.TLS.KeystorePassword }},
		{"another connection", func() { a.SASL.Password = b.SASL.Password }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := a.SASL.Password
			defer func() { a.SASL.Password = saved }()
			tc.mutate()
			data, err := json.Marshal(&a)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(connFile(dir, "a"), data, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := store.Open(dir); err == nil || !strings.Contains(err.Error(), "sasl.password cannot be decrypted") {
				t.Fatalf("Open: err = %v, want sasl.password cannot be decrypted", err)
			}
		})
	}
}

// TestSecretsLegacyPlainFile: a connection an older agent stored with plain
// secrets loads, and Open writes it again encrypted.
func TestSecretsLegacyPlainFile(t *testing.T) {
	dir := t.TempDir()
	c := secureConnection("old")
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "connections"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(connFile(dir, "old"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir)
	got, err := s.Connections.Get("old")
	if err != nil || !reflect.DeepEqual(&got, c) {
		t.Fatalf("Get = %+v, %v; want %+v", got, err, c)
	}
	assertNoSecret(t, readFile(t, connFile(dir, "old")), secretValues(c))
	if got, err := open(t, dir).Connections.Get("old"); err != nil || !reflect.DeepEqual(&got, c) {
		t.Fatalf("Get after the rewrite = %+v, %v", got, err)
	}
}

func TestSecretsKeyFileRefused(t *testing.T) {
	keys := t.TempDir()
	loose := filepath.Join(keys, "loose.key")
	writeKey(t, loose, 1, 0o640)
	short := filepath.Join(keys, "short.key")
	if err := os.WriteFile(short, []byte(base64.StdEncoding.EncodeToString([]byte("sixteen byte key"))), 0o600); err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(keys, "raw.key")
	if err := os.WriteFile(raw, []byte(strings.Repeat("k", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{loose, "may be read by other users (mode 0640); restrict it with `chmod 600 " + loose},
		{short, "does not hold a key: it must hold 32 random bytes in base64"},
		{raw, "does not hold a key"},
		{filepath.Join(keys, "missing.key"), "does not exist; create one with `openssl rand -base64 32"},
		{keys, "not a regular file"},
	} {
		_, err := store.Open(t.TempDir(), store.SecretsKeyFile(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.file) {
			t.Errorf("Open with %s: err = %v, want one naming the file and saying %q", filepath.Base(tc.file), err, tc.want)
		}
	}
}

// TestWatch: a watcher sees every object now and after every change.
func TestWatch(t *testing.T) {
	s := open(t, t.TempDir())
	if err := s.Connections.Put(secureConnection("a")); err != nil {
		t.Fatal(err)
	}
	var seen [][]string
	s.Connections.Watch(func(all []spec.Connection) {
		var names []string
		for _, c := range all {
			names = append(names, c.Name+"="+c.SASL.Password)
		}
		seen = append(seen, names)
	})
	if err := s.Connections.Put(secureConnection("b")); err != nil {
		t.Fatal(err)
	}
	if err := s.Connections.Delete("a"); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"a=sasl-password-1"}, {"a=sasl-password-1", "b=sasl-password-1"}, {"b=sasl-password-1"}}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("watcher saw %v, want %v", seen, want)
	}
}
