//go:build !race

package expr

// raceEnabled says the tests run under the race detector (see race_test.go).
const raceEnabled = false
