package decode

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The differential corpus of the JSON decoder: records and schemas in
// testdata/spark_from_json/corpus.json, what Spark 4.0.1's from_json gives
// for them in expected.json (written by tools/spark/from_json_corpus.py),
// and the deliberate differences in deviations.json.
const sparkCorpusDir = "testdata/spark_from_json"

// sparkCase is one schema of the corpus with its records.
type sparkCase struct {
	Name    string            `json:"name"`
	DDL     string            `json:"ddl"`
	Options map[string]string `json:"options"`
	Records []json.RawMessage `json:"records"`
}

// sparkResult is Spark's result for one record: Fields nil when from_json
// returned null.
type sparkResult struct {
	Record  json.RawMessage `json:"record"`
	Fields  map[string]any  `json:"fields"`
	Corrupt bool            `json:"corrupt"`
}

// sparkDeviation is a known difference between the agent and Spark: the
// agent gives Agent (as rowstest.Render writes it, or "true"/"false" for
// _corrupt_record) for Field of Record in Case.
type sparkDeviation struct {
	Case   string `json:"case"`
	Record string `json:"record"`
	Field  string `json:"field"`
	Agent  string `json:"agent"`
	Reason string `json:"reason"`
}

// TestSparkFromJSONCorpus decodes every record of the corpus with the
// agent's decoder and compares each field, and whether the record is
// corrupt, with what Spark's from_json returned; the only differences
// allowed are those of deviations.json, each with its reason.
func TestSparkFromJSONCorpus(t *testing.T) {
	var cases []sparkCase
	readJSON(t, "corpus.json", &cases)
	var expected struct {
		Cases []struct {
			Name    string        `json:"name"`
			Results []sparkResult `json:"results"`
		} `json:"cases"`
	}
	readJSON(t, "expected.json", &expected)
	var deviations []sparkDeviation
	readJSON(t, "deviations.json", &deviations)
	allowed := map[[3]string]*sparkDeviation{}
	for i := range deviations {
		dv := &deviations[i]
		if dv.Reason == "" {
			t.Errorf("deviation %s %q %s has no reason", dv.Case, dv.Record, dv.Field)
		}
		allowed[[3]string{dv.Case, dv.Record, dv.Field}] = dv
	}
	used := map[*sparkDeviation]bool{}

	if len(expected.Cases) != len(cases) {
		t.Fatalf("expected.json has %d cases, corpus.json %d: run tools/spark/from_json_corpus.py", len(expected.Cases), len(cases))
	}
	for ci, c := range cases {
		exp := expected.Cases[ci]
		if exp.Name != c.Name || len(exp.Results) != len(c.Records) {
			t.Fatalf("expected.json is stale at case %s: run tools/spark/from_json_corpus.py", c.Name)
		}
		fields, err := schema.ParseDDL(c.DDL)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		layout := jsonValue(fields...)
		layout.Value.Transformer = &spec.Transformer{Format: spec.FormatJSON, JSONOptions: sparkOptions(t, c.Options)}
		for ri, raw := range c.Records {
			res := exp.Results[ri]
			rec, label := corpusRecord(t, raw)
			if _, was := corpusRecord(t, res.Record); was != label {
				t.Fatalf("expected.json is stale at %s record %d: run tools/spark/from_json_corpus.py", c.Name, ri)
			}
			cols, _ := decodeRow(t, layout, record.Record{Value: rec})
			got := map[string]string{spec.CorruptRecordColumn: strconv.FormatBool(cols[spec.CorruptRecordColumn] != "null")}
			want := map[string]string{spec.CorruptRecordColumn: strconv.FormatBool(res.Corrupt)}
			for _, f := range fields {
				got[f.Name] = cols[f.Name]
				var v any
				if res.Fields != nil {
					v = res.Fields[f.Name]
				}
				want[f.Name] = sparkText(t, v, f.Type)
			}
			for name, w := range want {
				g := got[name]
				dv := allowed[[3]string{c.Name, label, name}]
				switch {
				case dv != nil && dv.Agent == g && g != w:
					used[dv] = true
				case dv != nil:
					used[dv] = true
					t.Errorf("%s %q: %s = %s, Spark %s; deviations.json says the agent gives %s", c.Name, label, name, g, w, dv.Agent)
				case g != w:
					t.Errorf("%s %q: %s = %s, Spark %s", c.Name, label, name, g, w)
				}
			}
		}
	}
	for i := range deviations {
		if dv := &deviations[i]; !used[dv] {
			t.Errorf("deviations.json: %s %q %s is not a difference any more", dv.Case, dv.Record, dv.Field)
		}
	}
}

// readJSON decodes a file of the corpus directory, numbers as json.Number.
func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sparkCorpusDir, name))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// corpusRecord returns the bytes of a corpus record, a JSON string or
// {"hex": ...}, and its label in deviations.json: the text, or "hex:" and
// the hex digits.
func corpusRecord(t *testing.T, raw json.RawMessage) ([]byte, string) {
	t.Helper()
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []byte(text), text
	}
	var h struct{ Hex string }
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatalf("corpus record %s: %v", raw, err)
	}
	b, err := hex.DecodeString(h.Hex)
	if err != nil {
		t.Fatalf("corpus record %s: %v", raw, err)
	}
	return b, "hex:" + h.Hex
}

// sparkOptions maps Spark's JSON option names to the agent's.
func sparkOptions(t *testing.T, opts map[string]string) *spec.JSONOptions {
	t.Helper()
	o := &spec.JSONOptions{}
	for k, v := range opts {
		switch k {
		case "allowSingleQuotes":
			b := v == "true"
			o.AllowSingleQuotes = &b
		case "allowNonNumericNumbers":
			b := v == "true"
			o.AllowNonNumericNumbers = &b
		case "timestampFormat":
			o.TimestampFormat = v
		case "dateFormat":
			o.DateFormat = v
		default:
			t.Fatalf("option %s has no json_options counterpart", k)
		}
	}
	return o
}

// sparkText renders a value of expected.json as rowstest.Render renders a
// value of type typ.
func sparkText(t *testing.T, v any, typ *schema.Type) string {
	t.Helper()
	if v == nil {
		return "null"
	}
	num := func() json.Number {
		n, ok := v.(json.Number)
		if !ok {
			t.Fatalf("%v is not a number", v)
		}
		return n
	}
	float := func() float64 {
		switch v {
		case "NaN":
			return math.NaN()
		case "Infinity":
			return math.Inf(1)
		case "-Infinity":
			return math.Inf(-1)
		}
		f, err := num().Float64()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	switch typ.Kind {
	case schema.Boolean:
		return fmt.Sprint(v)
	case schema.Byte, schema.Short, schema.Int, schema.Long:
		return num().String()
	case schema.Float:
		return fmt.Sprint(float32(float()))
	case schema.Double:
		return fmt.Sprint(float())
	case schema.Decimal:
		r, ok := new(big.Rat).SetString(v.(string))
		if !ok {
			t.Fatalf("decimal %v", v)
		}
		return r.FloatString(typ.Scale)
	case schema.String:
		return fmt.Sprintf("%q", v)
	case schema.Binary:
		b, err := base64.StdEncoding.DecodeString(v.(string))
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("b%q", b)
	case schema.Date:
		n, _ := num().Int64()
		return time.Unix(n*86400, 0).UTC().Format("2006-01-02")
	case schema.Timestamp, schema.TimestampNTZ:
		n, _ := num().Int64()
		ts := time.UnixMicro(n).UTC()
		if typ.Kind == schema.Timestamp {
			return ts.Format("2006-01-02T15:04:05.999999Z")
		}
		return ts.Format("2006-01-02T15:04:05.999999")
	case schema.Array:
		var parts []string
		for _, e := range v.([]any) {
			parts = append(parts, sparkText(t, e, typ.Elem))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case schema.Map:
		var parts []string
		for _, e := range v.([]any) {
			kv := e.([]any)
			parts = append(parts, sparkText(t, kv[0], typ.Key)+":"+sparkText(t, kv[1], typ.Value))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case schema.Struct:
		obj := v.(map[string]any)
		var parts []string
		for _, f := range typ.Fields {
			parts = append(parts, f.Name+"="+sparkText(t, obj[f.Name], f.Type))
		}
		return "{" + strings.Join(parts, " ") + "}"
	}
	t.Fatalf("type %v", typ.Kind)
	return ""
}
