package bigmem

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestMake: the buffer is an ordinary zeroed slice of the asked length and
// capacity, below and above MinBytes, of values and of pointers (which the
// garbage collector must still see).
func TestMake(t *testing.T) {
	for _, n := range []int{0, 1, 1000, MinBytes/8 - 1, MinBytes / 8, MinBytes/8 + 12345, 3 * MinBytes / 8} {
		f := Make[float64](n)
		if len(f) != n || cap(f) != n {
			t.Fatalf("n=%d: len %d cap %d", n, len(f), cap(f))
		}
		for i, v := range f {
			if v != 0 {
				t.Fatalf("n=%d: f[%d] = %v, not zeroed", n, i, v)
			}
			f[i] = float64(i)
		}
		for i, v := range f {
			if v != float64(i) {
				t.Fatalf("n=%d: f[%d] = %v after write", n, i, v)
			}
		}
	}
	// Pointers in an advised buffer survive a collection.
	n := MinBytes/24 + 7
	rows := Make[[]float64](n)
	for i := range rows {
		if rows[i] != nil {
			t.Fatalf("rows[%d] not nil", i)
		}
		if i%1000 == 0 {
			rows[i] = []float64{float64(i)}
		}
	}
	runtime.GC()
	runtime.GC()
	for i := 0; i < n; i += 1000 {
		if len(rows[i]) != 1 || rows[i][0] != float64(i) {
			t.Fatalf("rows[%d] = %v after GC", i, rows[i])
		}
	}
}

// BenchmarkFirstWrite fills a fresh 160 MB buffer (10⁶ rows × 20 float64)
// from make and from Make; the memory goes back to the kernel before each
// fill (as the scavenger returns it between two DP_TRAIN calls). The
// advice stays on the addresses after they are returned, so the two must
// run in separate processes, alternating:
//
//	for i in 1 2 3; do for v in make Make; do
//	  go test ./internal/bigmem -run XXX -bench "FirstWrite/$v\$" -benchtime 5x
//	done; done
//
// Metrics: ms, CPU ms and minor page faults per fill.
func BenchmarkFirstWrite(b *testing.B) {
	const n = 20_000_000
	for _, v := range []struct {
		name string
		mk   func(int) []float64
	}{{"make", func(n int) []float64 { return make([]float64, n) }}, {"Make", Make[float64]}} {
		b.Run(v.name, func(b *testing.B) {
			var wall, cpu time.Duration
			var flt int64
			for i := 0; i < b.N; i++ {
				debug.FreeOSMemory()
				c0, f0 := Usage()
				t0 := time.Now()
				s := v.mk(n)
				for i := range s {
					s[i] = 1
				}
				wall += time.Since(t0)
				c1, f1 := Usage()
				cpu, flt = cpu+c1-c0, flt+f1-f0
			}
			b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "ms/fill")
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/fill")
			b.ReportMetric(float64(flt)/float64(b.N), "faults/fill")
		})
	}
}
