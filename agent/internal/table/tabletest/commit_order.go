package tabletest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// metadataRow is the part of a row CommitOrder reads: the partition and
// offset of the record in the source metadata column _kafka.
type metadataRow struct {
	Kafka struct {
		Partition int32 `parquet:"partition"`
		Offset    int64 `parquet:"offset"`
	} `parquet:"_kafka"`
}

// CommitOrder reads the data files of the local table in dir in the order
// its log added them (log entry after log entry, file after file within
// one), and fails the test unless the records of each partition, by the
// _kafka column (the table's source_metadata_column must be "_kafka"), come
// in offset order from 0 without a gap or a repeat: every commit added the
// records that follow those of the commit before. It returns each
// partition's next offset.
func CommitOrder(t testing.TB, dir string) map[int32]int64 {
	t.Helper()
	next, err := commitOrder(dir)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// commitOrder is CommitOrder, returning the first problem as an error.
func commitOrder(dir string) (map[int32]int64, error) {
	entries, err := filepath.Glob(filepath.Join(dir, "_delta_log", "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(entries) // zero-padded versions
	next := map[int32]int64{}
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			return nil, err
		}
		for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
			var action struct {
				Add *struct {
					Path string `json:"path"`
				} `json:"add"`
			}
			if err := json.Unmarshal([]byte(line), &action); err != nil {
				return nil, fmt.Errorf("log entry %s: %w", filepath.Base(e), err)
			}
			if action.Add == nil {
				continue
			}
			rows, err := parquet.ReadFile[metadataRow](filepath.Join(dir, action.Add.Path))
			if err != nil {
				return nil, fmt.Errorf("data file %s: %w", action.Add.Path, err)
			}
			for _, r := range rows {
				if p, o := r.Kafka.Partition, r.Kafka.Offset; o != next[p] {
					return nil, fmt.Errorf("data file %s (log entry %s): partition %d offset %d comes after offset %d",
						action.Add.Path, filepath.Base(e), p, o, next[p]-1)
				}
				next[r.Kafka.Partition]++
			}
		}
	}
	return next, nil
}
