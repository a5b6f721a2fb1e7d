//go:build e2e

package e2e

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
)

// TestSparkOptimizeThenVacuum writes a table of five small files with the
// table package; Spark 4 with Delta 4 compacts it (OPTIMIZE: the five files
// removed, one added); the agent's Vacuum, with its clock eight days on,
// deletes the five files; Spark and delta-rs still read every row.
func TestSparkOptimizeThenVacuum(t *testing.T) {
	t.Parallel()
	spark, dir, tb := sparkTable(t)
	fields := tabletest.Fields(t, "id BIGINT")
	const files, perFile = 5, 10
	var small []string
	for i := range int64(files) {
		add := tabletest.WriteFile(t, tb, fields, func(b *rows.Builder) {
			for id := i * perFile; id < (i+1)*perFile; id++ {
				tabletest.Row(t, b, func() { b.Int64(id) })
			}
		})
		if _, err := tb.Commit(table.Commit{Schema: fields, Files: []table.AddFile{add}}); err != nil {
			t.Fatal(err)
		}
		small = append(small, add.Path)
	}
	tb.Close()
	jars := filepath.Join(spark, "jars")

	runSpark(t, spark, "check_spark_vacuum.py", "optimize", "--jars", jars, "--table", dir, "--files", strconv.Itoa(files))

	later := time.Now().Add(8 * 24 * time.Hour)
	tb, err := table.Open(dir, table.Options{Now: func() time.Time { return later }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tb.Vacuum(context.Background())
	tb.Close()
	if err != nil || res.FilesDeleted != files {
		t.Fatalf("Vacuum = %+v, %v; want the %d compacted files deleted", res, err, files)
	}
	for _, name := range small {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("compacted file %s: %v, want it deleted", name, err)
		}
	}

	runSpark(t, spark, "check_spark_vacuum.py", "read", "--jars", jars, "--table", dir, "--rows", strconv.Itoa(files*perFile))
}
