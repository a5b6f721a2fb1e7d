package rows_test

import (
	"math/big"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
)

func TestDecimalString(t *testing.T) {
	tests := []struct {
		v     parquet.Value
		scale int
		want  string
	}{
		{parquet.Int32Value(-5), 2, "-0.05"},
		{parquet.Int64Value(12345), 2, "123.45"},
		{parquet.Int64Value(7), 0, "7"},
		{parquet.FixedLenByteArrayValue([]byte{0xff, 0x85}), 1, "-12.3"},
		{parquet.ByteArrayValue(big.NewInt(1000).Bytes()), 3, "1.000"},
	}
	for _, tt := range tests {
		if got := rows.DecimalString(rows.Unscaled(tt.v), tt.scale); got != tt.want {
			t.Errorf("DecimalString(%v, %d) = %q, want %q", tt.v, tt.scale, got, tt.want)
		}
	}
}
