package table

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob/memblob"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/objstoretest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// TestBlobStoreTable runs a table through the store of an in-memory bucket
// and of each object store server the environment configures (see
// objstoretest.ForEachStore; the end-to-end tests run the agent on them too):
// commits, a checkpoint and a reopen from it, put-if-absent of a log version
// two writers race for, and garbage collection of an upload left
// uncommitted.
func TestBlobStoreTable(t *testing.T) {
	objstoretest.ForEachStore(t, testBlobStoreTable)
}

func testBlobStoreTable(t *testing.T, s storage.Store) {
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

// TestBufferedCountsTheUpload checks that an open file on an object store
// counts what its upload holds, and one on local disk does not: past its
// first part, the upload holds two parts (three on S3) after each row
// group is written.
func TestBufferedCountsTheUpload(t *testing.T) {
	const blobPartSize = 5 << 20 // the store's part size
	ps := parquet.NewSchema("spark_schema", parquet.Group{"b": parquet.Leaf(parquet.ByteArrayType)})
	rnd := rand.New(rand.NewPCG(1, 2))
	value := make([]byte, 64<<10)
	for _, tt := range []struct {
		name  string
		store func(t *testing.T) storage.Store
		want  int64
	}{
		{"object store", func(*testing.T) storage.Store { return storage.FromBucket(memblob.OpenBucket(nil), "mem://t") }, 2 * blobPartSize},
		{"local disk", func(t *testing.T) storage.Store {
			s, err := storage.Open(t.TempDir(), DefaultFileMode)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts, _ := Options{}.withDefaults()
			tb, err := openIn(tt.store(t), opts, true)
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			fw, err := tb.NewFile(ps)
			if err != nil {
				t.Fatal(err)
			}
			defer fw.Abort()
			for range 2 * blobPartSize / len(value) {
				for i := range value {
					value[i] = byte(rnd.Uint32())
				}
				if err := fw.WriteColumns([][]parquet.Value{{parquet.ByteArrayValue(value).Level(0, 0, 0)}}, 1); err != nil {
					t.Fatal(err)
				}
				if err := fw.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if got := fw.Buffered(); got < tt.want || got > tt.want+1<<20 {
				t.Errorf("Buffered() = %d after the row groups were written, want %d and at most a MiB more", got, tt.want)
			}
		})
	}
}
