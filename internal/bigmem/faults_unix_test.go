//go:build unix

package bigmem

import (
	"syscall"
	"time"
)

// faults is the process's CPU time and minor page faults so far.
func faults() (time.Duration, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), int64(ru.Minflt)
}
