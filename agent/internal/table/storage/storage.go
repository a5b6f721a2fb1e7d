package storage

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"time"
)

// Open returns the store of the table at location: a local folder (a
// path, or a file:// URL), whose new files get permission mode (see
// [Options.FileMode]), or a prefix in an object store (s3://, gs://,
// azblob:// or abfss:// URL; see [openBlobStore]).
func Open(location string, mode os.FileMode) (Store, error) {
	if dir, ok := localDir(location); ok {
		return newLocal(dir, mode), nil
	}
	u, _ := url.Parse(location) // localDir has parsed it
	switch u.Scheme {
	case "s3", "gs", "azblob", "abfss":
		return openBlobStore(u)
	}
	return nil, fmt.Errorf("table location %s: unsupported scheme %q (want a path, or a file, s3, gs, azblob or abfss URL)", redact(u), u.Scheme)
}

// IsLocal reports whether location is a folder on local disk (a path or a
// file:// URL) rather than a prefix in an object store.
func IsLocal(location string) bool {
	_, ok := localDir(location)
	return ok
}

// localDir returns the folder on local disk that location names: location
// itself when it is a path, the path of a file:// URL. ok is false for any
// other URL.
func localDir(location string) (dir string, ok bool) {
	u, err := url.Parse(location)
	switch {
	case err != nil || u.Scheme == "" || len(u.Scheme) == 1: // a path (or a Windows drive letter)
		return location, true
	case u.Scheme == "file":
		return u.Path, true
	}
	return "", false
}

// Store is where one table's files live: a folder on local disk
// ([localStore]) or a prefix in an object store ([blobStore]). Names are
// slash-separated and relative to the table's location ("_delta_log/
// 00000000000000000003.json"). A missing name is an error wrapping
// fs.ErrNotExist; a name a put-if-absent finds taken, fs.ErrExist.
type Store interface {
	// Create starts writing object name. Nothing is visible under name
	// until the writer's commit, which never replaces an existing object.
	// A write a crash interrupts leaves at most a temporary file named
	// like the local store's (see [tempName]) or, on an object
	// store, an unfinished upload the store discards.
	Create(name string) (Writer, error)
	// PutIfAbsent creates name with data, atomically and durably, unless
	// name exists: then it returns an error wrapping fs.ErrExist and
	// changes nothing.
	PutIfAbsent(name string, data []byte) error
	// Put writes name with data, atomically, replacing it if it exists.
	Put(name string, data []byte) error
	// Read returns the content of name.
	Read(name string) ([]byte, error)
	// Open opens name for reading at any offset.
	Open(name string) (File, error)
	// List returns the files and folders directly in folder dir ("" for
	// the table's own), none when it does not exist.
	List(dir string) ([]Entry, error)
	// Stat describes name.
	Stat(name string) (Entry, error)
	// Remove deletes name; a name that does not exist is not an error.
	Remove(name string) error
	// Lock takes the table's writer lock, naming owner, where the store
	// has one (a local folder); release gives it back. Object stores have
	// none: put-if-absent log entries and the offsets each commit starts
	// from keep writers apart there.
	Lock(owner string) (release func() error, err error)
	// Close releases the store's connections.
	Close() error
	// String is the table's location, for messages.
	String() string
}

// Writer is an object being written by [Store.Create].
type Writer interface {
	io.Writer
	// Commit makes the object visible under its name, durably, and
	// returns its size and modification time. It fails with an error
	// wrapping fs.ErrExist when the name is taken; after any error the
	// object is discarded.
	Commit() (Entry, error)
	// Abort discards the object; after Commit it does nothing.
	Abort()
}

// File is an object open for reading.
type File interface {
	io.ReaderAt
	io.Closer
	// Size is the object's length in bytes.
	Size() int64
}

// Entry describes a file or folder of a store.
type Entry struct {
	Name    string // base name, in its folder
	Size    int64
	ModTime time.Time
	// Dir is set on a folder (a common prefix of an object store); Other
	// is set on what is neither a folder nor a regular file (a symbolic
	// link, a device).
	Dir, Other bool
}
