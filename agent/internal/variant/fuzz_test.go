package variant_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
)

// FuzzEncode checks that Encode never panics, that every JSON text that
// encoding/json accepts (without duplicate keys or excess depth) round-trips
// to the same value, and that every other text is refused with ErrSyntax.
func FuzzEncode(f *testing.F) {
	for _, seed := range []string{
		`null`, `true`, `-0`, `-0.0`, `-0e0`, `1.50`, `1e400`, `9223372036854775808`,
		`123456789012345678901234567890123456789`, `0.000000000000000000000000000000000000001`,
		`"\ud83d\ude00\ud800"`, "\"\xff\xfe\"", `{"b":1,"a":[{},[]],"é":"x"}`, `{"a":1,"a":2}`,
		`[1,2,`, `{"a" 1}`, `01`, `"\u12"`, strings.Repeat(`[`, 1001),
		string(smallObject), string(nestedObject),
	} {
		f.Add([]byte(seed))
	}
	var enc variant.Encoder
	f.Fuzz(func(t *testing.T, text []byte) {
		_, refErr := referenceJSON(text)
		_, _, err := enc.Encode(text)
		switch {
		case refErr == nil:
			checkRoundTrip(t, &enc, text)
		case err == nil:
			t.Fatalf("Encode(%q) accepted a text the reference refuses: %v", text, refErr)
		case !errors.Is(err, variant.ErrSyntax):
			t.Fatalf("Encode(%q) = %v, want ErrSyntax", text, err)
		}
	})
}
