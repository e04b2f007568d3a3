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
// from make and from Make, alternating inside every iteration; the memory
// goes back to the kernel between the two (as the scavenger does between
// two DP_TRAIN calls). Metrics: ms and minor page faults of each.
//
//	go test ./internal/bigmem -run XXX -bench FirstWrite -benchtime 5x
func BenchmarkFirstWrite(b *testing.B) {
	const n = 20_000_000
	fill := func(mk func(int) []float64) (time.Duration, int64) {
		debug.FreeOSMemory()
		_, f0 := faults()
		t0 := time.Now()
		s := mk(n)
		for i := range s {
			s[i] = 1
		}
		el := time.Since(t0)
		_, f1 := faults()
		return el, f1 - f0
	}
	var tp, tm time.Duration
	var fp, fm int64
	for i := 0; i < b.N; i++ {
		el, f := fill(func(n int) []float64 { return make([]float64, n) })
		tp, fp = tp+el, fp+f
		el, f = fill(Make[float64])
		tm, fm = tm+el, fm+f
	}
	b.ReportMetric(float64(tp.Milliseconds())/float64(b.N), "make-ms/op")
	b.ReportMetric(float64(tm.Milliseconds())/float64(b.N), "Make-ms/op")
	b.ReportMetric(float64(fp)/float64(b.N), "make-faults/op")
	b.ReportMetric(float64(fm)/float64(b.N), "Make-faults/op")
}
