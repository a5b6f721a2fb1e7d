package table_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// A local table's files are created with Options.FileMode, 0640 by default,
// and its folders with the same bits plus x where r is set.
func TestFileModes(t *testing.T) {
	fields := []schema.Field{{Name: "id", Type: &schema.Type{Kind: schema.Long}}}
	for _, tt := range []struct {
		mode          os.FileMode
		wantFile, dir os.FileMode
	}{
		{mode: 0, wantFile: 0o640, dir: 0o750},
		{mode: 0o600, wantFile: 0o600, dir: 0o700},
	} {
		t.Run(tt.wantFile.String(), func(t *testing.T) {
			root := t.TempDir()
			tb, err := table.Open(filepath.Join(root, "main", "raw", "events"), table.Options{FileMode: tt.mode})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			add := tabletest.WriteFile(t, tb, fields, func(b *rows.Builder) {
				b.BeginRow()
				b.Field(0)
				b.Int64(1)
				if err := b.EndRow(); err != nil {
					t.Fatal(err)
				}
			})
			mustCommit(t, tb, table.Commit{Schema: fields, Files: []table.AddFile{add}})
			var files int
			err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
				if err != nil || path == root {
					return err
				}
				fi, err := d.Info()
				if err != nil {
					return err
				}
				want := tt.wantFile
				if d.IsDir() {
					want = tt.dir
				} else {
					files++
				}
				if got := fi.Mode().Perm(); got != want {
					t.Errorf("%s: mode %v, want %v", path, got, want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if files < 3 { // the lock, a log entry, a data file
				t.Errorf("%d files written, want the lock, a log entry and a data file", files)
			}
		})
	}
	if _, err := table.Open(t.TempDir(), table.Options{FileMode: 0o440}); err == nil {
		t.Error("Open with a mode the owner cannot write succeeded")
	}
}
