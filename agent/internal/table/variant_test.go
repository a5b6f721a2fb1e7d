package table_test

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// variantFields is a table with VARIANT columns at the top and in a struct.
var variantFields = []schema.Field{
	field("id", schema.Long, true),
	field("v", schema.Variant, true),
	{Name: "s", Nullable: true, Type: &schema.Type{Kind: schema.Struct, Fields: []schema.Field{field("w", schema.Variant, true)}}},
}

// writeVariantFile writes three rows of variantFields: a row with both
// variants, one with v null, one with s null; the variants are the INT8 42
// with an empty metadata dictionary.
func writeVariantFile(t *testing.T, tb *table.Table, firstID int64) table.AddFile {
	t.Helper()
	meta, value := []byte{0x01, 0x00, 0x00}, []byte{0x0c, 0x2a}
	return tabletest.WriteFile(t, tb, variantFields, func(b *rows.Builder) {
		v := func() { b.Variant(meta, value) }
		s := func() {
			b.BeginStruct()
			b.Field(0)
			b.Variant(meta, value)
			b.EndStruct()
		}
		tabletest.Row(t, b, func() { b.Int64(firstID) }, v, s)
		tabletest.Row(t, b, func() { b.Int64(firstID + 1) }, nil, s)
		tabletest.Row(t, b, func() { b.Int64(firstID + 2) }, v)
	})
}

// TestVariantTable: a table with VARIANT columns gets stats with a null
// count only for them, survives a checkpoint, and opens in delta-rs.
func TestVariantTable(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	const commits = 11 // versions 0 to 10: a checkpoint at the default interval
	for i := range int64(commits) {
		add := writeVariantFile(t, tb, 3*i)
		const want = `{"numRecords":3,"minValues":{"id":0},"maxValues":{"id":2},"nullCount":{"id":0,"v":1,"s":{"w":1}}}`
		if i == 0 && add.Stats != want {
			t.Errorf("stats = %s, want %s", add.Stats, want)
		}
		c := table.Commit{Files: []table.AddFile{add}, Txns: map[string]int64{"t/a/0": 3 * (i + 1)}}
		if i == 0 {
			c.Schema = variantFields
		} else {
			c.From = map[string]int64{"t/a/0": 3 * i}
		}
		mustCommit(t, tb, c)
	}
	if !exists(logFile(dir, checkpointName(commits-1))) {
		t.Fatalf("no checkpoint at version %d", commits-1)
	}
	want := tb.Snapshot()
	tb.Close()
	for v := range commits - 1 {
		os.Remove(logFile(dir, logName(v)))
	}
	got := openTable(t, dir, table.Options{}).Snapshot()
	if !schema.Equal(got.Schema, variantFields) || got.NumRows != 3*commits || got.NumRows != want.NumRows {
		t.Errorf("snapshot from the checkpoint = %+v, want schema %s and %d rows", got, schema.FormatDDL(variantFields), 3*commits)
	}

	var read struct{ Version, Rows, Files int }
	runDeltaRS(t, toolPython(t), &read, "read", dir, "t/a/0")
	if read.Rows != 3*commits || read.Files != commits {
		t.Errorf("delta-rs reads %+v, want %d rows in %d files", read, 3*commits, commits)
	}
}

// TestVariantMetadataDictionary: a VARIANT's metadata is dictionary
// encoded, so that the dictionary of keys most records of one kind repeat
// is stored once per row group; metadata that rarely repeats goes on PLAIN
// once the dictionary passes 1 MiB. Every value reads back, in parquet-go
// and in delta-rs, either way.
func TestVariantMetadataDictionary(t *testing.T) {
	fields := []schema.Field{field("id", schema.Long, true), field("v", schema.Variant, true)}
	// meta is a metadata dictionary of one key of 32 bytes, the k-th of
	// its kind; value is the INT8 k.
	meta := func(k int) []byte {
		key := bytes.Repeat([]byte{'a' + byte(k%26)}, 32)
		copy(key, strconv.Itoa(k))
		// Version 1, offsets of two bytes; one key, from 0 to 32.
		return append([]byte{0x41, 1, 0, 0, 0, byte(len(key)), 0}, key...)
	}
	value := func(k int) []byte { return []byte{0x0c, byte(k)} }
	for _, tt := range []struct {
		name        string
		rows, kinds int
		wantPlain   bool
	}{
		{"repeated", 3000, 3, false},
		// parquet-go weighs the dictionary as each page of indexes is
		// written: the first (about 63,000 rows) takes it past 1 MiB.
		{"past the dictionary limit", 70_000, 70_000, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tb := openTable(t, dir, table.Options{})
			defer tb.Close()
			// In chunks of 1,000 rows, as the agent writes them: parquet-go
			// ends a page only between two writes.
			b, err := rows.NewBuilder(fields)
			if err != nil {
				t.Fatal(err)
			}
			fw, err := tb.NewFile(b.Schema())
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.rows {
				k := i % tt.kinds
				tabletest.Row(t, b, func() { b.Int64(int64(i)) }, func() { b.Variant(meta(k), value(k)) })
				if b.Rows() == 1000 || i == tt.rows-1 {
					if err := fw.WriteColumns(b.Columns(), b.Rows()); err != nil {
						t.Fatal(err)
					}
					b.Reset()
				}
			}
			add, err := fw.Close()
			if err != nil {
				t.Fatal(err)
			}
			mustCommit(t, tb, table.Commit{Schema: fields, Files: []table.AddFile{add}, Txns: map[string]int64{"t/a/0": int64(tt.rows)}})

			f, err := os.Open(filepath.Join(dir, add.Path))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			pf, err := parquet.OpenFile(f, add.Size)
			if err != nil {
				t.Fatal(err)
			}
			// The encodings of the metadata column's data pages.
			var encodings []format.Encoding
			for _, rg := range pf.Metadata().RowGroups {
				for _, c := range rg.Columns {
					if slices.Equal(c.MetaData.PathInSchema, []string{"v", "metadata"}) {
						for _, st := range c.MetaData.EncodingStats {
							if st.PageType == format.DataPage || st.PageType == format.DataPageV2 {
								encodings = append(encodings, st.Encoding)
							}
						}
					}
				}
			}
			if !slices.Contains(encodings, format.RLEDictionary) || slices.Contains(encodings, format.Plain) != tt.wantPlain {
				t.Errorf("the metadata column's data pages are encoded %v, want RLE_DICTIONARY, and PLAIN too: %v", encodings, tt.wantPlain)
			}

			_, _, cols, n := tabletest.ReadFile(t, tb, add.Path)
			if n != tt.rows {
				t.Fatalf("read %d rows, want %d", n, tt.rows)
			}
			for i := range n {
				k := i % tt.kinds
				if !bytes.Equal(cols[1][i].ByteArray(), meta(k)) || !bytes.Equal(cols[2][i].ByteArray(), value(k)) {
					t.Fatalf("row %d reads back as metadata %.20x…, value %x; want %.20x…, %x", i, cols[1][i].ByteArray(), cols[2][i].ByteArray(), meta(k), value(k))
				}
			}

			var got [][]any
			runDeltaRS(t, toolPython(t), &got, "rows", dir, "id", "v")
			if len(got) != tt.rows {
				t.Fatalf("delta-rs reads %d rows, want %d", len(got), tt.rows)
			}
			for _, r := range got {
				id, _ := r[0].(float64)
				k := int(id) % tt.kinds
				want := map[string]any{"metadata": hex.EncodeToString(meta(k)), "value": hex.EncodeToString(value(k))}
				if !reflect.DeepEqual(r[1], want) {
					t.Fatalf("delta-rs reads row %v as %.80v, want %.80v", r[0], r[1], want)
				}
			}
		})
	}
}
