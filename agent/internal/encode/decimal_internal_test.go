package encode

import (
	"math/big"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// TestDecimalText: a decimal's JSON number is the text big.Rat's
// FloatString writes at the column's scale, whether or not the text is
// already at that scale.
func TestDecimalText(t *testing.T) {
	texts := []string{"0", "0.00", "-0.00", "-0", "12.30", "-12.30", "-0.50", "0.05", ".50", "5.", "007.00", "00.00",
		"1.2", "1.234", "12", "-12", "1e2", "+1.00", "1.0a", "-", "", "12345678901234567890.1234", "-.5", "1..0"}
	for _, scale := range []int{0, 1, 2, 4} {
		typ := &schema.Type{Kind: schema.Decimal, Precision: 30, Scale: scale}
		for _, s := range texts {
			got, err := appendDecimal(nil, typ, s, false)
			r, ok := new(big.Rat).SetString(s)
			switch {
			case !ok && err == nil:
				t.Errorf("scale %d, %q: %s, want an error", scale, s, got)
			case ok && err != nil:
				t.Errorf("scale %d, %q: %v", scale, s, err)
			case ok && string(got) != r.FloatString(scale):
				t.Errorf("scale %d, %q: %s, want %s", scale, s, got, r.FloatString(scale))
			}
		}
	}
}
