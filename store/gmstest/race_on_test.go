//go:build race

package gmstest

const raceEnabled = true
