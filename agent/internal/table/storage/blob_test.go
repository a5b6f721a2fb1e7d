package storage_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/objstoretest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestBlobStoreConditionalCreate races writers of the same names, as
// writers of one table race for a log version: for each name, of eight
// concurrent put-if-absent calls (the log entries) and of eight concurrent
// streamed creates (data files and checkpoints), exactly one succeeds, the
// others fail with fs.ErrExist, and the name holds the winner's bytes. A
// store whose conditional write is not atomic lets two win here.
func TestBlobStoreConditionalCreate(t *testing.T) {
	objstoretest.ForEachStore(t, func(t *testing.T, s storage.Store) {
		const writers, names = 8, 5
		for _, how := range []struct {
			name  string
			write func(name string, data []byte) error
		}{
			{"putIfAbsent", s.PutIfAbsent},
			{"create", func(name string, data []byte) error {
				w, err := s.Create(name)
				if err != nil {
					return err
				}
				if _, err := w.Write(data); err != nil {
					w.Abort()
					return err
				}
				_, err = w.Commit()
				return err
			}},
		} {
			for n := range names {
				name := fmt.Sprintf("%s/%020d.json", how.name, n)
				errs := make([]error, writers)
				var wg sync.WaitGroup
				for i := range writers {
					wg.Go(func() { errs[i] = how.write(name, fmt.Appendf(nil, "writer %d\n", i)) })
				}
				wg.Wait()
				winner := -1
				for i, err := range errs {
					switch {
					case err == nil && winner >= 0:
						t.Errorf("%s %s: writers %d and %d both won", how.name, name, winner, i)
					case err == nil:
						winner = i
					case !errors.Is(err, fs.ErrExist):
						t.Errorf("%s %s: writer %d: %v, want fs.ErrExist", how.name, name, i, err)
					}
				}
				if winner < 0 {
					t.Errorf("%s %s: no writer won", how.name, name)
					continue
				}
				got, err := s.Read(name)
				if want := fmt.Appendf(nil, "writer %d\n", winner); err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s %s holds %q, %v; want the winner's %q", how.name, name, got, err, want)
				}
			}
		}
	})
}

// TestBlobStoreMultipartCreate streams an object of several parts, as a
// large data file is written: what the upload holds grows to its first
// part and then stays at three parts on S3, two elsewhere; the object reads
// back whole, and a second create of the name fails with fs.ErrExist once
// the first one is in.
func TestBlobStoreMultipartCreate(t *testing.T) {
	objstoretest.ForEachStore(t, func(t *testing.T, s storage.Store) {
		const part = 5 << 20
		parts := int64(2) // what an upload holds past its first part
		if strings.HasSuffix(t.Name(), "/s3") {
			parts = 3
		}
		data := make([]byte, 13<<20) // two parts and a part of three MiB
		rnd := rand.New(rand.NewPCG(1, 2))
		for i := range data {
			data[i] = byte(rnd.Uint32())
		}
		create := func() error {
			w, err := s.Create("big.parquet")
			if err != nil {
				return err
			}
			for i := 0; i < len(data); i += 1 << 20 {
				if _, err := w.Write(data[i : i+1<<20]); err != nil {
					w.Abort()
					return err
				}
				written := int64(i + 1<<20)
				want := written // the first part, read whole
				if written >= part {
					want = parts * part
				}
				if w.Held() != want {
					t.Errorf("after %d bytes the upload holds %d, want %d", written, w.Held(), want)
				}
			}
			_, err = w.Commit()
			if w.Held() != 0 {
				t.Errorf("a committed upload holds %d bytes, want 0", w.Held())
			}
			return err
		}
		if err := create(); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Read("big.parquet"); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read back %d bytes, %v; want the %d written", len(got), err, len(data))
		}
		if err := create(); !errors.Is(err, fs.ErrExist) {
			t.Errorf("second create: %v, want fs.ErrExist", err)
		}
	})
}

// TestBlobStoreSharedBucket opens two tables' stores in one bucket of each
// object store server, which share the bucket's client: each sees only
// its own objects, by the names the table gives them, and goes on working
// after the other closes.
func TestBlobStoreSharedBucket(t *testing.T) {
	for _, kind := range objstoretest.Kinds {
		t.Run(kind, func(t *testing.T) {
			root := objstoretest.Root(t, kind, fmt.Sprintf("shared-%d", rand.Int64()))
			var stores []storage.Store
			for _, table := range []string{"a", "b"} {
				s, err := storage.Open(spec.JoinLocation(root, table), 0)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if err := s.PutIfAbsent("_delta_log/0.json", []byte(table)); err != nil {
					t.Fatal(err)
				}
				stores = append(stores, s)
			}
			if err := stores[0].Close(); err != nil {
				t.Fatal(err)
			}
			s := stores[1]
			entries, err := s.List("_delta_log")
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 || entries[0].Name != "0.json" {
				t.Errorf("List(_delta_log) = %+v, want 0.json alone", entries)
			}
			if data, err := s.Read("_delta_log/0.json"); err != nil || string(data) != "b" {
				t.Errorf("Read() = %q, %v; want b", data, err)
			}
			if err := s.Remove("_delta_log/0.json"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Stat("_delta_log/0.json"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Stat() after Remove = %v, want fs.ErrNotExist", err)
			}
		})
	}
}

// TestBlobStoreCredentialsFixed opens a store on the S3-compatible server
// with a secret key the server refuses, then fixes the key in the
// environment, as an operator fixes the agent's credentials after an apply
// failed: the next store of the bucket uses the fixed key, though the
// bucket was opened less than a minute before (see [storage.Open]).
func TestBlobStoreCredentialsFixed(t *testing.T) {
	// A bucket URL of its own (hostname_immutable=false is the default),
	// so that no bucket another test opened serves the first store.
	root := objstoretest.Root(t, "s3", fmt.Sprintf("creds-%d", rand.Int64())) + "&hostname_immutable=false"
	secret := os.Getenv("AWS_SECRET_ACCESS_KEY")
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret+"-wrong")
	s, err := storage.Open(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutIfAbsent("probe", nil); err == nil {
		t.Skip("a bucket opened with the right key less than a minute ago served the store (run with -count=1)")
	}
	_ = s.Close()
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	s, err = storage.Open(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.PutIfAbsent("probe", nil); err != nil {
		t.Errorf("the store after the key was fixed: %v", err)
	}
}
