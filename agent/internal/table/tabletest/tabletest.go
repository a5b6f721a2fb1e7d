// Package tabletest writes files of rows into Delta tables for tests of the
// table package and of what reads its tables (the end-to-end tests), and
// checks the order in which a table's commits added its records
// ([CommitOrder]) and how many offsets each covers ([CommitSpans]), and
// reads the rows of its data files ([ReadTable], [ReadRows], [ReadFile]).
package tabletest

import (
	"errors"
	"io"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// Fields parses a DDL schema, failing the test on error.
func Fields(t testing.TB, ddl string) []schema.Field {
	t.Helper()
	fields, err := schema.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	return fields
}

// WriteFile writes the rows that fill adds to a builder of fields into a
// new file of tb and returns the file's add action, to commit. It fails the
// test on error.
func WriteFile(t testing.TB, tb *table.Table, fields []schema.Field, fill func(b *rows.Builder)) table.AddFile {
	t.Helper()
	return WritePartitionFile(t, tb, fields, nil, fill)
}

// WritePartitionFile is [WriteFile] for a file of the partition values
// gives (none: a file of an unpartitioned table).
func WritePartitionFile(t testing.TB, tb *table.Table, fields []schema.Field, values []table.PartitionValue, fill func(b *rows.Builder)) table.AddFile {
	t.Helper()
	b, err := rows.NewBuilder(fields)
	if err != nil {
		t.Fatal(err)
	}
	fill(b)
	var fw *table.FileWriter
	if values == nil {
		fw, err = tb.NewFile(b.Schema())
	} else {
		fw, err = tb.NewPartitionFile(b.Schema(), values)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.WriteColumns(b.Columns(), b.Rows()); err != nil {
		t.Fatal(err)
	}
	add, err := fw.Close()
	if err != nil {
		t.Fatal(err)
	}
	return add
}

// ReadFile reads live data file path of tb whole, through
// [table.Table.OpenFile] a few rows at a time as compaction reads it: the
// rows' schema, the file's partition values, and its rows column by column
// with their number. It fails the test on error.
func ReadFile(t testing.TB, tb *table.Table, path string) (*parquet.Schema, []table.PartitionValue, [][]parquet.Value, int) {
	t.Helper()
	fr, err := tb.OpenFile(path, table.WholeFileBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	cols := make([][]parquet.Value, len(fr.Schema.Columns()))
	n := 0
	for {
		batch, k, err := fr.Read(7)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for c := range cols {
			cols[c] = append(cols[c], batch[c]...)
		}
		n += k
	}
	if int64(n) != fr.NumRows() {
		t.Fatalf("read %d rows of data file %s; its footer counts %d", n, path, fr.NumRows())
	}
	return fr.Schema, fr.PartitionValues, cols, n
}

// Row adds a row to b: cells[i] writes the value of top-level field i, and
// a nil cell, like a missing one, leaves the field null. It fails the test
// when the row does not fit b's schema.
func Row(t testing.TB, b *rows.Builder, cells ...func()) {
	t.Helper()
	b.BeginRow()
	for i, cell := range cells {
		if cell != nil {
			b.Field(i)
			cell()
		}
	}
	if err := b.EndRow(); err != nil {
		t.Fatal(err)
	}
}
