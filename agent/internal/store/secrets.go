package store

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// DefaultKeyFile is the name, in the data folder, of the key file Open
// generates when no [SecretsKeyFile] is given.
const DefaultKeyFile = "secrets.key"

const (
	// keySize is AES-256's key length.
	keySize = 32
	// maxKeyFileBytes bounds what is read of a key file: its base64 and
	// some white space.
	maxKeyFileBytes = 1 << 10
	// sealedPrefix starts a secret's value on disk: the version of the
	// format, then the base64 of the GCM nonce followed by the ciphertext
	// and its tag.
	sealedPrefix = "enc:v1:"
)

// secretsKey encrypts and decrypts the secrets of connections; it is the
// connections' [Codec]. It is safe for concurrent use.
type secretsKey struct {
	aead cipher.AEAD
	// file is where the key came from; generated says Open just made it.
	file      string
	generated bool
	// note is a warning about the file's permissions to log (see
	// [groupNote]); "" for none.
	note string
}

var _ Codec[spec.Connection] = (*secretsKey)(nil)

// loadKey returns the key in file or, when file is "", in the default key
// file of dir, which it generates if it does not exist.
func loadKey(dir, file string) (*secretsKey, error) {
	generated := false
	if file == "" {
		file = filepath.Join(dir, DefaultKeyFile)
		var err error
		if generated, err = generateKey(file); err != nil {
			return nil, err
		}
	}
	raw, note, err := readKeyFileNote(file)
	if err != nil {
		return nil, err
	}
	key, err := newSecretsKey(raw, file)
	if err != nil {
		return nil, err
	}
	key.generated, key.note = generated, note
	return key, nil
}

// newSecretsKey returns the key raw, which came from file (or what file
// names, in errors).
func newSecretsKey(raw []byte, file string) (*secretsKey, error) {
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("secrets key file %s: %w", file, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets key file %s: %w", file, err)
	}
	return &secretsKey{aead: aead, file: file}, nil
}

// hasPlainSecret reports whether c, as stored, holds a secret in plain
// text, as agents before the secrets key stored them.
func hasPlainSecret(c *spec.Connection) bool {
	for _, f := range c.SecretFields() {
		if *f.Value != "" && !strings.HasPrefix(*f.Value, sealedPrefix) {
			return true
		}
	}
	return false
}

// generateKey writes a new random key to file unless the file exists, and
// reports whether it did. The key is written to a temporary file first and
// linked into place, which fails if another key got there first, so file
// never holds a partial key; and the write is durable before generateKey
// returns: secrets encrypted with a key that a crash lost could never be
// read again.
func generateKey(file string) (generated bool, err error) {
	if _, err := os.Lstat(file); err == nil {
		return false, nil
	}
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return false, fmt.Errorf("generating the secrets key: %w", err)
	}
	dir := filepath.Dir(file)
	f, err := os.CreateTemp(dir, tempPrefix+"key-*")
	if err != nil {
		return false, fmt.Errorf("creating the secrets key file: %w", err)
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }() // linked into place, or garbage
	if err := writeKey(f, key); err != nil {
		return false, fmt.Errorf("writing the secrets key file %s: %w", file, err)
	}
	if err := os.Link(tmp, file); err != nil {
		if errors.Is(err, os.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("creating the secrets key file: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return false, fmt.Errorf("writing the secrets key file %s: %w", file, err)
	}
	return true, nil
}

// writeKey writes key in base64 to f, mode 0600, syncs and closes it.
func writeKey(f *os.File, key []byte) error {
	err := f.Chmod(fileMode)
	if err == nil {
		_, err = f.WriteString(encodeKey(key) + "\n")
	}
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	return err
}

// readKeyFile returns the key in file, refusing a file others may read
// (see [Private]).
func readKeyFile(file string) ([]byte, error) {
	key, _, err := readKeyFileNote(file)
	return key, err
}

// readKeyFileNote is readKeyFile, and returns besides the warning to log
// about the file's group, if any (see [groupNote]).
func readKeyFileNote(file string) (key []byte, note string, err error) {
	f, err := os.Open(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, "", fmt.Errorf("secrets key file %s does not exist; create one with `openssl rand -base64 32 > %s && chmod 600 %s`, "+
				"or leave --secrets-key-file out to keep a generated key in the data folder", file, file, file)
		}
		return nil, "", fmt.Errorf("opening the secrets key file: %w", err)
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return nil, "", fmt.Errorf("secrets key file %s: %w", file, err)
	}
	if !info.Mode().IsRegular() {
		return nil, "", fmt.Errorf("secrets key file %s is not a regular file", file)
	}
	// Windows has no such permission bits; its ACLs are the user's.
	if !Private(info) && runtime.GOOS != "windows" {
		return nil, "", fmt.Errorf("secrets key file %s may be read by other users (mode %04o); restrict it with `chmod 600 %s`",
			file, info.Mode().Perm(), file)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("reading the secrets key file %s: %w", file, err)
	}
	if key, err = decodeKey(data); err != nil {
		return nil, "", fmt.Errorf("secrets key file %s does not hold a key: %w", file, err)
	}
	return key, groupNote(file, info), nil
}

// encodeKey returns key as a key file holds it, without the newline.
func encodeKey(key []byte) string { return base64.StdEncoding.EncodeToString(key) }

// decodeKey returns the key in data, the content of a key file.
func decodeKey(data []byte) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(data)))
	if len(data) > maxKeyFileBytes || err != nil || len(key) != keySize {
		return nil, fmt.Errorf("it must hold %d random bytes in base64, as made by `openssl rand -base64 32`", keySize)
	}
	return key, nil
}

// secretHolder is an object with secrets: a connection or a catalog.
type secretHolder interface {
	SecretFields() []spec.SecretField
}

// sealer is the [Codec] of a kind of object with secrets: key encrypts
// every secret its fields list, bound to the object (see additionalData).
type sealer[T any, P interface {
	*T
	secretHolder
}] struct {
	key *secretsKey
	// what names the kind, as "connection"; nameOf names an object.
	what   string
	nameOf func(*T) string
}

// Seal implements [Codec].
func (s sealer[T, P]) Seal(v *T) error { return s.key.seal(s.what, s.nameOf(v), P(v)) }

// Unseal implements [Codec].
func (s sealer[T, P]) Unseal(v *T) (stale bool, err error) {
	return s.key.unseal(s.what, s.nameOf(v), P(v))
}

// additionalData binds a sealed value to its object, of kind what, and
// field, so that a value copied into another field or object fails to
// decrypt instead of being used there.
func additionalData(what, name, path string) string {
	return what + "s/" + name + "#" + path
}

// Seal encrypts every secret of c that is set, each with a random nonce.
func (k *secretsKey) Seal(c *spec.Connection) error { return k.seal("connection", c.Name, c) }

// Unseal decrypts every encrypted secret of c. A secret in plain text,
// written by an agent that did not encrypt, is kept and makes c stale.
func (k *secretsKey) Unseal(c *spec.Connection) (stale bool, err error) {
	return k.unseal("connection", c.Name, c)
}

// seal encrypts every secret of v, the object name of kind what, that is
// set, each with a random nonce.
func (k *secretsKey) seal(what, name string, v secretHolder) error {
	for _, f := range v.SecretFields() {
		if *f.Value == "" {
			continue
		}
		sealed, err := k.sealText(*f.Value, additionalData(what, name, f.Path))
		if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		*f.Value = sealed
	}
	return nil
}

// unseal decrypts every encrypted secret of v, the object name of kind
// what. A secret in plain text is kept and makes v stale.
func (k *secretsKey) unseal(what, name string, v secretHolder) (stale bool, err error) {
	for _, f := range v.SecretFields() {
		if *f.Value == "" {
			continue
		}
		if !strings.HasPrefix(*f.Value, sealedPrefix) {
			stale = true
			continue
		}
		plain, err := k.openText(*f.Value, additionalData(what, name, f.Path))
		if errors.Is(err, errDamaged) {
			return false, fmt.Errorf("the encrypted %s is damaged; fix or remove the file, then PUT the %s again", f.Path, what)
		}
		if err != nil {
			hint := "pass the --secrets-key-file the agent used when it stored the " + what
			if k.generated {
				hint = "that key was generated just now because the file did not exist: restore the key file the agent used before"
			}
			return false, fmt.Errorf("%s cannot be decrypted with the key in %s (%s), or the value was altered; "+
				"otherwise remove the file and PUT the %s again", f.Path, k.file, hint, what)
		}
		*f.Value = plain
	}
	return stale, nil
}

// errDamaged is what openText returns for a value too broken to try the
// key on.
var errDamaged = errors.New("a damaged encrypted value")

// sealText encrypts text, bound to context (see additionalData), in the
// form secrets are stored in.
func (k *secretsKey) sealText(text, context string) (string, error) {
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(text)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("encrypting: %w", err)
	}
	return sealedPrefix + base64.StdEncoding.EncodeToString(k.aead.Seal(nonce, nonce, []byte(text), []byte(context))), nil
}

// openText decrypts what sealText returned for context; it fails when the
// key is another or the value was altered.
func (k *secretsKey) openText(value, context string) (string, error) {
	text, ok := strings.CutPrefix(value, sealedPrefix)
	if !ok {
		return "", errors.New("not an encrypted value")
	}
	sealed, err := base64.StdEncoding.DecodeString(text)
	if err != nil || len(sealed) < k.aead.NonceSize()+k.aead.Overhead() {
		return "", errDamaged
	}
	n := k.aead.NonceSize()
	plain, err := k.aead.Open(nil, sealed[:n], sealed[n:], []byte(context))
	if err != nil {
		return "", err
	}
	return string(plain), nil
}
