//go:build race

package variant_test

// raceEnabled says the tests run under the race detector, whose
// instrumentation makes parquet-go's metadata builder allocate: allocation
// counts are checked without it.
const raceEnabled = true
