package compaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/compaction"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// appID is the topic-partition the tests' commits record offsets of.
const appID = "t/p/0"

// ingest commits one file of the rows with ids (offsets) from the table's
// txn on, n of them: a = id, and note = "n<id>" when the columns have it.
// It is what a table loop does per flush.
func ingest(t testing.TB, tb *table.Table, fields []schema.Field, n int64, c table.Commit) {
	t.Helper()
	if err := tryIngest(tb, fields, n, c); err != nil {
		t.Fatal(err)
	}
}

// tryIngest is ingest for goroutines other than the test's.
func tryIngest(tb *table.Table, fields []schema.Field, n int64, c table.Commit) error {
	snap := tb.Snapshot()
	next, started := snap.Txns[appID]
	b, err := rows.NewBuilder(fields)
	if err != nil {
		return err
	}
	for id := next; id < next+n; id++ {
		b.BeginRow()
		b.Field(0)
		b.Int64(id)
		b.Field(1)
		if fields[1].Type.Kind == schema.Int {
			b.Int32(int32(id))
		} else {
			b.Int64(id)
		}
		if len(fields) > 2 {
			b.Field(2)
			b.Bytes([]byte("n" + string(rune('a'+id%26))))
		}
		if err := b.EndRow(); err != nil {
			return err
		}
	}
	fw, err := tb.NewFile(b.Schema())
	if err != nil {
		return err
	}
	if err := fw.WriteColumns(b.Columns(), b.Rows()); err != nil {
		fw.Abort()
		return err
	}
	add, err := fw.Close()
	if err != nil {
		return err
	}
	c.Files = []table.AddFile{add}
	c.Txns = map[string]int64{appID: next + n}
	if started {
		c.From = map[string]int64{appID: next}
	}
	if snap.Version < 0 {
		c.Schema = fields
	}
	_, err = tb.Commit(c)
	return err
}

// row is what the tests read back of a row.
type row struct {
	id, a int64
	note  string
}

// readAll reads every row of tb's live files with the table's reader.
func readAll(t *testing.T, tb *table.Table) []row {
	t.Helper()
	var out []row
	for _, f := range tb.Files() {
		ps, _, cols, n := tabletest.ReadFile(t, tb, f.Path)
		idx := map[string]int{}
		for i, path := range ps.Columns() {
			idx[path[0]] = i
		}
		for r := range n {
			x := row{id: cols[idx["id"]][r].Int64(), a: cols[idx["a"]][r].Int64()}
			if c, ok := idx["note"]; ok && !cols[c][r].IsNull() {
				x.note = string(cols[c][r].ByteArray())
			}
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(x, y row) int { return int(x.id - y.id) })
	return out
}

// checkOnce fails unless rows hold every id of 0..n-1 exactly once, with
// a = id.
func checkOnce(t *testing.T, rows []row, n int64) {
	t.Helper()
	if int64(len(rows)) != n {
		t.Fatalf("%d rows, want %d", len(rows), n)
	}
	for i, r := range rows {
		if r.id != int64(i) || r.a != r.id {
			t.Fatalf("row %d = %+v; want id %d once, with a = id", i, r, i)
		}
	}
}

// openTable opens the table in dir, and closes it when the test ends.
func openTable(t testing.TB, dir string) *table.Table {
	t.Helper()
	tb, err := table.Open(dir, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// smallFilesTable writes a table of columns ddl (id and a, and maybe note)
// in dir, in files commits of 5 rows each, and returns it open.
func smallFilesTable(t testing.TB, dir, ddl string, files int) *table.Table {
	t.Helper()
	tb := openTable(t, dir)
	fields := tabletest.Fields(t, ddl)
	for range files {
		ingest(t, tb, fields, 5, table.Commit{})
	}
	return tb
}

// evolvingTable writes a table of files files of 5 rows each; after a
// third of them it adds the column note, after two thirds it widens a from
// INT to BIGINT.
func evolvingTable(t testing.TB, dir string, files int) *table.Table {
	t.Helper()
	tb := openTable(t, dir)
	narrow := tabletest.Fields(t, "id BIGINT, a INT")
	noted := tabletest.Fields(t, "id BIGINT, a INT, note STRING")
	wide := tabletest.Fields(t, "id BIGINT, a BIGINT, note STRING")
	for i := range files {
		switch {
		case i < files/3:
			ingest(t, tb, narrow, 5, table.Commit{})
		case i == files/3:
			ingest(t, tb, noted, 5, table.Commit{Schema: noted})
		case i < 2*files/3:
			ingest(t, tb, noted, 5, table.Commit{})
		case i == 2*files/3:
			ingest(t, tb, wide, 5, table.Commit{Schema: wide, AllowTypeWidening: true})
		default:
			ingest(t, tb, wide, 5, table.Commit{})
		}
	}
	return tb
}

// totalSize sums the sizes of files.
func totalSize(files []table.LiveFile) int64 {
	var n int64
	for _, f := range files {
		n += f.Size
	}
	return n
}

// TestRunEvolvingSchema compacts a table whose columns grew and widened:
// every row is there once, read in the latest columns, the file count is
// at most twice the ideal one, the commits carry no offsets, and DuckDB
// (and delta-rs, unless it refuses type widening) read the same rows.
func TestRunEvolvingSchema(t *testing.T) {
	dir := t.TempDir()
	tb := evolvingTable(t, dir, 60)
	before := tb.Snapshot()
	files := tb.Files()
	target := totalSize(files) / 6 // ideal: six files
	res, err := compaction.Run(context.Background(), tb, compaction.Options{TargetSize: target})
	if err != nil {
		t.Fatal(err)
	}
	after := tb.Snapshot()
	if res.Commits == 0 || res.FilesRemoved < 50 || res.Rows != int64(5*res.FilesRemoved) || res.GaveWay != nil ||
		after.Version != before.Version+int64(res.Commits) {
		t.Errorf("Result = %+v; versions %d to %d", res, before.Version, after.Version)
	}
	if after.NumFiles > 12 {
		t.Errorf("%d files after compaction; the ideal is 6, and at most twice that is fine", after.NumFiles)
	}
	if after.Txns[appID] != 300 || after.NumRows != 300 {
		t.Errorf("after compaction: %+v", after)
	}
	got := readAll(t, tb)
	checkOnce(t, got, 300)
	for _, r := range got {
		if hasNote := r.id >= 100; hasNote != (r.note != "") {
			t.Fatalf("row %+v: note is set exactly from id 100 on", r)
		}
	}
	tb.Close()

	out := readEngines(t, dir)
	want := map[string]any{"rows": 300.0, "distinct": 300.0, "sum": 299 * 300 / 2.0, "sum_a": 299 * 300 / 2.0, "notes": 200.0}
	checkEngine(t, out, "duckdb", want, "")
	checkEngine(t, out, "deltars", want, "TypeWidening")
}

// enginesScript reads the table in argv[1] with delta-rs and DuckDB's
// delta_scan and prints, per reader, the count, distinct ids and sums of
// its rows (or the reader's error) as JSON.
const enginesScript = `
import json, os, sys
import duckext
import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder

QUERY = "SELECT count(*), count(DISTINCT id), sum(id), sum(a), count(note) FROM t"
path = sys.argv[1]
out = {}

def shape(r):
    return {"rows": r[0], "distinct": r[1], "sum": r[2], "sum_a": r[3], "notes": r[4]}

try:
    dt = DeltaTable(path)
    r = pa.table(QueryBuilder().register("t", dt).execute(QUERY).read_all()).to_pylist()[0]
    out["deltars"] = shape(list(r.values()))
except Exception as e:
    out["deltars"] = "error: " + str(e).splitlines()[0]
try:
    query = QUERY.replace("FROM t", "FROM delta_scan(?)")
    out["duckdb"] = shape(duckext.connect().execute(query, [path]).fetchone())
except Exception as e:
    out["duckdb"] = "error: " + str(e).splitlines()[0]
print(json.dumps(out), flush=True)
os._exit(0)
`

// readEngines runs enginesScript on the table in dir; it skips the test
// without the tool venv.
func readEngines(t *testing.T, dir string) map[string]any {
	t.Helper()
	python := toolPython(t)
	helpers, err := filepath.Abs("../../e2e/testdata")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-c", enginesScript, dir)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+helpers)
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("readers: %v\n%s", err, stdout)
	}
	var out map[string]any
	if err := json.Unmarshal(stdout, &out); err != nil {
		t.Fatalf("readers: %v\n%s", err, stdout)
	}
	return out
}

// toolPython returns the interpreter of the tool venv, and skips the test
// when there is none or it lacks delta-rs or DuckDB.
func toolPython(t *testing.T) string {
	t.Helper()
	python, err := filepath.Abs("../../../.tools/py/bin/python")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(python, "-c", "import deltalake, duckdb").CombinedOutput(); err != nil {
		t.Skipf("no Python venv with deltalake and duckdb at %s: %v\n%s", python, err, out)
	}
	return python
}

// checkEngine fails unless the reader engine read want, or refused with an
// error containing refusal (when refusal is not empty).
func checkEngine(t *testing.T, out map[string]any, engine string, want map[string]any, refusal string) {
	t.Helper()
	got := out[engine]
	if msg, ok := got.(string); ok && refusal != "" && containsFold(msg, refusal) {
		return
	}
	m, ok := got.(map[string]any)
	if !ok {
		t.Errorf("%s: %v", engine, got)
		return
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s reads %s = %v, want %v (all: %v)", engine, k, m[k], v, m)
		}
	}
}

// containsFold reports whether s contains sub, ignoring case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// TestRunWhileIngesting compacts, pass after pass, while another goroutine
// keeps committing appends to the same table, the first of which adds a
// column: no row is lost or duplicated, and delta-rs and DuckDB agree.
func TestRunWhileIngesting(t *testing.T) {
	dir := t.TempDir()
	tb := smallFilesTable(t, dir, "id BIGINT, a BIGINT", 20)
	fields := tabletest.Fields(t, "id BIGINT, a BIGINT, note STRING")
	target := totalSize(tb.Files()) / 2

	var wg sync.WaitGroup
	stop := make(chan struct{})
	errc := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := tryIngest(tb, fields, 5, table.Commit{Schema: fields}); err != nil {
				errc <- err
				return
			}
		}
	}()
	var total compaction.Result
	for pass := 0; pass < 5 || total.Commits < 3; pass++ {
		res, err := compaction.Run(context.Background(), tb, compaction.Options{TargetSize: target})
		if err != nil {
			t.Fatal(err)
		}
		if res.GaveWay != nil {
			t.Fatalf("pass %d gave way to ingestion: %v", pass, res.GaveWay)
		}
		total.Commits += res.Commits
		if pass > 1000 {
			t.Fatal("no compaction commit in 1000 passes")
		}
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errc:
		t.Fatalf("ingestion: %v", err)
	default:
	}
	snap := tb.Snapshot()
	n := snap.Txns[appID]
	checkOnce(t, readAll(t, tb), n)
	tb.Close()

	out := readEngines(t, dir)
	want := map[string]any{"rows": float64(n), "distinct": float64(n), "sum": float64(n * (n - 1) / 2)}
	checkEngine(t, out, "duckdb", want, "")
	checkEngine(t, out, "deltars", want, "")
}

// TestRunGivesWay has delta-rs compact the table while Run writes a bin
// of it: Run gives way, deletes its file, and the table holds every row
// once. Skipped without the tool venv.
func TestRunGivesWay(t *testing.T) {
	python := toolPython(t)
	dir := t.TempDir()
	tb := smallFilesTable(t, dir, "id BIGINT, a BIGINT", 6)
	before := parquetFiles(t, dir)
	paced := 0
	pace := func(context.Context, time.Duration) error {
		if paced++; paced == 2 {
			cmd := exec.Command(python, "-c", "import os, sys; from deltalake import DeltaTable; DeltaTable(sys.argv[1]).optimize.compact(); os._exit(0)", dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("delta-rs optimize: %v\n%s", err, out)
			}
		}
		return nil
	}
	res, err := compaction.Run(context.Background(), tb, compaction.Options{TargetSize: 1 << 30, Pace: pace})
	if err != nil {
		t.Fatal(err)
	}
	if res.GaveWay == nil || res.Commits != 0 {
		t.Fatalf("Result = %+v; want a rewrite that gave way", res)
	}
	if got := parquetFiles(t, dir); len(got) != len(before)+1 {
		t.Errorf("%d data files after, %d before: want only delta-rs's new file", len(got), len(before))
	}
	checkOnce(t, readAll(t, tb), 30)
}

// parquetFiles lists the data files in dir.
func parquetFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRunCancelled cancels a pass while it writes a bin, after its first
// file and after its last: Run returns the context's error, and neither
// the log nor the folder changed.
func TestRunCancelled(t *testing.T) {
	for _, after := range []int{1, 12} {
		dir := t.TempDir()
		tb := evolvingTable(t, dir, 12)
		before, files := tb.Snapshot(), parquetFiles(t, dir)
		ctx, cancel := context.WithCancel(context.Background())
		paced := 0
		pace := func(context.Context, time.Duration) error {
			if paced++; paced == after {
				cancel()
			}
			return nil
		}
		res, err := compaction.Run(ctx, tb, compaction.Options{TargetSize: 1 << 30, Pace: pace})
		if !errors.Is(err, context.Canceled) || res.Commits != 0 || paced != after {
			t.Fatalf("cancelled after file %d: Run = %+v, %v, %d files read; want context.Canceled and no commit", after, res, err, paced)
		}
		if now := tb.Snapshot(); now.Version != before.Version {
			t.Errorf("version %d after a cancelled pass, %d before", now.Version, before.Version)
		}
		if got := parquetFiles(t, dir); !slices.Equal(got, files) {
			t.Errorf("data files after a cancelled pass: %v, before: %v", got, files)
		}
	}
}

// ledger is a [compaction.Memory] that keeps count of what a pass holds.
type ledger struct {
	t *testing.T
	// held is what the pass holds now, most the most it held at once.
	held, most int64
	reserves   int
	// refuse, when set, is the error of every Reserve.
	refuse error
}

func (l *ledger) Reserve(_ context.Context, n int64) error {
	if l.refuse != nil {
		return l.refuse
	}
	if n <= 0 {
		l.t.Errorf("reserved %d bytes", n)
	}
	l.reserves++
	l.held += n
	l.most = max(l.most, l.held)
	return nil
}

func (l *ledger) Release(n int64) {
	if n <= 0 || n > l.held {
		l.t.Errorf("released %d bytes of the %d held", n, l.held)
	}
	l.held -= n
}

// TestRunReserve checks that every file read is reserved first and
// released by the end of the pass, and that a pass with nothing to do
// reserves nothing.
func TestRunReserve(t *testing.T) {
	tb := evolvingTable(t, t.TempDir(), 9)
	l := &ledger{t: t}
	res, err := compaction.Run(context.Background(), tb, compaction.Options{TargetSize: 1 << 30, Memory: l})
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesRemoved != 9 || l.reserves < 9 || l.held != 0 {
		t.Errorf("%d files removed, %d reservations, %d bytes held after the pass; want 9, at least 9, 0", res.FilesRemoved, l.reserves, l.held)
	}
	refuse := &ledger{t: t, refuse: errors.New("over budget")}
	if _, err := compaction.Run(context.Background(), tb, compaction.Options{TargetSize: 1 << 30, Memory: refuse}); err != nil {
		t.Errorf("a pass with nothing to do reserved memory: %v", err)
	}
}

// TestRunHoldsBetweenBatches checks that what a pass keeps between two
// batches of rows (the file it reads, read whole, and the new file's row
// group) stays reserved while the pass rests, and that nothing is once
// the bin is committed.
func TestRunHoldsBetweenBatches(t *testing.T) {
	tb := smallFilesTable(t, t.TempDir(), "id BIGINT, a BIGINT", 6)
	l := &ledger{t: t}
	var held []int64
	pace := func(context.Context, time.Duration) error {
		held = append(held, l.held)
		return nil
	}
	res, err := compaction.Run(context.Background(), tb, compaction.Options{TargetSize: 1 << 30, Memory: l, Pace: pace})
	if err != nil || res.Commits != 1 || len(held) != 7 {
		t.Fatalf("Run = %+v, %v, paced %d times; want one commit of 6 files, paced 7 times", res, err, len(held))
	}
	for i, n := range held[:6] {
		if n <= 0 {
			t.Errorf("resting after file %d, the pass held %d bytes reserved; want the file and the row group", i, n)
		}
	}
	if held[6] != 0 {
		t.Errorf("resting after the commit, the pass held %d bytes reserved; want none", held[6])
	}
}

// TestRunReservesBatches rewrites files of many rows a batch at a time:
// no reservation is as large as the decoded values of a whole file, which
// for a file compaction wrote before could be gigabytes. With MaxMemory,
// the pass holds no more than it: smaller batches, and row groups written
// early.
func TestRunReservesBatches(t *testing.T) {
	const rowsPerFile = 100_000
	whole := int64(rowsPerFile * 3 * unsafe.Sizeof(parquet.Value{}))
	for _, most := range []int64{0, whole / 16} {
		t.Run(fmt.Sprint("MaxMemory=", most), func(t *testing.T) {
			tb := openTable(t, t.TempDir())
			fields := tabletest.Fields(t, "id BIGINT, a BIGINT, note STRING")
			for range 2 {
				ingest(t, tb, fields, rowsPerFile, table.Commit{})
			}
			l := &ledger{t: t}
			res, err := compaction.Run(context.Background(), tb, compaction.Options{TargetSize: 1 << 30, Memory: l, MaxMemory: most})
			if err != nil || res.FilesRemoved != 2 {
				t.Fatalf("Run = %+v, %v; want the two files compacted", res, err)
			}
			if l.most >= whole {
				t.Errorf("a pass held %d bytes at once; a whole file's values take %d", l.most, whole)
			}
			if most > 0 && l.most > most {
				t.Errorf("a pass held %d bytes at once, more than MaxMemory %d", l.most, most)
			}
			checkOnce(t, readAll(t, tb), 2*rowsPerFile)
		})
	}
}

// TestRunPacesEveryStep checks that a pass reports all its work to Pace:
// each file it reads, and then, for each bin, the closing of the new file
// and the commit, where the last row group is encoded.
func TestRunPacesEveryStep(t *testing.T) {
	tb := smallFilesTable(t, t.TempDir(), "id BIGINT, a BIGINT", 6)
	var paced []time.Duration
	pace := func(_ context.Context, busy time.Duration) error {
		paced = append(paced, busy)
		return nil
	}
	res, err := compaction.Run(context.Background(), tb, compaction.Options{TargetSize: 1 << 30, Pace: pace})
	if err != nil {
		t.Fatal(err)
	}
	if res.Commits != 1 || len(paced) != res.FilesRemoved+res.Commits {
		t.Fatalf("Result = %+v, paced %d times; want one commit, paced once per file and once for it", res, len(paced))
	}
	if last := paced[len(paced)-1]; last <= 0 {
		t.Errorf("the bin's closing and commit paced as %v; want the time they took", last)
	}
}

// TestRunTableTarget takes the target size from delta.targetFileSize when
// the table has it, and refuses a value it cannot read.
func TestRunTableTarget(t *testing.T) {
	tb := evolvingTable(t, t.TempDir(), 9)
	size := totalSize(tb.Files()[:3])
	fields := tb.Snapshot().Schema
	ingest(t, tb, fields, 5, table.Commit{Configuration: map[string]string{"delta.targetFileSize": "1mb"}})
	res, err := compaction.Run(context.Background(), tb, compaction.Options{TargetSize: size})
	if err != nil || res.Bins != 1 {
		t.Errorf("Run = %+v, %v; want the table's 1mb target: one bin", res, err)
	}
	ingest(t, tb, fields, 5, table.Commit{Configuration: map[string]string{"delta.targetFileSize": "big"}})
	if _, err := compaction.Run(context.Background(), tb, compaction.Options{TargetSize: size}); err == nil {
		t.Error("Run accepted delta.targetFileSize = big")
	}
}

// BenchmarkRun compacts a table of 200 files of 50 rows each.
func BenchmarkRun(b *testing.B) {
	fields := tabletest.Fields(b, "id BIGINT, a BIGINT, note STRING")
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		tb, err := table.Open(dir, table.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for range 200 {
			ingest(b, tb, fields, 50, table.Commit{})
		}
		b.StartTimer()
		res, err := compaction.Run(context.Background(), tb, compaction.Options{TargetSize: 128 << 20})
		if err != nil || res.FilesRemoved != 200 {
			b.Fatalf("Run = %+v, %v", res, err)
		}
		b.StopTimer()
		tb.Close()
		b.StartTimer()
	}
}
