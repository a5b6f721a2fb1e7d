package table_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
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

// writeRows writes rows to fw, column by column as the agent writes.
func writeRows(fw *table.FileWriter, rows []parquet.Row) error {
	var cols [][]parquet.Value
	for _, row := range rows {
		for _, v := range row {
			for v.Column() >= len(cols) {
				cols = append(cols, nil)
			}
			cols[v.Column()] = append(cols[v.Column()], v)
		}
	}
	return fw.WriteColumns(cols, len(rows))
}

// clock is a settable fake time source.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// openTable opens the table in dir and closes it when the test ends.
func openTable(t testing.TB, dir string, opts table.Options) *table.Table {
	t.Helper()
	tb, err := table.Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// missingFile is named like a data file, and no test creates it.
const missingFile = "part-00000-tributary-00000000-0000-4000-8000-000000000000-c000.snappy.parquet"

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
	if err := writeRows(fw, rows); err != nil {
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

// appendCommits commits n versions to tb, each adding a file of two rows,
// moving the offset of "t/a/0" on by two and counting one corrupt record;
// the first commit of a new table creates it with testFields.
func appendCommits(t *testing.T, tb *table.Table, n int) {
	t.Helper()
	for range n {
		snap := tb.Snapshot()
		next, started := snap.Txns["t/a/0"]
		c := table.Commit{
			Files:    []table.AddFile{writeFile(t, tb, next, next+2)},
			Txns:     map[string]int64{"t/a/0": next + 2},
			Counters: map[string]int64{"numCorruptRecords": 1},
		}
		if started {
			c.From = map[string]int64{"t/a/0": next}
		}
		if snap.Version < 0 {
			c.Schema = testFields
		}
		mustCommit(t, tb, c)
	}
}

// writeForeignTable writes version 0 of a table as another engine (Spark)
// creates it, with schema testFields, the given protocol and configuration
// (JSON objects), and returns its folder.
func writeForeignTable(t *testing.T, protocol, configuration string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeLog(t, dir, 0, `{"commitInfo":{"timestamp":1,"operation":"CREATE TABLE","engineInfo":"Apache-Spark/4.0.1 Delta-Lake/4.0.1"}}
{"protocol":`+protocol+`}
{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":false,\"metadata\":{}},{\"name\":\"name\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}},{\"name\":\"amount\",\"type\":\"double\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":`+configuration+`}}
`)
	return dir
}

// logFile is the path of a file in dir's log.
func logFile(dir, name string) string { return filepath.Join(dir, "_delta_log", name) }

// checkpointName is the name of the classic checkpoint of version v.
func checkpointName(v int) string { return fmt.Sprintf("%020d.checkpoint.parquet", v) }

// removeLog deletes the log entries of versions from to to-1 in dir, as log
// cleanup would.
func removeLog(t *testing.T, dir string, from, to int) {
	t.Helper()
	for v := from; v < to; v++ {
		if err := os.Remove(logFile(dir, logName(v))); err != nil {
			t.Fatal(err)
		}
	}
}

// scriptCommand writes source, a Python program, to a file in a temporary
// folder and returns the command that runs it with python and args. The
// program can import the e2e tests' Python helpers (duckext: DuckDB with the
// delta extension).
func scriptCommand(t *testing.T, python, source string, args ...string) *exec.Cmd {
	t.Helper()
	script := filepath.Join(t.TempDir(), "read.py")
	if err := os.WriteFile(script, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	helpers, err := filepath.Abs(filepath.Join("..", "..", "e2e", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+helpers)
	return cmd
}
