//go:build !race

package membership

// raceDetector says whether the tests run under the race detector, which
// slows them several times: the simulation then takes longer timeouts.
const raceDetector = false
