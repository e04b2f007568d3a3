//go:build unix

package box

import (
	"syscall"
	"time"
)

// cpuTime is the process's CPU time (user + system): under load from other
// processes it resolves what wall time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
