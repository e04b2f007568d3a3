//go:build !unix

package box

import "time"

func cpuTime() time.Duration { return 0 }
