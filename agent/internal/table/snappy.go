package table

import (
	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go/compress/snappy"
)

// fastSnappy is parquet-go's SNAPPY codec with the faster of s2's two
// Snappy-compatible encoders. parquet-go's codec uses the "better"
// encoder, which cost about 15% of the agent's CPU while ingesting raw
// records for a few percent smaller files. The output is standard Snappy
// that every reader decodes.
type fastSnappy struct{ snappy.Codec }

// Encode compresses src into dst, growing it when it is too small.
func (*fastSnappy) Encode(dst, src []byte) ([]byte, error) {
	if n := s2.MaxEncodedLen(len(src)); cap(dst) < n {
		dst = make([]byte, n)
	}
	return s2.EncodeSnappy(dst[:cap(dst)], src), nil
}
