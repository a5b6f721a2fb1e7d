package table_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// testFields is the table schema of most tests; testParquet is its Parquet
// schema. parquet.Group orders columns by name: amount, id, name.
var (
	testFields = []schema.Field{
		{Name: "id", Type: &schema.Type{Kind: schema.Long}},
		{Name: "name", Type: &schema.Type{Kind: schema.String}, Nullable: true},
		{Name: "amount", Type: &schema.Type{Kind: schema.Double}, Nullable: true},
	}
	testParquet = parquet.NewSchema("spark_schema", parquet.Group{
		"id":     parquet.Int(64),
		"name":   parquet.Optional(parquet.String()),
		"amount": parquet.Optional(parquet.Leaf(parquet.DoubleType)),
	})
)

// testRow builds a row of testParquet.
func testRow(id int64, name string, amount float64) parquet.Row {
	return parquet.Row{
		parquet.ValueOf(amount).Level(0, 1, 0),
		parquet.ValueOf(id).Level(0, 0, 1),
		parquet.ValueOf(name).Level(0, 1, 2),
	}
}

// clock is a settable fake time source.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// openTable opens the table in dir and closes it when the test ends.
func openTable(t *testing.T, dir string, opts table.Options) *table.Table {
	t.Helper()
	tb, err := table.Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// missingFile is named like a data file, and no test creates it.
const missingFile = "part-00000-00000000-0000-4000-8000-000000000000-c000.snappy.parquet"

// from returns the offsets tb's log holds for the application ids of txns:
// the From of a commit of txns.
func from(tb *table.Table, txns map[string]int64) map[string]int64 {
	held := tb.Snapshot().Txns
	f := map[string]int64{}
	for appID := range txns {
		if v, ok := held[appID]; ok {
			f[appID] = v
		}
	}
	return f
}

// writeFile writes rows with ids from..to-1 into a new data file of tb.
func writeFile(t *testing.T, tb *table.Table, from, to int64) table.AddFile {
	t.Helper()
	add, err := tryWriteFile(tb, from, to)
	if err != nil {
		t.Fatal(err)
	}
	return add
}

// tryWriteFile is writeFile for goroutines other than the test's.
func tryWriteFile(tb *table.Table, from, to int64) (table.AddFile, error) {
	fw, err := tb.NewFile(testParquet)
	if err != nil {
		return table.AddFile{}, err
	}
	var rows []parquet.Row
	for id := from; id < to; id++ {
		rows = append(rows, testRow(id, "n"+strings.Repeat("x", int(id%3)), float64(id)/2))
	}
	if err := fw.WriteRows(rows); err != nil {
		fw.Abort()
		return table.AddFile{}, err
	}
	return fw.Close()
}

func mustCommit(t *testing.T, tb *table.Table, c table.Commit) int64 {
	t.Helper()
	v, err := tb.Commit(c)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return v
}

// readLog returns the lines of log version v.
func readLog(t *testing.T, dir string, v int) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "_delta_log", logName(v)))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func logName(v int) string { return fmt.Sprintf("%020d.json", v) }
