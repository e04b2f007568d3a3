package server

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestTuneRuntime: without GOGC and GOMEMLIMIT the server sets GCPercent
// and a soft memory limit below the machine's memory; either variable, when
// set, is left to the runtime.
func TestTuneRuntime(t *testing.T) {
	prevGC := debug.SetGCPercent(100)
	prevLim := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(prevGC)
		debug.SetMemoryLimit(prevLim)
	})
	total := machineMemory()

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	gc, lim := TuneRuntime()
	if gc != GCPercent {
		t.Errorf("GC percent %d, want %d", gc, GCPercent)
	}
	if total > 0 && (lim != int64(float64(total)*SoftMemoryFraction) || lim >= total) {
		t.Errorf("soft memory limit %d with %d bytes of memory, want %.0f of it", lim, total, SoftMemoryFraction*float64(total))
	}

	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "1GiB") // read by the runtime at start only: here only "set"
	if gc, lim := TuneRuntime(); gc != 100 || lim != math.MaxInt64 {
		t.Errorf("with GOGC and GOMEMLIMIT set: GC percent %d, limit %d; want them untouched", gc, lim)
	}
}
