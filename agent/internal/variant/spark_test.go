package variant_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	pv "github.com/parquet-go/parquet-go/variant"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
)

// sparkDeviations are the inputs (as hex) on which the Encoder deliberately
// differs from Spark 4.0.1's parse_json, with the reason.
var sparkDeviations = map[string]string{
	hex.EncodeToString([]byte(`{"id":1} xyz`)):     trailingData,
	hex.EncodeToString([]byte(`{"id":1}{"id":2}`)): trailingData,
	hex.EncodeToString([]byte(`1 2`)):              trailingData,
	hex.EncodeToString([]byte(strings.Repeat("1", 1001))): "Spark's JSON parser refuses integers " +
		"of more than 1000 digits; the Encoder reads them, as doubles like any integer past 38 digits",
	hex.EncodeToString([]byte(`{"\ud800":1,"?":2}`)): "Spark writes both keys as \"?\", an object " +
		"with two fields of one name that the VariantEncoding spec forbids; the Encoder refuses it",
}

// trailingData is why the Encoder refuses what follows the first value.
const trailingData = "Spark reads the first value and drops the rest; the Encoder refuses " +
	"the text rather than lose data silently"

// sparkCase is one line of testdata/spark_parse_json.jsonl: an input and the
// VARIANT that Spark made of it, or empty metadata and value if Spark refused
// it (null in the file).
type sparkCase struct {
	input, metadata, value []byte
}

// readSparkCorpus reads testdata/spark_parse_json.jsonl.
func readSparkCorpus(tb testing.TB) []sparkCase {
	tb.Helper()
	f, err := os.Open("testdata/spark_parse_json.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var cases []sparkCase
	lines := bufio.NewScanner(f)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		var line struct{ Input, Metadata, Value string }
		if err := json.Unmarshal(lines.Bytes(), &line); err != nil {
			tb.Fatalf("line %d: %v", len(cases)+1, err)
		}
		var c sparkCase
		for _, field := range []struct {
			hex string
			dst *[]byte
		}{{line.Input, &c.input}, {line.Metadata, &c.metadata}, {line.Value, &c.value}} {
			if *field.dst, err = hex.DecodeString(field.hex); err != nil {
				tb.Fatalf("line %d: %v", len(cases)+1, err)
			}
		}
		cases = append(cases, c)
	}
	if err := lines.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(cases) < 50 {
		tb.Fatalf("only %d cases in the Spark corpus", len(cases))
	}
	return cases
}

// TestSparkParseJSON compares the Encoder with what Spark's parse_json wrote
// for the corpus in testdata/spark_parse_json.py: the same values with the
// same types, and the same value bytes wherever Spark's dictionary happens to
// be in sorted order (Spark lists keys in the order it first meets them).
func TestSparkParseJSON(t *testing.T) {
	t.Parallel()
	var enc variant.Encoder
	for _, c := range readSparkCorpus(t) {
		if reason, ok := sparkDeviations[hex.EncodeToString(c.input)]; ok {
			t.Logf("%.60q: deviates from Spark: %s", c.input, reason)
			continue
		}
		meta, value, err := enc.Encode(c.input)
		if len(c.value) == 0 {
			if !errors.Is(err, variant.ErrSyntax) {
				t.Errorf("%.60q: Spark refuses it, Encode gives %v", c.input, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%.60q: %v", c.input, err)
			continue
		}
		want := mustDecode(t, c.metadata, c.value)
		if got := mustDecode(t, meta, value); !got.Equal(want) {
			t.Errorf("%.60q:\n got %v\nwant %v", c.input, got.GoValue(), want.GoValue())
		}
		if m, _ := pv.DecodeMetadata(c.metadata); slices.IsSorted(m.Strings) && !bytes.Equal(value, c.value) {
			t.Errorf("%.60q: value\n got % x\nwant % x", c.input, value, c.value)
		}
	}
}

// mustDecode decodes a VARIANT with parquet-go.
func mustDecode(t *testing.T, metadata, value []byte) pv.Value {
	t.Helper()
	m, err := pv.DecodeMetadata(metadata)
	if err != nil {
		t.Fatalf("metadata % x: %v", metadata, err)
	}
	v, err := pv.Decode(m, value)
	if err != nil {
		t.Fatalf("value % x: %v", value, err)
	}
	return v
}
