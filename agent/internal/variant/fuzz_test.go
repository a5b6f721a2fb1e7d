package variant_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
)

// surrogateEscape matches what may be a \u escape of a UTF-16 surrogate.
var surrogateEscape = regexp.MustCompile(`\\u[dD][89a-fA-F]`)

// FuzzEncode, seeded with the cases below and the Spark corpus, checks that Encode never panics, that every JSON text that
// encoding/json accepts (without duplicate keys or excess depth) round-trips
// to the same value, and that every other text is refused with ErrSyntax.
// Texts with invalid UTF-8 or surrogate escapes are only checked for a valid
// outcome; how they are replaced is pinned by TestEncodeBytes and
// TestSparkParseJSON.
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
	for _, c := range readSparkCorpus(f) {
		f.Add(c.input)
	}
	var enc variant.Encoder
	f.Fuzz(func(t *testing.T, text []byte) {
		_, refErr := referenceJSON(text)
		meta, value, err := enc.Encode(text)
		switch {
		case refErr == nil && utf8.Valid(text) && !surrogateEscape.Match(text):
			checkRoundTrip(t, &enc, text)
		case refErr == nil || errors.Is(refErr, errRefuse):
			// Broken text is replaced as Spark does, not as encoding/json
			// does, so keys may collide in one and not the other: check
			// only that the outcome is a valid VARIANT or ErrSyntax.
			if err == nil {
				if _, err := decodeVariant(meta, value); err != nil {
					t.Fatalf("Encode(%q) wrote an invalid VARIANT: %v", text, err)
				}
			} else if !errors.Is(err, variant.ErrSyntax) {
				t.Fatalf("Encode(%q) = %v, want ErrSyntax", text, err)
			}
		case err == nil:
			t.Fatalf("Encode(%q) accepted a text the reference refuses: %v", text, refErr)
		case !errors.Is(err, variant.ErrSyntax):
			t.Fatalf("Encode(%q) = %v, want ErrSyntax", text, err)
		}
	})
}
