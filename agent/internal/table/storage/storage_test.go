package storage_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/flock"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/objstoretest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
)

// TestContract checks what every store promises, on a local folder, an
// in-memory bucket and each object store server the environment
// configures: a missing name is fs.ErrNotExist to Read, Open and Stat and
// no error to Remove; put-if-absent refuses a taken name with fs.ErrExist
// and leaves it as it was; Put replaces; List returns a folder's files and
// subfolders by name, and nothing for a folder that does not exist.
func TestContract(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		s, err := storage.Open(t.TempDir(), 0o640)
		if err != nil {
			t.Fatal(err)
		}
		testContract(t, s)
	})
	objstoretest.ForEachStore(t, testContract)
}

func testContract(t *testing.T, s storage.Store) {
	const name = "d/b.json"
	if _, err := s.Read(name); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of a missing name: %v, want fs.ErrNotExist", err)
	}
	if _, err := s.Open(name); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing name: %v, want fs.ErrNotExist", err)
	}
	if _, err := s.Stat(name); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a missing name: %v, want fs.ErrNotExist", err)
	}
	if err := s.Remove(name); err != nil {
		t.Errorf("Remove of a missing name: %v, want none", err)
	}
	if entries, err := s.List("d"); err != nil || len(entries) != 0 {
		t.Errorf("List of a missing folder = %v, %v; want nothing", entries, err)
	}

	if err := s.PutIfAbsent(name, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIfAbsent(name, []byte("second")); !errors.Is(err, fs.ErrExist) {
		t.Errorf("PutIfAbsent of a taken name: %v, want fs.ErrExist", err)
	}
	if got, err := s.Read(name); err != nil || string(got) != "first" {
		t.Errorf("after a lost PutIfAbsent, Read = %q, %v; want the first", got, err)
	}
	if err := s.Put(name, []byte("replaced")); err != nil {
		t.Fatal(err)
	}
	f, err := s.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	n, err := f.ReadAt(buf, 4)
	if f.Size() != 8 || n != 4 || (err != nil && !errors.Is(err, io.EOF)) || string(buf) != "aced" {
		t.Errorf("Open after Put: size %d, ReadAt(4) = %q, %v; want 8, \"aced\"", f.Size(), buf[:n], err)
	}
	_ = f.Close()

	for _, other := range []string{"d/a.json", "d/c/x.json"} {
		if err := s.PutIfAbsent(other, nil); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := s.List("d")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, fmt.Sprintf("%s dir=%v", e.Name, e.Dir))
	}
	if want := []string{"a.json dir=false", "b.json dir=false", "c dir=true"}; !slices.Equal(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}
	if e, err := s.Stat(name); err != nil || e.Name != "b.json" || e.Size != 8 || e.Dir {
		t.Errorf("Stat = %+v, %v; want b.json of 8 bytes", e, err)
	}
	if err := s.Remove(name); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(name); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat after Remove: %v, want fs.ErrNotExist", err)
	}
}

// TestLocalLock checks the writer lock of a local folder: a second Lock
// fails at once with a flock.HeldError that names the first owner, and
// works again once the first is released.
func TestLocalLock(t *testing.T) {
	dir := t.TempDir()
	s, err := storage.Open(dir, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	release, err := s.Lock("first owner")
	if err != nil {
		t.Fatal(err)
	}
	other, err := storage.Open("file://"+dir, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	var held *flock.HeldError
	if _, err := other.Lock("second owner"); !errors.As(err, &held) || !strings.Contains(held.Holder, "first owner") {
		t.Fatalf("second Lock: %v, want a HeldError naming the first owner", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	release, err = other.Lock("second owner")
	if err != nil {
		t.Fatalf("Lock after the release: %v", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
}

// TestTempOf checks that TempOf reads back every temporary name TempName
// gives, and nothing else.
func TestTempOf(t *testing.T) {
	for _, name := range []string{
		"part-00000-tributary-x-c000.snappy.parquet", "_delta_log/00000000000000000003.json",
		"_delta_log/00000000000000000010.checkpoint.parquet", "_delta_log/_last_checkpoint", "a/b/c", "a/.hidden",
	} {
		temp := storage.TempName(name)
		if got, ok := storage.TempOf(temp); !ok || got != name {
			t.Errorf("TempOf(TempName(%q) = %q) = %q, %v", name, temp, got, ok)
		}
	}
	uuid := storage.NewUUID()
	for _, temp := range []string{
		"x.tmp", "_delta_log/00000000000000000003.json", "_delta_log/.00000000000000000003.json.tmp",
		"_delta_log/.3." + uuid + ".json", "_delta_log/3." + uuid + ".json.tmp", "_delta_log/.3." + uuid + "x.tmp",
		"_tmp/x", "_delta_log/.3." + uuid[:14] + "5" + uuid[15:] + ".json.tmp", // not a version 4 UUID
	} {
		if got, ok := storage.TempOf(temp); ok {
			t.Errorf("TempOf(%q) = %q: not a temporary name", temp, got)
		}
	}
}
