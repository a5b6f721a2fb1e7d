// Package compaction rewrites a Delta table's small data files into files
// near a target size, as Delta's OPTIMIZE does: a streaming writer leaves a
// file per flush, and readers pay for every one.
//
// It sits beside ingestion, on a table's log: the table loops of package
// pipeline write Kafka records into a [table.Table] through deltasink, and
// call [Run] on the same Table between or beside their commits. A pass
// plans from the table's live files ([Plan]), reads the files of each bin
// in the table's current columns, a batch of rows at a time
// ([table.Table.OpenFile]), writes their rows into one new file and commits it with [table.Table.CommitRewrite]: remove
// and add actions with dataChange false, so readers of changes, and the
// table's offsets and counters, see no new rows. Ingestion commits in
// between never stop a rewrite, nor does a rewrite stop them: the table's
// mutex is held only for the commit itself. When another engine's
// compaction (or a delete) removed a file first, the rewrite gives way.
//
// Ordering the rows of a bin by more than the order of ingestion (a
// Z-order or a clustering by columns) would fit in the writing of a bin
// (rewriteBin): it would read the bin's files, sort, and write, at the
// cost of holding the whole bin in memory, then commit the same way with
// zOrderBy in the commit's parameters. It is not done.
package compaction

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// Small files are those below smallNum/smallDen of the target size, two
// thirds of it: a file that big is close enough to the target that
// rewriting it would cost more than readers gain. A bin holds up to
// binNum/binDen of the target, four thirds of it, so that any two small
// files fit in one bin and no small file is left that no bin can take;
// the files compaction writes are then between two thirds and four thirds
// of the target (less what compression and fewer footers save), at most
// one and a half times the ideal number of files.
const (
	smallNum = 2
	smallDen = 3
	binNum   = 4
	binDen   = 3
)

// IsSmall reports whether f is a file compaction rewrites for target, a
// size in bytes: smaller than two thirds of it.
func IsSmall(f table.LiveFile, target int64) bool {
	return f.Size*smallDen < target*smallNum
}

// SmallFiles returns how many of files are small for target (see
// [IsSmall]): the cheap measure a caller compares with its threshold to
// decide when to [Run].
func SmallFiles(files []table.LiveFile, target int64) int {
	n := 0
	for _, f := range files {
		if IsSmall(f, target) {
			n++
		}
	}
	return n
}

// growth is how many times the rest of its bin a bin's oldest file may
// be and still be rewritten (see [Plan]).
const growth = 4

// Bin is a group of small files of one partition whose rows one new file
// will hold.
type Bin struct {
	// PartitionValues are the files' partition values, empty in an
	// unpartitioned table.
	PartitionValues map[string]string
	// Files are the files, in the order their rows were ingested.
	Files []table.LiveFile
	// Size is the files' total size in bytes.
	Size int64
}

// Plan bin-packs the small files of files (see [IsSmall]) into bins of at
// most four thirds of target bytes, never across partition values. Within a partition,
// the files are taken in the order of the versions that added them (then
// modification time and path), and each bin holds consecutive ones, so a
// Kafka partition's offsets stay in order and clustered in the new files.
// A file that alone would be a bin stays as it is: a bin holds at least two
// files. So does a bin's oldest file while it is growth (four) times the
// size of the rest of the bin or more: a quiet table's compacted file,
// still small, is rewritten only once new data of at least a quarter of
// its size joins it, not at every pass, which would rewrite the same bytes
// over and over while the file slowly grows towards the target. A bin
// closes only when the next small file would not fit, so every bin but a
// partition's last holds more than two thirds of the target.
func Plan(files []table.LiveFile, target int64) []Bin {
	files = slices.Clone(files)
	slices.SortStableFunc(files, func(a, b table.LiveFile) int {
		return cmp.Or(cmp.Compare(a.Version, b.Version), a.ModificationTime.Compare(b.ModificationTime), cmp.Compare(a.Path, b.Path))
	})
	var keys []string // partitions in the order of their first small file
	open := map[string]*Bin{}
	started := map[string]struct{}{}
	var bins []Bin
	closeBin := func(key string) {
		b := open[key]
		for len(b.Files) >= 2 && b.Files[0].Size >= growth*(b.Size-b.Files[0].Size) {
			b.Size -= b.Files[0].Size
			b.Files = b.Files[1:]
		}
		if len(b.Files) >= 2 {
			bins = append(bins, *b)
		}
		delete(open, key)
	}
	for _, f := range files {
		if !IsSmall(f, target) {
			continue
		}
		key := partitionKey(f.PartitionValues)
		if b, ok := open[key]; ok && (b.Size+f.Size)*binDen > target*binNum {
			closeBin(key)
		}
		b, ok := open[key]
		if !ok {
			b = &Bin{PartitionValues: maps.Clone(f.PartitionValues)}
			if _, seen := started[key]; !seen {
				started[key] = struct{}{}
				keys = append(keys, key)
			}
			open[key] = b
		}
		b.Files = append(b.Files, f)
		b.Size += f.Size
	}
	for _, key := range keys {
		if _, ok := open[key]; ok {
			closeBin(key)
		}
	}
	return bins
}

// partitionKey encodes partition values as one string, equal for equal
// values whatever the map's order.
func partitionKey(values map[string]string) string {
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(values)) {
		sb.WriteString(k)
		sb.WriteByte(0)
		sb.WriteString(values[k])
		sb.WriteByte(0)
	}
	return sb.String()
}
