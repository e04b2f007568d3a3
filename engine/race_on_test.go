//go:build race

package engine_test

// raceEnabled: the race detector multiplies the cost of the multi-process
// tests (each restart is a race-instrumented server); they run shorter.
const raceEnabled = true
