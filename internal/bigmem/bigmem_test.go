package bigmem

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
	"unsafe"
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

// Put zeroes what it keeps and Get hands it back only for its own type and
// a length it fits; the idle timer drops it.
func TestPool(t *testing.T) {
	defer func(idle time.Duration) { PoolIdle = idle }(PoolIdle)
	PoolIdle = time.Hour
	drop()
	n := PoolMin/8 + 100
	a := Get[float64](n)
	if len(a) != n {
		t.Fatalf("len %d", len(a))
	}
	for i := range a {
		a[i] = float64(i) + 1
	}
	base := &a[0]
	Put(a)
	if g := Get[int64](n); &g[0] == (*int64)(unsafe.Pointer(base)) {
		t.Fatal("a float64 buffer was handed out as int64")
	}
	if g := Get[float64](3 * n); &g[0] == base {
		t.Fatal("a buffer too small was handed out")
	}
	if g := Get[float64](n / 3); &g[0] == base {
		t.Fatal("a buffer over twice the length asked was handed out")
	}
	b := Get[float64](n - 5)
	if &b[0] != base || len(b) != n-5 {
		t.Fatalf("kept buffer not reused (len %d)", len(b))
	}
	for i, v := range b[:cap(b)] {
		if v != 0 {
			t.Fatalf("b[%d] = %v: Put did not zero", i, v)
		}
	}
	if g := Get[float64](n); &g[0] == base {
		t.Fatal("one buffer handed out twice")
	}
	// Pointer types: the rows a [][]float64 held are cleared.
	rows := Get[[]float64](PoolMin/24 + 1)
	rows[0] = []float64{1}
	Put(rows)
	if r := Get[[]float64](PoolMin/24 + 1); r[0] != nil {
		t.Fatal("kept [][]float64 not cleared")
	}
	Put(b)
	drop()
	if g := Get[float64](n); &g[0] == base {
		t.Fatal("drop kept a buffer")
	}
	// Small buffers are not kept.
	s := Get[float64](10)
	s[0] = 1
	Put(s)
	if Get[float64](10)[0] != 0 {
		t.Fatal("small buffer not zero")
	}
}

// The limit bounds what is kept.
func TestPoolLimit(t *testing.T) {
	defer func(l uintptr) { PoolLimit = l }(PoolLimit)
	drop()
	PoolLimit = PoolMin
	n := PoolMin / 8
	a, b := Get[float64](n), Get[float64](n)
	pa, pb := &a[0], &b[0]
	Put(a)
	Put(b) // over the limit: dropped
	if g := Get[float64](n); &g[0] != pa {
		t.Fatal("first buffer not kept")
	}
	if g := Get[float64](n); &g[0] == pb {
		t.Fatal("buffer over the limit kept")
	}
	drop()
}
