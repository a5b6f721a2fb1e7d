package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/flock"
)

// localStore keeps a table in a folder on local disk. Every object is
// written under a temporary name, fsynced, then hard-linked to its name:
// link(2) never replaces a file, so readers never see a partial file and a
// put-if-absent loses cleanly to a second writer; the folder is fsynced so
// the new name survives a crash. A lock file keeps other writers out (see
// [Store.Lock]).
type localStore struct {
	dir string
	// fileMode and dirMode are the permissions of new files and folders.
	fileMode, dirMode os.FileMode
}

// newLocal returns the store of folder dir, whose new files get
// permission mode, and new folders mode plus x wherever it has r.
func newLocal(dir string, mode os.FileMode) localStore {
	return localStore{dir: dir, fileMode: mode, dirMode: mode | (mode&0o444)>>2}
}

// path is the file of name.
func (s localStore) path(name string) string { return filepath.Join(s.dir, filepath.FromSlash(name)) }

func (s localStore) String() string { return s.dir }

func (s localStore) Close() error { return nil }

func (s localStore) Create(name string) (Writer, error) {
	tmp := TempName(name)
	if err := os.MkdirAll(filepath.Dir(s.path(tmp)), s.dirMode); err != nil {
		return nil, fmt.Errorf("creating %s: %w", tmp, err)
	}
	f, err := os.OpenFile(s.path(tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, s.fileMode)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", tmp, err)
	}
	return &localWriter{s: s, name: name, tmp: tmp, f: f}, nil
}

// localWriter is a file being written under its temporary name.
type localWriter struct {
	s         localStore
	name, tmp string
	f         *os.File
	done      bool
}

func (w *localWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

func (w *localWriter) Held() int64 { return 0 }

func (w *localWriter) Commit() (Entry, error) {
	if w.done {
		return Entry{}, fmt.Errorf("%s is already written", w.name)
	}
	w.done = true
	defer os.Remove(w.s.path(w.tmp))
	err := w.f.Sync()
	var fi os.FileInfo
	if err == nil {
		fi, err = w.f.Stat()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(w.s.path(w.tmp), w.s.path(w.name))
	}
	if err == nil {
		err = syncDir(filepath.Dir(w.s.path(w.name)))
	}
	if err != nil {
		return Entry{}, fmt.Errorf("writing %s: %w", w.name, err)
	}
	return Entry{Name: path.Base(w.name), Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

func (w *localWriter) Abort() {
	if !w.done {
		w.done = true
		_ = w.f.Close()
		_ = os.Remove(w.s.path(w.tmp))
	}
}

func (s localStore) PutIfAbsent(name string, data []byte) error {
	w, err := s.Create(name)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	_, err = w.Commit()
	return err
}

// Put replaces name and drops the checksum side file Hadoop's local file
// system keeps next to it (see [checksumSideFile]): Spark writes one with
// _last_checkpoint, and left in place it would no longer match, so Spark
// would log a checksum error and retry before reading the table. It is
// dropped before the rename, so that a crash cannot leave it guarding the
// new content, and after, in case another engine wrote the file and its
// side file in between; a missing side file is fine for Hadoop.
func (s localStore) Put(name string, data []byte) error {
	tmp := TempName(name)
	if err := writeFileSync(s.path(tmp), data, s.fileMode); err != nil {
		return err
	}
	if err := s.removeChecksum(name); err != nil {
		_ = os.Remove(s.path(tmp))
		return err
	}
	if err := os.Rename(s.path(tmp), s.path(name)); err != nil {
		_ = os.Remove(s.path(tmp))
		return fmt.Errorf("publishing %s: %w", name, err)
	}
	if err := s.removeChecksum(name); err != nil {
		return err
	}
	return syncDir(filepath.Dir(s.path(name)))
}

// checksumSideFile is the name of the checksum file Hadoop's local file
// system (Spark's, on a local path) writes next to each file it writes:
// .<base>.crc in the same folder, holding CRC32s of the file's chunks.
// Hadoop checks a file against it on every read, and reads a file without
// one unchecked.
func checksumSideFile(name string) string {
	dir, base := path.Split(name)
	return dir + "." + base + ".crc"
}

// removeChecksum deletes the checksum side file of name, if there is one.
func (s localStore) removeChecksum(name string) error {
	side := checksumSideFile(name)
	if err := os.Remove(s.path(side)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the stale checksum file %s: %w", side, err)
	}
	return nil
}

func (s localStore) Read(name string) ([]byte, error) { return os.ReadFile(s.path(name)) }

func (s localStore) Open(name string) (File, error) {
	f, err := os.Open(s.path(name))
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return localFile{f, fi.Size()}, nil
}

// localFile is a file open for reading, with its size.
type localFile struct {
	*os.File
	n int64
}

func (f localFile) Size() int64 { return f.n }

func (s localStore) List(dir string) ([]Entry, error) {
	des, err := os.ReadDir(s.path(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, len(des))
	for _, de := range des {
		e := Entry{Name: de.Name(), Dir: de.IsDir(), Other: !de.IsDir() && !de.Type().IsRegular()}
		if !e.Dir {
			fi, err := de.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue // deleted since listed
			}
			if err != nil {
				return nil, err
			}
			e.Size, e.ModTime = fi.Size(), fi.ModTime()
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func (s localStore) Stat(name string) (Entry, error) {
	fi, err := os.Stat(s.path(name))
	if err != nil {
		return Entry{}, err
	}
	return Entry{Name: fi.Name(), Size: fi.Size(), ModTime: fi.ModTime(), Dir: fi.IsDir(), Other: !fi.IsDir() && !fi.Mode().IsRegular()}, nil
}

// Remove deletes name and, as Hadoop's local file system does, its
// checksum side file (see [checksumSideFile]), so that none is left
// guarding nothing.
func (s localStore) Remove(name string) error {
	if err := os.Remove(s.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return s.removeChecksum(name)
}

func (s localStore) Lock(owner string) (func() error, error) {
	if err := os.MkdirAll(s.dir, s.dirMode); err != nil {
		return nil, fmt.Errorf("creating table folder: %w", err)
	}
	l, err := flock.Acquire(filepath.Join(s.dir, LockFile), owner, s.fileMode)
	if errors.As(err, new(*flock.HeldError)) {
		return nil, err // the table names the holder
	}
	if err != nil {
		return nil, fmt.Errorf("locking the table folder: %w", err)
	}
	return l.Release, nil
}
