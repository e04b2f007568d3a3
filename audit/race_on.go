//go:build race

package audit

// raceDetector is true in binaries built with -race.
const raceDetector = true
