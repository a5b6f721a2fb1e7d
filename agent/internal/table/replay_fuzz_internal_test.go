package table

import (
	"reflect"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// FuzzReplay feeds arbitrary bytes to the log parser, as the first entry of
// a table and as the entry after a valid first one. Replay must return an
// error or a snapshot, never panic; replaying the same bytes twice must give
// the same snapshot; and a rejected entry must leave the state as it was.
func FuzzReplay(f *testing.F) {
	fields := []schema.Field{{Name: "id", Type: &schema.Type{Kind: schema.Long}}}
	js, err := schema.SparkJSON(fields)
	if err != nil {
		f.Fatal(err)
	}
	first, err := marshalEntry([]action{
		{Protocol: &protocolAction{MinReaderVersion: 1, MinWriterVersion: 2}},
		{MetaData: &metadataAction{ID: "x", Format: formatSpec{Provider: "parquet"}, SchemaString: js}},
		{Txn: &txnAction{AppID: "t/a/0", Version: 1}},
		{CommitInfo: &commitInfo{EngineInfo: engineInfo, OperationMetrics: map[string]metric{MetricOutputRows: 2}}},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(first)
	f.Add([]byte(`{"add":{"path":"a.parquet","stats":"{\"numRecords\":5}"}}` + "\n" + `{"remove":{"path":"a.parquet"}}`))
	f.Add([]byte(`{"txn":{"appId":"t/a/0","version":9}}` + "\n\n" + `{"commitInfo":{"engineInfo":"tributary-agent","operationMetrics":{"n":"3"}}}`))
	f.Add([]byte(`{"protocol":{"minReaderVersion":0}}`))
	f.Add([]byte(`{"metaData":{"format":{"provider":"parquet"},"schemaString":"{\"type\":\"struct\",\"fields\":[]}"}}`))
	f.Add([]byte(`{"add":{"path":"%zz"}}`))
	f.Add([]byte("{\"txn\":"))
	f.Add([]byte{0xff, '\n', '{'})

	replay := func(t *testing.T, entries ...[]byte) (Snapshot, error) {
		st := newState()
		for v, data := range entries {
			e, err := parseEntry(data)
			if err != nil {
				return Snapshot{}, err
			}
			before := st.snapshot()
			if err := st.apply(int64(v), e); err != nil {
				if after := st.snapshot(); !reflect.DeepEqual(before, after) {
					t.Fatalf("rejected entry %d (%v) changed the state from %+v to %+v", v, err, before, after)
				}
				return Snapshot{}, err
			}
		}
		return st.snapshot(), nil
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, log := range [][][]byte{{data}, {first, data}} {
			a, errA := replay(t, log...)
			b, errB := replay(t, log...)
			if (errA == nil) != (errB == nil) || !reflect.DeepEqual(a, b) {
				t.Fatalf("replays differ: %+v, %v vs %+v, %v", a, errA, b, errB)
			}
			if errA == nil && a.Version != int64(len(log)-1) {
				t.Fatalf("replay stopped early: %+v", a)
			}
		}
	})
}
