package rows

import (
	"math/big"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// Unscaled returns the unscaled integer of a DECIMAL value: an INT32, an
// INT64, or a big-endian two's complement byte array.
func Unscaled(v parquet.Value) *big.Int {
	switch v.Kind() {
	case parquet.Int32:
		return big.NewInt(int64(v.Int32()))
	case parquet.Int64:
		return big.NewInt(v.Int64())
	}
	b := v.ByteArray()
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return n
}

// DecimalString writes unscaled × 10^-scale in plain decimal notation
// ("-0.05" for -5 at scale 2); a scale of 0 or less writes the integer.
func DecimalString(unscaled *big.Int, scale int) string {
	digits := new(big.Int).Abs(unscaled).String()
	sign := ""
	if unscaled.Sign() < 0 {
		sign = "-"
	}
	if scale <= 0 {
		return sign + digits
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
}
