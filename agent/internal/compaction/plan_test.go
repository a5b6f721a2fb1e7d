package compaction_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/compaction"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// liveFile is a file named f<version> of size bytes added at version.
func liveFile(version, size int64, parts map[string]string) table.LiveFile {
	return table.LiveFile{
		Path:             fmt.Sprintf("f%d", version),
		Size:             size,
		PartitionValues:  parts,
		NumRecords:       1,
		Version:          version,
		ModificationTime: time.UnixMilli(version),
	}
}

// binPaths returns the paths of each bin's files.
func binPaths(bins []compaction.Bin) [][]string {
	var out [][]string
	for _, b := range bins {
		var paths []string
		for _, f := range b.Files {
			paths = append(paths, f.Path)
		}
		out = append(out, paths)
	}
	return out
}

// TestSmallFiles checks the threshold: files below two thirds of the
// target are small.
func TestSmallFiles(t *testing.T) {
	files := []table.LiveFile{liveFile(0, 66, nil), liveFile(1, 67, nil), liveFile(2, 1, nil), liveFile(3, 500, nil)}
	if n := compaction.SmallFiles(files, 100); n != 2 {
		t.Errorf("SmallFiles = %d, want 2 (66 and 1 bytes)", n)
	}
	if !compaction.IsSmall(files[0], 100) || compaction.IsSmall(files[1], 100) {
		t.Error("IsSmall: 66 of 100 bytes is small, 67 is not")
	}
}

// TestPlanBins packs consecutive small files into bins of at most four
// thirds of the target, leaves out big files, and drops a bin of one file.
func TestPlanBins(t *testing.T) {
	var files []table.LiveFile
	for v := range int64(10) {
		size := int64(30)
		if v == 4 {
			size = 90 // not small: stays, and the files around it still pack
		}
		files = append(files, liveFile(v, size, nil))
	}
	got := binPaths(compaction.Plan(files, 100))
	// Bins of at most 133 bytes: four files of 30; the ninth small file
	// alone is no bin.
	want := [][]string{{"f0", "f1", "f2", "f3"}, {"f5", "f6", "f7", "f8"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Plan = %v, want %v", got, want)
	}
	if bins := compaction.Plan(files[:6], 100); len(bins) != 1 || bins[0].Size != 120 {
		t.Errorf("Plan of five small files = %+v; want one bin of four and the fifth left alone", bins)
	}
	if bins := compaction.Plan([]table.LiveFile{liveFile(0, 10, nil)}, 100); len(bins) != 0 {
		t.Errorf("Plan of one file = %+v, want no bin", bins)
	}
}

// TestPlanOrder takes each partition's files in the order of the versions
// that added them, whatever the order given.
func TestPlanOrder(t *testing.T) {
	files := []table.LiveFile{liveFile(3, 10, nil), liveFile(1, 10, nil), liveFile(2, 10, nil), liveFile(0, 10, nil)}
	// Files from one checkpoint share its version: modification time orders them.
	a, b := liveFile(9, 10, nil), liveFile(9, 10, nil)
	a.Path, b.Path, a.ModificationTime, b.ModificationTime = "late", "early", time.UnixMilli(20), time.UnixMilli(10)
	files = append(files, a, b)
	got := binPaths(compaction.Plan(files, 100))
	want := [][]string{{"f0", "f1", "f2", "f3", "early", "late"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Plan = %v, want %v", got, want)
	}
}

// TestPlanPartitions never puts files of different partition values in one
// bin, and gives each bin its partition's values.
func TestPlanPartitions(t *testing.T) {
	day := func(d string) map[string]string { return map[string]string{"day": d, "hour": "1"} }
	var files []table.LiveFile
	for v := range int64(6) {
		d := []string{"a", "b"}[v%2]
		files = append(files, liveFile(v, 10, day(d)))
	}
	files = append(files, liveFile(6, 10, map[string]string{"hour": "1", "day": "a"})) // same values, another map
	bins := compaction.Plan(files, 100)
	got := binPaths(bins)
	want := [][]string{{"f0", "f2", "f4", "f6"}, {"f1", "f3", "f5"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Plan = %v, want %v", got, want)
	}
	if !reflect.DeepEqual(bins[0].PartitionValues, day("a")) || !reflect.DeepEqual(bins[1].PartitionValues, day("b")) {
		t.Errorf("partition values = %v, %v", bins[0].PartitionValues, bins[1].PartitionValues)
	}
}

// TestPlanGrowth leaves a bin's oldest file out while it is four times the
// rest of the bin or more: a quiet table's compacted file is rewritten once
// enough new data joins it, not at every pass.
func TestPlanGrowth(t *testing.T) {
	files := []table.LiveFile{liveFile(0, 400, nil)}
	for v := int64(1); v <= 6; v++ {
		files = append(files, liveFile(v, 20, nil))
	}
	if got, want := binPaths(compaction.Plan(files[:6], 1000)), [][]string{{"f1", "f2", "f3", "f4", "f5"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("400 bytes and five files of 20 (a quarter): bins %v, want %v", got, want)
	}
	if got, want := binPaths(compaction.Plan(files, 1000)), [][]string{{"f0", "f1", "f2", "f3", "f4", "f5", "f6"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("400 bytes and six files of 20 (more than a quarter): bins %v, want %v", got, want)
	}
	// Each of a bin's files dwarfing the rest stays.
	cascade := []table.LiveFile{liveFile(0, 500, nil), liveFile(1, 100, nil), liveFile(2, 10, nil), liveFile(3, 10, nil)}
	if got, want := binPaths(compaction.Plan(cascade, 1000)), [][]string{{"f2", "f3"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("500, 100, 10, 10 bytes: bins %v, want %v", got, want)
	}
}
