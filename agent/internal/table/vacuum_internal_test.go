package table

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
)

// TestVacuumStores vacuums a table in an in-memory bucket and in a local
// folder: a removed file at the top and one in a partition folder go once
// older than the retention, the file the snapshot references stays.
func TestVacuumStores(t *testing.T) {
	stores := map[string]func(t *testing.T) storage.Store{
		"mem": func(*testing.T) storage.Store { return storage.FromBucket(memblob.OpenBucket(nil), "mem://test") },
		"local": func(t *testing.T) storage.Store {
			// The partition folder is made by whoever writes into it.
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "day=2024-01-01"), 0o755); err != nil {
				t.Fatal(err)
			}
			s, err := storage.Open(dir, DefaultFileMode)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			now := time.Now()
			opts, _ := Options{Now: func() time.Time { return now }}.withDefaults()
			files := map[string]string{"top": "part-00000-a-c000.snappy.parquet", "part": "day=2024-01-01/part-00000-b-c000.snappy.parquet", "live": "part-00000-c-c000.snappy.parquet"}
			for _, f := range files {
				if err := s.PutIfAbsent(f, []byte("data")); err != nil {
					t.Fatal(err)
				}
			}
			removed := strconv.FormatInt(now.UnixMilli(), 10)
			entries := []string{
				`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{}}}
{"add":{"path":"` + files["top"] + `","partitionValues":{},"size":4,"modificationTime":1,"dataChange":true}}
{"add":{"path":"day%3D2024-01-01/part-00000-b-c000.snappy.parquet","partitionValues":{},"size":4,"modificationTime":1,"dataChange":true}}
{"add":{"path":"` + files["live"] + `","partitionValues":{},"size":4,"modificationTime":1,"dataChange":true}}
`,
				`{"remove":{"path":"` + files["top"] + `","deletionTimestamp":` + removed + `,"dataChange":true}}
{"remove":{"path":"day%3D2024-01-01/part-00000-b-c000.snappy.parquet","deletionTimestamp":` + removed + `,"dataChange":true}}
`,
			}
			for v, e := range entries {
				if err := s.PutIfAbsent(logPath(int64(v)), []byte(e)); err != nil {
					t.Fatal(err)
				}
			}
			tb, err := openIn(s, opts, false)
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			now = now.Add(7*24*time.Hour - time.Minute)
			if res, err := tb.Vacuum(context.Background()); err != nil || res.FilesDeleted != 0 || res.TombstonesKept != 2 {
				t.Errorf("Vacuum within the retention = %+v, %v; want nothing deleted", res, err)
			}
			now = now.Add(2 * time.Minute)
			want := VacuumResult{FilesDeleted: 2, BytesDeleted: 8, Retention: 7 * 24 * time.Hour}
			if res, err := tb.Vacuum(context.Background()); err != nil || res != want {
				t.Errorf("Vacuum after the retention = %+v, %v; want %+v", res, err, want)
			}
			for key, f := range files {
				if _, err := s.Stat(f); errors.Is(err, fs.ErrNotExist) != (key != "live") {
					t.Errorf("%s: Stat = %v, want it gone unless live", f, err)
				}
			}
		})
	}
}

func TestInTable(t *testing.T) {
	for p, want := range map[string]bool{
		"part-0.parquet":               true,
		"a=1/b=x y/part-0.parquet":     true,
		"_kafka_date=2024-01-01/p.pq":  true,
		"_delta_log/00.json":           false,
		"_tmp/part-0.parquet.tmp":      false,
		".hidden/part-0.parquet":       false,
		"a=1/.part-0.parquet.crc":      false,
		"_part-0.parquet":              false,
		"../other/part-0.parquet":      false,
		"/abs/part-0.parquet":          false,
		"s3://bucket/t/part-0.parquet": false,
		"a=1/../../x.parquet":          false,
	} {
		if got := inTable(p); got != want {
			t.Errorf("inTable(%q) = %t, want %t", p, got, want)
		}
	}
}
