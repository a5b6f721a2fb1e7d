// Package store keeps the agent's desired state durable: every connection,
// pipeline, fanout schema and Kafka sink the API accepted. The server reads
// and changes it; the engine is handed what it holds.
//
// A single agent keeps one JSON file per object under its data folder
// (connections/<name>.json, pipelines/<name>.json,
// fanout_schemas/<name>.json, kafka_sinks/<name>.json): see [Open]. Each
// write goes to a temporary file in the same folder, is fsynced, renamed
// over the old file and the folder is fsynced, so a crash leaves either the
// old or the new object, never a torn one. Files are mode 0600 and folders
// 0700: objects may carry secrets (a connection's password, say) that the
// API never returns but the agent needs to read back on restart. The
// folder's format.json records the version of its format ([LocalFormat]);
// [Backup] and [Restore] copy the folder's state to a file and back.
//
// The agents of a cluster share one log of changes instead, under a prefix
// of the warehouse's object store: see [OpenShared].
//
// Secrets are encrypted at rest besides: every secret field of a connection
// (those [spec.Connection.SecretFields] lists) is stored as
// "enc:v1:<base64>", the AES-256-GCM encryption of the value (see
// [SecretsKeyFile] for the key). In memory, and to every reader, the
// values are plain.
package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// ErrNotFound is returned by [Collection.Get] and [Collection.Delete] when no
// object has the name. Test with errors.Is.
var ErrNotFound = errors.New("not found")

// File and folder modes: only the agent's user may read the state.
const (
	fileMode = 0o600
	dirMode  = 0o700
	// tempPrefix starts the name of a file being written; Open removes
	// leftovers of a crash mid-write.
	tempPrefix = ".tmp-"
	fileSuffix = ".json"
)

// Store is the agent's durable desired state. It is safe for concurrent use:
// each collection serialises its own writes, and reads never see a partly
// applied write.
type Store struct {
	// Connections holds every [spec.Connection] by name.
	Connections *Collection[spec.Connection]
	// Catalogs holds every [spec.Catalog] by name.
	Catalogs *Collection[spec.Catalog]
	// Pipelines holds every [spec.Pipeline] by name.
	Pipelines *Collection[spec.Pipeline]
	// FanoutSchemas holds every [spec.FanoutSchema] by name.
	FanoutSchemas *Collection[spec.FanoutSchema]
	// KafkaSinks holds every [spec.KafkaSink] by name.
	KafkaSinks *Collection[spec.KafkaSink]
	// Runs holds, in a cluster's shared state, the last run started of
	// each triggered pipeline, by pipeline name; a single agent keeps
	// none.
	Runs *Collection[Run]

	key *secretsKey
	// shared is the cluster's log; nil for a single agent's folder.
	shared *sharedLog
}

// Option configures [Open].
type Option func(*openConfig)

type openConfig struct {
	keyFile string // "" means the default key file in the data folder
}

// SecretsKeyFile makes Open take the key that encrypts the connections'
// secrets from file, overriding the default: the file [DefaultKeyFile] in
// the data folder, generated (mode 0600) when it does not exist.
//
// The file holds 32 random bytes in standard base64 (44 characters;
// surrounding white space is ignored), as made by
//
//	openssl rand -base64 32 > secrets.key && chmod 600 secrets.key
//
// It must not be readable by the group or others, but for a file root owns
// and lets its group read (see [Private]; [Store.KeyFileNote] is the
// warning to log then). A key kept apart from the data folder (a mounted
// secret, say) is what keeps a copy of the data folder from revealing the
// secrets.
func SecretsKeyFile(file string) Option {
	return func(c *openConfig) { c.keyFile = file }
}

// Open loads the state under dir, creating the folders it needs, and the
// key of the connections' secrets (see [SecretsKeyFile]). It fails, naming
// the file, when a stored object cannot be read back (a secret encrypted
// with another key, say), rather than start without it.
//
// A folder of a format newer than [LocalFormat] is refused before
// anything in it changes. One of an older format is migrated: every object
// that the older format allowed in a form this one does not (a secret in
// plain text) is written again in the current form, then format.json,
// last, so that a crash midway leaves a folder still of the older format,
// which the next Open migrates again.
func Open(dir string, opts ...Option) (*Store, error) {
	var cfg openConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return nil, fmt.Errorf("creating data folder: %w", err)
	}
	if err := checkNoRestoreMarker(dir); err != nil {
		return nil, err
	}
	format, err := readLocalFormat(dir)
	if err != nil {
		return nil, err
	}
	if err := removeTemps(dir); err != nil {
		return nil, err
	}
	key, err := loadKey(dir, cfg.keyFile)
	if err != nil {
		return nil, err
	}
	st := newStore(key, &localFiles{dir: dir})
	for _, k := range st.kinds() {
		if err := k.loadFolder(dir); err != nil {
			return nil, err
		}
	}
	if format < LocalFormat {
		if err := writeLocalFormat(dir, LocalFormat); err != nil {
			return nil, fmt.Errorf("migrating the data folder from format %d to format %d: %w", format, LocalFormat, err)
		}
	}
	return st, nil
}

// newStore returns a store of empty collections that keep persists.
func newStore(key *secretsKey, keep persister) *Store {
	return &Store{
		Connections: newCollection("connections", func(c *spec.Connection) string { return c.Name }, Codec[spec.Connection](key), keep),
		Catalogs: newCollection("catalogs", func(c *spec.Catalog) string { return c.Name },
			Codec[spec.Catalog](sealer[spec.Catalog, *spec.Catalog]{key: key, what: "catalog", nameOf: func(c *spec.Catalog) string { return c.Name }}), keep),
		Pipelines:     newCollection[spec.Pipeline]("pipelines", func(p *spec.Pipeline) string { return p.Name }, nil, keep),
		FanoutSchemas: newCollection[spec.FanoutSchema]("fanout_schemas", func(f *spec.FanoutSchema) string { return f.Name }, nil, keep),
		KafkaSinks:    newCollection[spec.KafkaSink]("kafka_sinks", func(k *spec.KafkaSink) string { return k.Name }, nil, keep),
		Runs:          newCollection[Run]("runs", func(r *Run) string { return r.Pipeline }, nil, keep),
		key:           key,
	}
}

// Run is the last run started of a triggered pipeline in a cluster: every
// agent starts its share of a run it has not started yet, so that a run
// started through one agent runs on all of them.
type Run struct {
	// Pipeline names the pipeline.
	Pipeline string `json:"pipeline"`
	// Seq counts the pipeline's runs started through the API.
	Seq int64 `json:"seq"`
}

// kind is what the store does with a collection, whatever its type.
type kind interface {
	// loadFolder reads the collection's folder under a data folder.
	loadFolder(root string) error
	// storedObjects returns the objects of the collection's folder under
	// a data folder, as stored.
	storedObjects(root string) (map[string][]byte, error)
	// checkStored checks that data, an object as stored, names itself
	// name.
	checkStored(name string, data []byte) error
	// kindName is the collection's folder, and its name in the shared log.
	kindName() string
	// unsealStored checks that data, an object as stored, opens with the
	// collection's codec (its secrets decrypt with the store's key).
	unsealStored(data []byte) error
	// sealedAll returns every object, sealed, by name.
	sealedAll() (map[string]json.RawMessage, error)
	// replace sets the named object from its sealed form (nil: removes
	// it) and tells the watchers.
	replace(name string, sealed []byte) error
}

// kinds returns the collections in the order a change log replays them:
// the objects each kind refers to first.
func (s *Store) kinds() []kind {
	return []kind{s.Connections, s.Catalogs, s.Pipelines, s.FanoutSchemas, s.KafkaSinks}
}

// Catalog returns the stored catalog named name, nil when there is none:
// where the tables of destination_catalog name are registered.
func (s *Store) Catalog(name string) *spec.Catalog {
	c, err := s.Catalogs.Get(name)
	if err != nil {
		return nil
	}
	return &c
}

// KeyFile returns the path of the file holding the key of the connections'
// secrets, and whether Open generated it.
func (s *Store) KeyFile() (path string, generated bool) {
	return s.key.file, s.key.generated
}

// KeyFileNote returns a warning for the agent to log about the
// permissions of the secrets key file, or "": a file root owns and lets
// its group read is accepted (see [Private]), and the note names that
// group, which must have no other member than the agent's user.
func (s *Store) KeyFileNote() string { return s.key.note }

// Codec turns an object of a collection into the form it is stored in on
// disk and back; the connections' codec encrypts their secrets.
// Implementations must be safe for concurrent use.
type Codec[T any] interface {
	// Seal turns v, a copy the collection owns, into its form on disk.
	Seal(v *T) error
	// Unseal turns v, as read from disk, back into its form in memory. It
	// reports stale when the file should be written again in the current
	// form (secrets an older agent stored in plain text).
	Unseal(v *T) (stale bool, err error)
}

// Collection is one kind of object, kept in memory as JSON so every reader
// gets its own deep copy. It is safe for concurrent use.
type Collection[T any] struct {
	kind   string // "pipelines": its folder, and its name in the shared log
	nameOf func(*T) string
	codec  Codec[T] // nil stores objects as they are
	keep   persister

	mu       sync.RWMutex
	items    map[string][]byte // the objects in memory, unsealed
	watchers []func([]T)
}

// persister keeps the collections' objects durable: a folder of files
// ([localFiles]) or the shared log of a cluster ([sharedLog]).
type persister interface {
	// write makes the change of the named object of kind durable, sealed
	// (nil: its removal), then calls apply, which puts the change in
	// memory; both under the persister's lock, so that changes reach
	// memory in the order they were made.
	write(kind, name string, sealed []byte, apply func()) error
}

func newCollection[T any](kind string, nameOf func(*T) string, codec Codec[T], keep persister) *Collection[T] {
	return &Collection[T]{kind: kind, nameOf: nameOf, codec: codec, keep: keep, items: map[string][]byte{}}
}

func (c *Collection[T]) kindName() string { return c.kind }

func (c *Collection[T]) unsealStored(data []byte) error {
	if c.codec == nil {
		return nil
	}
	v, err := decode[T](data)
	if err == nil {
		_, err = c.codec.Unseal(&v)
	}
	return err
}

// loadFolder reads every object of the collection's folder under root,
// creating the folder if needed.
func (c *Collection[T]) loadFolder(root string) error {
	dir := filepath.Join(root, c.kind)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return fmt.Errorf("creating %s folder: %w", c.kind, err)
	}
	// MkdirAll keeps the mode of a folder that exists; tighten one that an
	// earlier version or a person left readable by others.
	if err := os.Chmod(dir, dirMode); err != nil {
		return fmt.Errorf("restricting %s folder to its owner: %w", c.kind, err)
	}
	if err := removeTemps(dir); err != nil {
		return err
	}
	stored, err := c.storedObjects(root)
	if err != nil {
		return err
	}
	for name, data := range stored {
		if err := c.load(filepath.Join(dir, name+fileSuffix), name, data); err != nil {
			return err
		}
	}
	return nil
}

// storedObjects reads every object of the collection's folder under root,
// as stored (sealed), by name, and checks that each names itself like its
// file; it changes nothing, and a folder that does not exist holds none.
func (c *Collection[T]) storedObjects(root string) (map[string][]byte, error) {
	dir := filepath.Join(root, c.kind)
	names, err := objectFiles(dir)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(names))
	for _, name := range names {
		path := filepath.Join(dir, name+fileSuffix)
		data, err := os.ReadFile(path)
		if err == nil {
			err = c.checkStored(name, data)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		out[name] = data
	}
	return out, nil
}

// objectFiles returns the names of the objects stored in folder dir (its
// files <name>.json), sorted, without reading them; none when dir does not
// exist.
func objectFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), fileSuffix); ok && !e.IsDir() && !strings.HasPrefix(name, tempPrefix) {
			names = append(names, name)
		}
	}
	return names, nil
}

// removeTemps removes from dir the temporary files of writes that a crash
// cut short before their rename: the file each was to replace is still in
// place (or, for format.json and a generated key, is written again), so
// the leftovers are garbage.
func removeTemps(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("listing %s: %w", dir, err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempPrefix) || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("removing unfinished write %s: %w", path, err)
		}
	}
	return nil
}

// load unseals data, the stored object name read from file path, into
// memory; a stale file is written again in the current form.
func (c *Collection[T]) load(path, name string, data []byte) error {
	plain, stale, err := c.unseal(name, data)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if stale {
		sealed, err := c.seal(plain)
		if err == nil {
			err = c.keep.write(c.kind, name, sealed, func() {})
		}
		if err != nil {
			return fmt.Errorf("rewriting %s in the current form: %w", path, err)
		}
	}
	c.items[name] = plain
	return nil
}

// unseal checks that data, a stored object, names itself name, and
// returns it as memory keeps it, unsealed; stale says it should be stored
// again in the current form (see [Codec]).
func (c *Collection[T]) unseal(name string, data []byte) (plain []byte, stale bool, err error) {
	v, err := c.decodeStored(name, data)
	if err != nil {
		return nil, false, err
	}
	if c.codec == nil {
		return data, false, nil
	}
	if stale, err = c.codec.Unseal(&v); err != nil {
		return nil, false, err
	}
	plain, err = encode(&v)
	return plain, stale, err
}

// decodeStored decodes data, a stored object, checking that it names
// itself name; its secrets stay sealed.
func (c *Collection[T]) decodeStored(name string, data []byte) (T, error) {
	v, err := decode[T](data)
	if err != nil {
		return v, fmt.Errorf("%w; fix or remove it", err)
	}
	if got := c.nameOf(&v); got != name || !spec.ValidName(name) {
		return v, fmt.Errorf("the object is named %q, but it is stored as %q; rename or remove it", got, name)
	}
	return v, nil
}

// checkStored checks that data, an object as stored, decodes and names
// itself name.
func (c *Collection[T]) checkStored(name string, data []byte) error {
	_, err := c.decodeStored(name, data)
	return err
}

// encode returns v as the store writes it: indented JSON and a newline.
func encode[T any](v *T) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// seal returns plain, the JSON of an object in memory, as it is stored:
// sealed by the codec if there is one.
func (c *Collection[T]) seal(plain []byte) ([]byte, error) {
	if c.codec == nil {
		return plain, nil
	}
	// Seal a copy of its own: the caller's object and the bytes in memory
	// stay plain.
	v, err := decode[T](plain)
	if err != nil {
		return nil, err
	}
	if err := c.codec.Seal(&v); err != nil {
		return nil, err
	}
	return encode(&v)
}

// decode parses one object strictly: a field this version does not know
// would otherwise be dropped silently on the next write.
func decode[T any](data []byte) (T, error) {
	var v T
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return v, errors.New("unexpected data after the object")
	}
	return v, nil
}

// Get returns the named object; errors.Is(err, ErrNotFound) when there is
// none.
func (c *Collection[T]) Get(name string) (T, error) {
	c.mu.RLock()
	data, ok := c.items[name]
	c.mu.RUnlock()
	if !ok {
		var zero T
		return zero, fmt.Errorf("%q: %w", name, ErrNotFound)
	}
	// The bytes were produced by json.Marshal of a T or checked by load,
	// so this fails only if memory is corrupt; still, say so.
	return decode[T](data)
}

// List returns every object, sorted by name.
func (c *Collection[T]) List() ([]T, error) {
	type entry struct {
		name string
		data []byte
	}
	c.mu.RLock()
	entries := make([]entry, 0, len(c.items))
	for name, data := range c.items {
		entries = append(entries, entry{name, data})
	}
	c.mu.RUnlock()
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	out := make([]T, 0, len(entries))
	for _, e := range entries {
		v, err := decode[T](e.data)
		if err != nil {
			return nil, fmt.Errorf("decoding %q: %w", e.name, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// Put stores v under its name, replacing any object of that name, and
// returns once the write is durable. In a cluster, an error wrapping
// [ErrConflict] means another agent changed the state first: [Store.Sync],
// check again, and retry.
func (c *Collection[T]) Put(v *T) error {
	name := c.nameOf(v)
	if !spec.ValidName(name) {
		return fmt.Errorf("storing %q: not a valid name", name)
	}
	data, err := encode(v)
	if err != nil {
		return fmt.Errorf("encoding %q: %w", name, err)
	}
	sealed, err := c.seal(data)
	if err == nil {
		err = c.keep.write(c.kind, name, sealed, func() { c.set(name, data) })
	}
	if err != nil {
		return fmt.Errorf("storing %q: %w", name, err)
	}
	return nil
}

// Delete removes the named object durably; errors.Is(err, ErrNotFound) when
// there is none. In a cluster, an error wrapping [ErrConflict] means what
// it means for [Collection.Put].
func (c *Collection[T]) Delete(name string) error {
	c.mu.RLock()
	_, ok := c.items[name]
	c.mu.RUnlock()
	if !ok {
		return fmt.Errorf("%q: %w", name, ErrNotFound)
	}
	if err := c.keep.write(c.kind, name, nil, func() { c.set(name, nil) }); err != nil {
		return fmt.Errorf("deleting %q: %w", name, err)
	}
	return nil
}

// set puts plain, the JSON of the named object, in memory (nil: removes
// it) and tells the watchers.
func (c *Collection[T]) set(name string, plain []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if plain == nil {
		delete(c.items, name)
	} else {
		c.items[name] = plain
	}
	c.notify()
}

// replace sets the named object from sealed, its stored form, or removes
// it when sealed is nil: a change another agent made.
func (c *Collection[T]) replace(name string, sealed []byte) error {
	if sealed == nil {
		c.set(name, nil)
		return nil
	}
	plain, _, err := c.unseal(name, sealed)
	if err != nil {
		return fmt.Errorf("%s %q: %w", c.kind, name, err)
	}
	c.set(name, plain)
	return nil
}

// sealedAll returns every object of the collection in its stored form, by
// name.
func (c *Collection[T]) sealedAll() (map[string]json.RawMessage, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[string]json.RawMessage, len(c.items))
	for name, plain := range c.items {
		sealed, err := c.seal(plain)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", c.kind, name, err)
		}
		out[name] = sealed
	}
	return out, nil
}

// Watch calls fn with every object, in name order, now and after every
// change of the collection, in the order of the changes. fn runs while the
// collection is locked for writing: it must be quick, must not use the
// collection, and must not change or keep all, which other watchers get
// too. There is no way to stop watching; the agent watches for its
// whole life.
func (c *Collection[T]) Watch(fn func(all []T)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchers = append(c.watchers, fn)
	fn(c.snapshot())
}

// notify calls every watcher; the caller holds c.mu for writing.
func (c *Collection[T]) notify() {
	if len(c.watchers) == 0 {
		return
	}
	all := c.snapshot()
	for _, fn := range c.watchers {
		fn(all)
	}
}

// snapshot returns every object in name order, skipping any that does not
// decode (which only corrupt memory could cause); the caller holds c.mu.
func (c *Collection[T]) snapshot() []T {
	names := slices.Sorted(maps.Keys(c.items))
	out := make([]T, 0, len(names))
	for _, name := range names {
		if v, err := decode[T](c.items[name]); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// localFiles keeps each object in a file of its collection's folder under
// dir.
type localFiles struct {
	dir string
	mu  sync.Mutex
}

func (l *localFiles) write(kind, name string, sealed []byte, apply func()) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	dir := filepath.Join(l.dir, kind)
	if sealed != nil {
		if err := writeFileAtomic(dir, name+fileSuffix, sealed); err != nil {
			return err
		}
	} else {
		if err := os.Remove(filepath.Join(dir, name+fileSuffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	apply()
	return nil
}

// writeFileAtomic replaces dir/name with data, as [WriteFileAtomic] does.
func writeFileAtomic(dir, name string, data []byte) error {
	return WriteFileAtomic(filepath.Join(dir, name), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFileAtomic replaces file, mode 0600, with what write writes: into a
// temporary file beside it (its name starts with ".tmp-"), fsynced, renamed
// over file, and the folder fsynced so that the rename survives a crash.
// file is then either the old one or the whole new one, never a torn one.
func WriteFileAtomic(file string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(file)
	f, err := os.CreateTemp(dir, tempPrefix+filepath.Base(file)+"-*")
	if err != nil {
		return fmt.Errorf("creating a temporary file beside %s: %w", file, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp) // best effort; Open removes leftovers too
		}
	}()
	// CreateTemp already uses 0600; Chmod makes the mode independent of it.
	if err := f.Chmod(fileMode); err != nil {
		return fmt.Errorf("restricting %s to its owner: %w", tmp, err)
	}
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("replacing %s: %w", file, err)
	}
	return syncDir(dir)
}

// syncDir fsyncs the folder dir, so that the files created, renamed or
// removed in it stay so after a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("opening folder %s to sync it: %w", dir, err)
	}
	if err := d.Sync(); err != nil {
		_ = d.Close()
		return fmt.Errorf("syncing folder %s: %w", dir, err)
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("closing folder %s: %w", dir, err)
	}
	return nil
}
