//go:build unix

package main

import (
	"syscall"
	"time"
)

// usage is the process's CPU time (user + system) and minor page faults so
// far: per-query deltas resolve changes that wall time on a shared machine
// does not.
func usage() (time.Duration, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), int64(ru.Minflt)
}
