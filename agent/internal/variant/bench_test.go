package variant_test

import (
	"bytes"
	"encoding/json"
	"testing"

	pv "github.com/parquet-go/parquet-go/variant"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
)

// smallObject is a typical ~100-byte event.
var smallObject = []byte(`{"id":12345,"user":"ada","event":"click","ts":"2026-11-30T15:00:00Z","price":19.99,"ok":true}`)

// nestedObject is a ~1 KB event with nested objects and arrays.
var nestedObject = []byte(`{"order_id":"A-1029384756","customer":{"id":987654321,"name":"Grace Hopper",` +
	`"email":"grace@example.com","address":{"street":"1 Navy Way","city":"Arlington","zip":"22201","geo":` +
	`{"lat":38.8814,"lon":-77.1036}},"tier":"gold","since":"2019-04-01"},"items":[{"sku":"KB-01","name":` +
	`"Keyboard","qty":1,"price":89.50,"tags":["usb","mech"]},{"sku":"MS-22","name":"Mouse","qty":2,"price":` +
	`24.99,"tags":["wireless"]},{"sku":"CB-7","name":"Cable","qty":3,"price":4.25,"tags":[]},{"sku":"HD-4",` +
	`"name":"Headset","qty":1,"price":129.00,"tags":["audio","usb","noise-cancelling"]}],"totals":{"sub":` +
	`301.73,"tax":24.14,"ship":0,"grand":325.87,"currency":"USD"},"payment":{"method":"card","last4":"4242",` +
	`"approved":true,"auth":null},"notes":"Leave at the front desk; call if nobody answers. \u00e9t\u00e9",` +
	`"flags":[true,false,null],"metrics":[1,-2,300,70000,5000000000,1.5e3,0.001],"source":{"app":"web",` +
	`"version":"4.12.0","session":"5f0c9a1e-3b7d-4c2a-9e8f-1a2b3c4d5e6f"},"created":1764514800}`)

// benchTexts runs run as a sub-benchmark on the small and the nested
// object, counting their bytes and the allocations.
func benchTexts(b *testing.B, run func(b *testing.B, text []byte)) {
	for _, bm := range []struct {
		name string
		text []byte
	}{{"small", smallObject}, {"nested", nestedObject}} {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(bm.text)))
			b.ReportAllocs()
			run(b, bm.text)
		})
	}
}

// BenchmarkEncode measures the Encoder on a small and a nested object.
func BenchmarkEncode(b *testing.B) {
	benchTexts(b, func(b *testing.B, text []byte) {
		var enc variant.Encoder
		for b.Loop() {
			if _, _, err := enc.Encode(text); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEncodeAlternating encodes the small and the nested object in
// turn, so that no text has the keys of the one before it: the Encoder
// builds every dictionary, where BenchmarkEncode, like records of one kind,
// keeps it.
func BenchmarkEncodeAlternating(b *testing.B) {
	texts := [][]byte{smallObject, nestedObject}
	b.SetBytes(int64(len(smallObject)+len(nestedObject)) / 2)
	b.ReportAllocs()
	var enc variant.Encoder
	for i := 0; b.Loop(); i++ {
		if _, _, err := enc.Encode(texts[i%2]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshalGeneric measures the generic path the Encoder replaces:
// encoding/json into Go values, then parquet-go's variant.Marshal. It is
// the baseline in the package doc; note that it writes json.Number as a
// string and does not sort the dictionary, so it is not a usable encoder.
func BenchmarkMarshalGeneric(b *testing.B) {
	benchTexts(b, func(b *testing.B, text []byte) {
		for b.Loop() {
			dec := json.NewDecoder(bytes.NewReader(text))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				b.Fatal(err)
			}
			if _, _, err := pv.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
