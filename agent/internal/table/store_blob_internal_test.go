package table

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob/memblob"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/objstoretest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// TestBlobStoreTable runs a table through blobStore on an in-memory bucket
// and on each object store server the environment configures (see
// objstoretest.Root; the end-to-end tests run the agent on them too):
// commits, a checkpoint and a reopen from it, put-if-absent of a log version
// two writers race for, and garbage collection of an upload left
// uncommitted.
func TestBlobStoreTable(t *testing.T) {
	forEachBlobStore(t, testBlobStoreTable)
}

// forEachBlobStore runs test as a subtest on a new prefix of an in-memory
// bucket ("mem") and of each object store of objstoretest.Kinds, which
// skips where its server is not configured.
func forEachBlobStore(t *testing.T, test func(t *testing.T, s *blobStore)) {
	t.Run("mem", func(t *testing.T) {
		bucket := memblob.OpenBucket(nil)
		defer bucket.Close()
		test(t, &blobStore{b: bucket, location: "mem://test"})
	})
	for _, kind := range objstoretest.Kinds {
		t.Run(kind, func(t *testing.T) {
			u, err := url.Parse(objstoretest.Root(t, kind, fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())))
			if err != nil {
				t.Fatal(err)
			}
			s, err := openBlobStore(u)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			test(t, s)
		})
	}
}

func testBlobStoreTable(t *testing.T, s *blobStore) {
	now := time.Now()
	opts := Options{Now: func() time.Time { return now }, GCGrace: time.Minute}
	opts, _ = opts.withDefaults()
	tb, err := openIn(s, opts, true)
	if err != nil {
		t.Fatal(err)
	}
	fields := []schema.Field{{Name: "id", Type: &schema.Type{Kind: schema.Long}}}
	ps := parquet.NewSchema("spark_schema", parquet.Group{"id": parquet.Int(64)})
	write := func(tb *Table, id int64) AddFile {
		t.Helper()
		fw, err := tb.NewFile(ps)
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.WriteColumns([][]parquet.Value{{parquet.Int64Value(id).Level(0, 0, 0)}}, 1); err != nil {
			t.Fatal(err)
		}
		add, err := fw.Close()
		if err != nil {
			t.Fatal(err)
		}
		return add
	}
	for i := range int64(12) {
		c := Commit{Files: []AddFile{write(tb, i)}, Txns: map[string]int64{"t/x/0": i + 1}}
		if i == 0 {
			c.Schema = fields
		} else {
			c.From = map[string]int64{"t/x/0": i}
		}
		if _, err := tb.Commit(c); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	if _, err := s.Stat(logDir + "/" + checkpointName(10)); err != nil {
		t.Errorf("no checkpoint at version 10: %v", err)
	}
	again, err := openIn(s, opts, false)
	if err != nil {
		t.Fatal(err)
	}
	if snap := again.Snapshot(); snap.Version != 11 || snap.NumRows != 12 || snap.Txns["t/x/0"] != 12 {
		t.Errorf("reopened: version %d, %d rows, offset %d; want 11, 12, 12", snap.Version, snap.NumRows, snap.Txns["t/x/0"])
	}
	// Two writers of version 12: the second loses to the first.
	if err := s.PutIfAbsent(logPath(12), []byte(`{"commitInfo":{}}`+"\n")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIfAbsent(logPath(12), []byte("{}\n")); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second put-if-absent of version 12: %v, want fs.ErrExist", err)
	}
	// A file uploaded but never committed is collected after the grace.
	orphan := write(tb, 99)
	delete(tb.pending, orphan.Path) // as if another process had written it
	now = now.Add(2 * time.Minute)
	if n, err := tb.CollectGarbage(); err != nil || n != 1 {
		t.Errorf("CollectGarbage = %d, %v; want the orphan", n, err)
	}
	if _, err := s.Stat(orphan.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("orphan %s still there: %v", orphan.Path, err)
	}
	// An aborted upload leaves nothing.
	fw, err := tb.NewFile(ps)
	if err != nil {
		t.Fatal(err)
	}
	fw.Abort()
	if _, err := s.Stat(fw.Name()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("aborted file %s: %v, want fs.ErrNotExist", fw.Name(), err)
	}
	entries, err := s.List("")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Dir {
			names = append(names, e.Name+"/")
		}
	}
	if fmt.Sprint(names) != "[_delta_log/]" {
		t.Errorf("folders %v, want [_delta_log/]", names)
	}
}

// TestBlobStoreConditionalCreate races writers of the same names, as
// writers of one table race for a log version: for each name, of eight
// concurrent put-if-absent calls (the log entries) and of eight concurrent
// streamed creates (data files and checkpoints), exactly one succeeds, the
// others fail with fs.ErrExist, and the name holds the winner's bytes. A
// store whose conditional write is not atomic lets two win here.
func TestBlobStoreConditionalCreate(t *testing.T) {
	forEachBlobStore(t, func(t *testing.T, s *blobStore) {
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
