package table

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"time"
)

// openStore returns the store of the table at location: a local folder (a
// path, or a file:// URL), whose new files get permission mode (see
// [Options.FileMode]), or a prefix in an object store (s3://, gs://,
// azblob:// or abfss:// URL; see [openBlobStore]).
func openStore(location string, mode os.FileMode) (store, error) {
	u, err := url.Parse(location)
	if err != nil || u.Scheme == "" || len(u.Scheme) == 1 { // a path (or a Windows drive letter)
		return newLocalStore(location, mode), nil
	}
	switch u.Scheme {
	case "file":
		return newLocalStore(u.Path, mode), nil
	case "s3", "gs", "azblob", "abfss":
		return openBlobStore(u)
	}
	return nil, fmt.Errorf("table location %s: unsupported scheme %q (want a path, or a file, s3, gs, azblob or abfss URL)", redact(u), u.Scheme)
}

// store is where one table's files live: a folder on local disk
// ([localStore]) or a prefix in an object store ([blobStore]). Names are
// slash-separated and relative to the table's location ("_delta_log/
// 00000000000000000003.json"). A missing name is an error wrapping
// fs.ErrNotExist; a name a put-if-absent finds taken, fs.ErrExist.
type store interface {
	// create starts writing object name. Nothing is visible under name
	// until the writer's commit, which never replaces an existing object.
	// A write a crash interrupts leaves at most a temporary file named
	// like the local store's (see [localStore.tempName]) or, on an object
	// store, an unfinished upload the store discards.
	create(name string) (storeWriter, error)
	// putIfAbsent creates name with data, atomically and durably, unless
	// name exists: then it returns an error wrapping fs.ErrExist and
	// changes nothing.
	putIfAbsent(name string, data []byte) error
	// put writes name with data, atomically, replacing it if it exists.
	put(name string, data []byte) error
	// read returns the content of name.
	read(name string) ([]byte, error)
	// open opens name for reading at any offset.
	open(name string) (storeFile, error)
	// list returns the files and folders directly in folder dir ("" for
	// the table's own), none when it does not exist.
	list(dir string) ([]storeEntry, error)
	// stat describes name.
	stat(name string) (storeEntry, error)
	// remove deletes name; a name that does not exist is not an error.
	remove(name string) error
	// lock takes the table's writer lock, naming owner, where the store
	// has one (a local folder); release gives it back. Object stores have
	// none: put-if-absent log entries and the offsets each commit starts
	// from keep writers apart there.
	lock(owner string) (release func() error, err error)
	// close releases the store's connections.
	close() error
	// String is the table's location, for messages.
	String() string
}

// storeWriter is an object being written by [store.create].
type storeWriter interface {
	io.Writer
	// commit makes the object visible under its name, durably, and
	// returns its size and modification time. It fails with an error
	// wrapping fs.ErrExist when the name is taken; after any error the
	// object is discarded.
	commit() (storeEntry, error)
	// abort discards the object; after commit it does nothing.
	abort()
}

// storeFile is an object open for reading.
type storeFile interface {
	io.ReaderAt
	io.Closer
	// size is the object's length in bytes.
	size() int64
}

// storeEntry describes a file or folder of a store.
type storeEntry struct {
	name    string // base name, in its folder
	size    int64
	modTime time.Time
	// dir is set on a folder (a common prefix of an object store); other
	// is set on what is neither a folder nor a regular file (a symbolic
	// link, a device).
	dir, other bool
}
