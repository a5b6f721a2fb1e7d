package storage

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Open returns the store at location: a folder on local disk (a path, or a
// file:// URL), whose new files get permission mode and new folders mode
// plus x wherever it has r, or a prefix in an object store bucket: s3://,
// gs://, azblob:// or abfss:// URL (see [openBlobStore] for their forms,
// credentials and driver options). Opening creates nothing; a local folder
// is created by the first write. A location of another scheme is an error
// that names the schemes there are.
func Open(location string, mode os.FileMode) (Store, error) {
	if dir, ok := spec.LocalPath(location); ok {
		return newLocal(dir, mode), nil
	}
	u, _ := url.Parse(location) // LocalPath has parsed it
	switch u.Scheme {
	case "s3", "gs", "azblob", "abfss":
		return openBlobStore(u)
	}
	return nil, fmt.Errorf("table location %s: unsupported scheme %q (want a path, or a file, s3, gs, azblob or abfss URL)", redact(u), u.Scheme)
}

// IsLocal reports whether location is a folder on local disk (a path or a
// file:// URL) rather than a prefix in an object store.
func IsLocal(location string) bool {
	_, ok := spec.LocalPath(location)
	return ok
}

// Store is where one table's files live: a folder on local disk
// ([localStore]) or a prefix in an object store ([blobStore]). Names are
// slash-separated and relative to the location ("_delta_log/
// 00000000000000000003.json"). A name that does not exist is an error
// wrapping [io/fs.ErrNotExist]; a name a put-if-absent finds taken, one
// wrapping [io/fs.ErrExist]. What a call reports written is durable and whole
// (see the package doc). A Store is safe for concurrent use; its [Writer]s
// are not.
type Store interface {
	// Create starts writing object name, streaming: for objects too large
	// to hold in memory. Nothing is visible under name until the writer's
	// Commit, which never replaces an existing object. A write a crash
	// interrupts leaves at most a file under its temporary name on local
	// disk (see [TempName]) or, on an object store, an unfinished upload
	// the store discards.
	Create(name string) (Writer, error)
	// PutIfAbsent creates name with data, atomically and durably, unless
	// name exists: then it returns an error wrapping [io/fs.ErrExist] and
	// changes nothing. Of several writers racing for one name, on one
	// machine or many, exactly one wins: the conditional write of a log
	// version (and of anything shared between writers) rests on it.
	PutIfAbsent(name string, data []byte) error
	// Put writes name with data, atomically and durably, replacing it if
	// it exists: a reader sees the old content or the new, whole. Two
	// writers racing both succeed, and the last one's content stays.
	Put(name string, data []byte) error
	// Read returns the content of name, or an error wrapping
	// [io/fs.ErrNotExist].
	Read(name string) ([]byte, error)
	// Open opens name for reading at any offset, or fails with an error
	// wrapping [io/fs.ErrNotExist].
	Open(name string) (File, error)
	// List returns the files and folders directly in folder dir ("" for
	// the location's own), sorted by name; none when it does not exist.
	List(dir string) ([]Entry, error)
	// Stat describes name, or fails with an error wrapping
	// [io/fs.ErrNotExist].
	Stat(name string) (Entry, error)
	// Remove deletes name; a name that does not exist is not an error.
	Remove(name string) error
	// Lock takes the location's writer lock, naming owner, where the store
	// has one: a local folder, whose lock is the file [LockFile] in it
	// (created with the folder if needed). While it is held, another Lock
	// of the folder, in this process or another, fails at once with an
	// error wrapping a *flock.HeldError that names the holder; release
	// gives it back. Object stores have none, and return a nil release:
	// conditional writes (put-if-absent log entries, and the offsets each
	// table commit starts from) keep writers apart there.
	Lock(owner string) (release func() error, err error)
	// Close releases the store's connections (an object store's bucket).
	Close() error
	// String is the location, for messages: an object store's URL without
	// its query parameters or user information, which may hold
	// credentials.
	String() string
}

// Writer is an object being written by [Store.Create].
type Writer interface {
	io.Writer
	// Commit makes the object visible under its name, whole and durably,
	// and returns its size and modification time. It fails with an error
	// wrapping [io/fs.ErrExist] when the name is taken (as [Store.PutIfAbsent]
	// does); after any error the object is discarded.
	Commit() (Entry, error)
	// Abort discards the object; after Commit it does nothing.
	Abort()
	// Held estimates the bytes of the object that the writer holds in
	// memory until it is committed: none for a local file, whose bytes go
	// to the operating system as they are written; the upload's buffers
	// for an object store.
	Held() int64
}

// File is an object open for reading.
type File interface {
	io.ReaderAt
	io.Closer
	// Size is the object's length in bytes.
	Size() int64
}

// Entry describes a file or folder of a store, as [Store.List] and
// [Store.Stat] return it.
type Entry struct {
	Name    string // base name, in its folder
	Size    int64
	ModTime time.Time
	// Dir is set on a folder (a common prefix of an object store); Other
	// is set on what is neither a folder nor a regular file (a symbolic
	// link, a device).
	Dir, Other bool
}
