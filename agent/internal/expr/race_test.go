//go:build race

package expr

// raceEnabled says the tests run under the race detector, whose
// instrumentation allocates: allocation counts are checked without it.
const raceEnabled = true
