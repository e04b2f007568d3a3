//go:build unix

package bigmem

import (
	"syscall"
	"time"
)

// Usage is the process's CPU time (user + system) and minor page faults so
// far, for the benchmarks that measure what advice saves: under load from
// other processes their deltas resolve what wall time does not.
func Usage() (time.Duration, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), int64(ru.Minflt)
}
