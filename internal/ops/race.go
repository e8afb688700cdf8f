//go:build race

package ops

// raceEnabled is true in a build with the race detector.
const raceEnabled = true
