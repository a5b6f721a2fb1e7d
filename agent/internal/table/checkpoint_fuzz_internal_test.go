package table

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// FuzzCheckpoint feeds arbitrary bytes to the checkpoint reader, seeded
// with the checkpoints of this package, Spark and delta-rs. It must return
// an entry or an error, never panic, and the same for the same bytes.
func FuzzCheckpoint(f *testing.F) {
	for _, name := range []string{"spark-checkpoint/_delta_log/00000000000000000003.checkpoint.parquet",
		"deltars-checkpoint/_delta_log/00000000000000000004.checkpoint.parquet"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	st := newState()
	st.protocol = &protocolAction{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{featureTimestampNTZ}, WriterFeatures: []string{featureTimestampNTZ}}
	st.meta = &metadataAction{ID: "x", Format: formatSpec{Provider: "parquet"}, SchemaString: `{"type":"struct","fields":[]}`, Configuration: map[string]string{"k": "v"}}
	st.txns["t/a/0"] = 5
	st.files["a.parquet"] = liveFile{add: &addAction{Path: "a.parquet", Stats: `{"numRecords":1}`, Tags: map[string]string{"t": "1"}}}
	ts := int64(1)
	st.tombstones["b.parquet"] = &removeAction{Path: "b.parquet", DeletionTimestamp: &ts}
	var own bytes.Buffer
	w := parquet.NewGenericWriter[checkpointRow](&own)
	if _, err := w.Write(st.checkpointRows()); err != nil {
		f.Fatal(err)
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	f.Add(own.Bytes())

	f.Fuzz(func(t *testing.T, data []byte) {
		decode := func() (*entry, error) {
			return decodeCheckpoint(bytes.NewReader(data), int64(len(data)), "fuzz")
		}
		a, errA := decode()
		b, errB := decode()
		if (errA == nil) != (errB == nil) || !reflect.DeepEqual(a, b) {
			t.Fatalf("decodes differ: %v, %v", errA, errB)
		}
		var unsupported *UnsupportedFeatureError
		if errA != nil && errors.As(errA, &unsupported) && unsupported.File != "fuzz" {
			t.Fatalf("unsupported feature in %q", unsupported.File)
		}
	})
}
