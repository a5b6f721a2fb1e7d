// Package store keeps the agent's desired state durable: every connection,
// pipeline and fanout schema the API accepted, one JSON file per object
// under the data folder (connections/<name>.json, pipelines/<name>.json,
// fanout_schemas/<name>.json).
//
// Each write goes to a temporary file in the same folder, is fsynced, renamed
// over the old file and the folder is fsynced, so a crash leaves either the
// old or the new object, never a torn one. Files are mode 0600 and folders
// 0700: objects may carry secrets (a connection's password, say) that the API
// never returns but the agent needs to read back on restart.
package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	// Pipelines holds every [spec.Pipeline] by name.
	Pipelines *Collection[spec.Pipeline]
	// FanoutSchemas holds every [spec.FanoutSchema] by name.
	FanoutSchemas *Collection[spec.FanoutSchema]
}

// Open loads the state under dir, creating the folders it needs. It fails,
// naming the file, when a stored object cannot be read back, rather than
// start without it.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return nil, fmt.Errorf("creating data folder: %w", err)
	}
	conns, err := openCollection(dir, "connections", func(c *spec.Connection) string { return c.Name })
	if err != nil {
		return nil, err
	}
	pipes, err := openCollection(dir, "pipelines", func(p *spec.Pipeline) string { return p.Name })
	if err != nil {
		return nil, err
	}
	fanouts, err := openCollection(dir, "fanout_schemas", func(f *spec.FanoutSchema) string { return f.Name })
	if err != nil {
		return nil, err
	}
	return &Store{Connections: conns, Pipelines: pipes, FanoutSchemas: fanouts}, nil
}

// Collection is one kind of object, kept in memory as the JSON stored on
// disk so every reader gets its own deep copy. It is safe for concurrent use.
type Collection[T any] struct {
	dir    string
	nameOf func(*T) string

	mu    sync.RWMutex
	items map[string][]byte
}

func openCollection[T any](root, kind string, nameOf func(*T) string) (*Collection[T], error) {
	dir := filepath.Join(root, kind)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return nil, fmt.Errorf("creating %s folder: %w", kind, err)
	}
	// MkdirAll keeps the mode of a folder that exists; tighten one that an
	// earlier version or a person left readable by others.
	if err := os.Chmod(dir, dirMode); err != nil {
		return nil, fmt.Errorf("restricting %s folder to its owner: %w", kind, err)
	}
	c := &Collection[T]{dir: dir, nameOf: nameOf, items: map[string][]byte{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", kind, err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), tempPrefix):
			// A write that crashed before its rename: the object it was
			// replacing is still in place, so the leftover is garbage.
			if err := os.Remove(path); err != nil {
				return nil, fmt.Errorf("removing unfinished write %s: %w", path, err)
			}
		case e.IsDir() || !strings.HasSuffix(e.Name(), fileSuffix):
			continue
		default:
			if err := c.load(path, strings.TrimSuffix(e.Name(), fileSuffix)); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// load reads one stored object and checks it names itself like its file.
func (c *Collection[T]) load(path, name string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	v, err := decode[T](data)
	if err != nil {
		return fmt.Errorf("reading %s: %w; fix or remove the file", path, err)
	}
	if got := c.nameOf(&v); got != name || !spec.ValidName(name) {
		return fmt.Errorf("reading %s: the object is named %q, but the file name says %q; rename or remove the file", path, got, name)
	}
	c.items[name] = data
	return nil
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
// returns once the write is durable.
func (c *Collection[T]) Put(v *T) error {
	name := c.nameOf(v)
	if !spec.ValidName(name) {
		return fmt.Errorf("storing %q: not a valid name", name)
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %q: %w", name, err)
	}
	data = append(data, '\n')
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := writeFileAtomic(c.dir, name+fileSuffix, data); err != nil {
		return fmt.Errorf("storing %q: %w", name, err)
	}
	c.items[name] = data
	return nil
}

// Delete removes the named object durably; errors.Is(err, ErrNotFound) when
// there is none.
func (c *Collection[T]) Delete(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[name]; !ok {
		return fmt.Errorf("%q: %w", name, ErrNotFound)
	}
	if err := os.Remove(filepath.Join(c.dir, name+fileSuffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("deleting %q: %w", name, err)
	}
	if err := syncDir(c.dir); err != nil {
		return fmt.Errorf("deleting %q: %w", name, err)
	}
	delete(c.items, name)
	return nil
}

// writeFileAtomic replaces dir/name with data: write a temporary file, fsync
// it, rename it over the target and fsync the folder so the rename survives
// a crash.
func writeFileAtomic(dir, name string, data []byte) (err error) {
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp) // best effort; Open removes leftovers too
		}
	}()
	// CreateTemp already uses 0600; Chmod makes the mode independent of it.
	if err := f.Chmod(fileMode); err != nil {
		_ = f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		_ = d.Close()
		return fmt.Errorf("syncing folder %s: %w", dir, err)
	}
	return d.Close()
}
