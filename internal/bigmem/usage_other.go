//go:build !unix

package bigmem

import "time"

// Usage is not measured here (0, 0).
func Usage() (time.Duration, int64) { return 0, 0 }
