package table_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/objstoretest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// BenchmarkConcurrentWriters measures how many commits per second one
// table on the S3-compatible server (tools/s3.sh; skipped without it)
// takes from 1, 2, 4 and 8 writers at once, each a Table of its own, as
// the agents of a cluster would hold, committing one small file of its
// own partition at a time with the offset precondition a table loop's
// commit carries. A writer that loses a version to another reads the
// winner's entry and takes the next (see [table.Table.Commit]), so the
// writers share the table's commit rate: commits/s is the table's, all
// writers together, and others/commit how many versions the other writers
// committed between a writer's two commits: log entries it reads before it
// can commit, and for those that took the version it tried, a
// put-if-absent it lost.
func BenchmarkConcurrentWriters(b *testing.B) {
	fields := []schema.Field{{Name: "id", Type: &schema.Type{Kind: schema.Long}}}
	ps := parquet.NewSchema("spark_schema", parquet.Group{"id": parquet.Int(64)})
	for _, writers := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			root := objstoretest.Root(b, "s3", fmt.Sprintf("bench-writers-%d-%d", writers, time.Now().UnixNano()))
			first, err := table.Open(root, table.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := first.Commit(table.Commit{Schema: fields}); err != nil {
				b.Fatal(err)
			}
			if err := first.Close(); err != nil {
				b.Fatal(err)
			}
			var (
				left   atomic.Int64 // commits still to make
				others atomic.Int64
				wg     sync.WaitGroup
				failed atomic.Value
			)
			left.Store(int64(b.N))
			b.ResetTimer()
			for w := range writers {
				wg.Go(func() {
					if err := commitUntil(root, ps, fmt.Sprintf("t/%d", w), &left, &others); err != nil {
						failed.Store(err)
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			if err, ok := failed.Load().(error); ok {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
			b.ReportMetric(float64(others.Load())/float64(b.N), "others/commit")
		})
	}
}

// commitUntil opens the table at root and commits, as partition appID,
// one file of one row at a time until left runs out, counting in others
// the versions other writers committed between its commits.
func commitUntil(root string, ps *parquet.Schema, appID string, left, others *atomic.Int64) error {
	t, err := table.Open(root, table.Options{})
	if err != nil {
		return err
	}
	defer t.Close()
	next := int64(0)
	for left.Add(-1) >= 0 {
		fw, err := t.NewFile(ps)
		if err != nil {
			return err
		}
		if err := fw.WriteColumns([][]parquet.Value{{parquet.Int64Value(next).Level(0, 0, 0)}}, 1); err != nil {
			return err
		}
		add, err := fw.Close()
		if err != nil {
			return err
		}
		c := table.Commit{Files: []table.AddFile{add}, Txns: map[string]int64{appID: next + 1}}
		if next > 0 {
			c.From = map[string]int64{appID: next}
		}
		before := t.Snapshot().Version
		v, err := t.Commit(c)
		if err != nil {
			return fmt.Errorf("%s: commit %d: %w", appID, next, err)
		}
		others.Add(v - before - 1)
		next++
	}
	return nil
}
