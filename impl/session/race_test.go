//go:build race

package session_test

// raceEnabled is true in a build with the race detector, whose
// instrumentation allocates on its own.
const raceEnabled = true
